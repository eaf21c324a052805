/**
 * Fetching one object and everything it reaches, as one pack, over smart
 * HTTP (git's upload-pack, stateless: one `want`, no `have`s). isomorphic-git's
 * `fetch` would do this, but it insists on resolving the remote's `HEAD`
 * before saving the pack and fails on a repository whose `HEAD` is unborn —
 * exactly what a repository created only to hold a mirror looks like.
 */
import { mkdir, open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { describeBytes, ImportError, refusedImport, type ImportLimits } from './import-limits.js';
import type { MirrorRemote } from './mirror-remote.js';
import { fetchLocalObjects } from './local-mirror.js';
import { indexReceivedPack, type PackContents } from './pack-intake.js';

function pktLine(text: string): Buffer {
  const body = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'latin1'), body]);
}

/**
 * Reads upload-pack's answer as it arrives: `NAK`, then side-band packets
 * until a flush — band 1 carries the pack (written to `out`), band 2
 * progress, band 3 an error. Stops with {@link ImportError} as soon as the
 * pack passes `maxBytes`, without reading the rest.
 */
async function receivePack(body: AsyncIterable<Uint8Array>, out: FileHandle, maxBytes: number): Promise<number> {
  // Iterated by hand: isomorphic-git's body iterator answers `return()` with nothing, which `for await` rejects.
  const chunks = body[Symbol.asyncIterator]();
  const stop = () => {
    try {
      void chunks.return?.();
    } catch {
      // Already ended.
    }
  };
  let pending = Buffer.alloc(0);
  let written = 0;
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done) return written;
      pending = pending.byteLength === 0 ? Buffer.from(next.value) : Buffer.concat([pending, next.value]);
      let at = 0;
      while (at + 4 <= pending.byteLength) {
        const length = Number.parseInt(pending.subarray(at, at + 4).toString('latin1'), 16);
        if (!Number.isInteger(length) || (length > 0 && length < 4)) throw new Error('the remote sent a malformed upload-pack response');
        if (length === 0) {
          stop();
          return written;
        }
        if (at + length > pending.byteLength) break;
        const payload = pending.subarray(at + 4, at + length);
        at += length;
        const text = payload.subarray(0, 8).toString('latin1');
        if (text.startsWith('NAK') || text.startsWith('ACK') || text.startsWith('shallow')) continue;
        if (text.startsWith('ERR ')) throw new Error(`the remote refused the fetch: ${payload.subarray(4).toString('utf8').trim()}`);
        const band = payload[0];
        if (band === 1) {
          written += payload.byteLength - 1;
          if (written > maxBytes) throw refusedImport(`the mirror sent more than ${describeBytes(maxBytes)}, the most one import takes in (--store-budget)`);
          await out.write(payload.subarray(1));
        } else if (band === 3) {
          throw new Error(`the remote failed: ${payload.subarray(1).toString('utf8').trim()}`);
        }
      }
      pending = pending.subarray(at);
    }
  } catch (error) {
    stop();
    throw error;
  }
}

/**
 * Fetches `oid` with everything it reaches into `gitdir` (a bare
 * repository) as one pack, checked and indexed within `limits` (see
 * `pack-intake.ts`). Resolves with what the pack holds.
 */
export async function fetchObject(remote: MirrorRemote, gitdir: string, oid: string, limits: ImportLimits): Promise<PackContents> {
  // A bare repository on a local path: every object it holds, through the same intake.
  if (remote.localDir !== undefined) return fetchLocalObjects(remote.localDir, gitdir, limits);
  const body = Buffer.concat([pktLine(`want ${oid} side-band-64k ofs-delta agent=changeset-server\n`), Buffer.from('0000'), pktLine('done\n')]);
  const res = await remote.http.request({
    url: `${remote.transportUrl}/git-upload-pack`,
    method: 'POST',
    headers: {
      ...remote.authHeaders(),
      'Content-Type': 'application/x-git-upload-pack-request',
      Accept: 'application/x-git-upload-pack-result',
    },
    body: (async function* () {
      yield body;
    })(),
  });
  if (res.statusCode !== 200) throw new Error(`the remote answered the fetch with HTTP ${res.statusCode} ${res.statusMessage}`);
  const packDir = join(gitdir, 'objects', 'pack');
  await mkdir(packDir, { recursive: true });
  const received = join(packDir, 'received.pack');
  const out = await open(received, 'wx', 0o600);
  let bytes: number;
  try {
    bytes = await receivePack(res.body ?? emptyBody(), out, limits.maxTotalBytes);
  } finally {
    await out.close();
  }
  if (bytes === 0) throw new Error('the remote sent no pack');
  const contents = await indexReceivedPack(received, limits);
  // Named as git names packs only once it is known to be one: the store's reader lists `pack-*.pack`.
  const head = await packChecksumOf(received);
  await rename(received, join(packDir, `pack-${head}.pack`));
  await rename(received.replace(/\.pack$/, '.idx'), join(packDir, `pack-${head}.idx`));
  return contents;
}

async function* emptyBody(): AsyncIterable<Uint8Array> {}

/** The pack's trailer checksum (hex), which names it. */
async function packChecksumOf(packPath: string): Promise<string> {
  const handle = await open(packPath, 'r');
  try {
    const { size } = await handle.stat();
    const tail = Buffer.alloc(20);
    await handle.read(tail, 0, 20, size - 20);
    return tail.toString('hex');
  } finally {
    await handle.close();
  }
}
