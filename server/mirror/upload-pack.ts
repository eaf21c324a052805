/**
 * Fetching one object and everything it reaches, as one pack, over smart
 * HTTP (git's upload-pack, stateless: one `want`, no `have`s). isomorphic-git's
 * `fetch` would do this, but it insists on resolving the remote's `HEAD`
 * before saving the pack and fails on a repository whose `HEAD` is unborn —
 * exactly what a repository created only to hold a mirror looks like.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import git from 'isomorphic-git';
import type { MirrorRemote } from './mirror-remote.js';

function pktLine(text: string): Buffer {
  const body = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'latin1'), body]);
}

async function collect(body: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> {
  const chunks: Buffer[] = [];
  if (body) for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/**
 * Reads upload-pack's answer: `NAK`, then side-band packets until a flush —
 * band 1 carries the pack, band 2 progress, band 3 an error.
 */
export function demultiplexPack(response: Buffer): Buffer {
  const pack: Buffer[] = [];
  let at = 0;
  while (at + 4 <= response.length) {
    const length = Number.parseInt(response.subarray(at, at + 4).toString('latin1'), 16);
    if (!Number.isInteger(length)) throw new Error('the remote sent a malformed upload-pack response');
    if (length === 0) break;
    const payload = response.subarray(at + 4, at + length);
    at += length;
    const text = payload.toString('latin1');
    if (text.startsWith('NAK') || text.startsWith('ACK') || text.startsWith('shallow')) continue;
    if (text.startsWith('ERR ')) throw new Error(`the remote refused the fetch: ${text.slice(4).trim()}`);
    const band = payload[0];
    if (band === 1) pack.push(payload.subarray(1));
    else if (band === 3) throw new Error(`the remote failed: ${payload.subarray(1).toString('utf8').trim()}`);
  }
  return Buffer.concat(pack);
}

/** Fetches `oid` with everything it reaches into `gitdir` (a bare repository) as one indexed pack. */
export async function fetchObject(remote: MirrorRemote, gitdir: string, oid: string): Promise<void> {
  const body = Buffer.concat([pktLine(`want ${oid} side-band-64k ofs-delta agent=changeset-server\n`), Buffer.from('0000'), pktLine('done\n')]);
  const res = await remote.http.request({
    url: `${remote.url}/git-upload-pack`,
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
  const response = await collect(res.body);
  if (res.statusCode !== 200) throw new Error(`the remote answered the fetch with HTTP ${res.statusCode} ${res.statusMessage}`);
  const pack = demultiplexPack(response);
  if (pack.length < 32 || pack.subarray(0, 4).toString('latin1') !== 'PACK') throw new Error('the remote sent no pack');
  const expected = pack.subarray(-20).toString('hex');
  if (createHash('sha1').update(pack.subarray(0, -20)).digest('hex') !== expected) throw new Error('the pack the remote sent is corrupt');
  const packDir = join(gitdir, 'objects', 'pack');
  await mkdir(packDir, { recursive: true });
  await writeFile(join(packDir, `pack-${expected}.pack`), pack);
  await git.indexPack({ fs, dir: gitdir, gitdir, filepath: `objects/pack/pack-${expected}.pack` });
}
