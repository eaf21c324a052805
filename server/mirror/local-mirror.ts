/**
 * A mirror in a bare repository on a local path (a shared drive, a second
 * disk). isomorphic-git only speaks smart HTTP, so pushes and ref listings go
 * through {@link localTransport}, an in-process stand-in for its `http`
 * plugin that answers `info/refs` and `git-receive-pack` from the bare
 * repository; fetches read the repository's packs and loose objects
 * ({@link fetchLocalObjects}) and send each through the same intake and
 * limits as a pack from a remote (`pack-intake.ts`).
 *
 * The repository is someone else's data, as a remote is: only files and
 * directories inside it are read (a symbolic link anywhere on the way is
 * refused, never followed), only refs under the mirror's prefix are listed
 * or written, and every object is size-checked before it is used.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { lstat, mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { PACK_TYPE_CODE, type AnyObjectType } from '../store/object-format.js';
import { encodeEntryHeader } from '../store/pack-writer.js';
import { describeBytes, refusedImport, type ImportLimits } from './import-limits.js';
import { MIRROR_PREFIX } from './manifest.js';
import { indexReceivedPack, type PackContents } from './pack-intake.js';

const ZERO = '0'.repeat(40);
const OID = /^[0-9a-f]{40}$/;

/** The bare repository is missing, not bare, or holds something a mirror never does. */
export class LocalMirrorError extends Error {}

/** Refuses a symbolic link (or anything but the kind expected) at `path`. */
async function expectKind(path: string, kind: 'dir' | 'file', what: string): Promise<boolean> {
  const stat = await lstat(path).catch(() => undefined);
  if (!stat) return false;
  if (stat.isSymbolicLink()) throw new LocalMirrorError(`the mirror repository's ${what} is a symbolic link; a mirror's files must be inside it`);
  if (kind === 'dir' ? !stat.isDirectory() : !stat.isFile())
    throw new LocalMirrorError(`the mirror repository's ${what} is not a ${kind === 'dir' ? 'directory' : 'file'}`);
  return true;
}

/** Reads a file inside the repository without following a symbolic link to it. */
async function readInside(path: string, maxBytes: number): Promise<Buffer> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) throw refusedImport(`${path} is ${describeBytes(size)}, more than ${describeBytes(maxBytes)}`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Copies a file inside the repository (never through a symbolic link) to `to`, refusing one over `maxBytes`; resolves with its size. */
async function copyInside(path: string, to: string, maxBytes: number): Promise<number> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) throw refusedImport(`the mirror holds more than ${describeBytes(maxBytes)}, the most one import takes in (--store-budget)`);
    await pipeline(handle.createReadStream({ start: 0, end: Math.max(0, size - 1), autoClose: false }), createWriteStream(to, { flags: 'wx', mode: 0o600 }));
    return size;
  } finally {
    await handle.close();
  }
}

/** Checks that `dir` is a bare git repository (not a working tree, not a plain directory). */
export async function checkBareRepository(dir: string): Promise<void> {
  const stat = await lstat(dir).catch(() => undefined);
  if (!stat) throw new LocalMirrorError(`${dir} does not exist: make the mirror with git init --bare ${dir}`);
  if (!stat.isDirectory()) throw new LocalMirrorError(`${dir} is not a directory: a mirror on a path must be a bare git repository (git init --bare)`);
  if (await lstat(join(dir, '.git')).catch(() => undefined))
    throw new LocalMirrorError(`${dir} is a working tree, not a bare repository: mirror to one made with git init --bare`);
  const ok =
    (await expectKind(join(dir, 'HEAD'), 'file', 'HEAD')) &&
    (await expectKind(join(dir, 'objects'), 'dir', 'objects directory')) &&
    (await expectKind(join(dir, 'refs'), 'dir', 'refs directory'));
  if (!ok) throw new LocalMirrorError(`${dir} is not a bare git repository (no HEAD, objects and refs): make one with git init --bare`);
}

/** The refs under the mirror's prefix: loose ones (never through a symbolic link) over `packed-refs`. */
export async function readMirrorRefs(dir: string): Promise<Map<string, string>> {
  await checkBareRepository(dir);
  const refs = new Map<string, string>();
  if (await expectKind(join(dir, 'packed-refs'), 'file', 'packed-refs file')) {
    for (const line of (await readInside(join(dir, 'packed-refs'), 64 * 1024 * 1024)).toString('utf8').split('\n')) {
      const match = /^([0-9a-f]{40}) (\S+)$/.exec(line);
      if (match && match[2]!.startsWith(MIRROR_PREFIX)) refs.set(match[2]!, match[1]!);
    }
  }
  const walk = async (rel: string): Promise<void> => {
    const path = join(dir, rel);
    if (!(await expectKind(path, 'dir', `directory ${rel}`))) return;
    for (const entry of await readdir(path, { withFileTypes: true })) {
      const name = `${rel}/${entry.name}`;
      if (entry.isSymbolicLink()) throw new LocalMirrorError(`the mirror repository's ref ${name} is a symbolic link; a mirror's files must be inside it`);
      if (entry.isDirectory()) await walk(name);
      else if (entry.isFile()) {
        const text = (await readInside(join(dir, name), 4096)).toString('utf8').trim();
        if (!OID.test(text)) throw refusedImport(`the mirror's ref ${name} does not hold an object id`);
        refs.set(name, text);
      }
    }
  };
  await walk(MIRROR_PREFIX.replace(/\/$/, ''));
  return refs;
}

function pktLine(text: string | Buffer): Buffer {
  const body = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'latin1'), body]);
}
const FLUSH = Buffer.from('0000', 'latin1');

async function collect(body: GitHttpRequest['body']): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const parts: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array>) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

function answer(url: string, body: Buffer, statusCode = 200): GitHttpResponse {
  return {
    url,
    method: 'GET',
    statusCode,
    statusMessage: statusCode === 200 ? 'OK' : 'Not Found',
    headers: {},
    body: (async function* () {
      yield body;
    })(),
  };
}

/** The ref advertisement of one service, with only the mirror's refs. */
async function advertise(dir: string, service: string): Promise<Buffer> {
  const refs = [...(await readMirrorRefs(dir))].sort(([a], [b]) => (a < b ? -1 : 1));
  // no-thin: every push carries whole objects, so its pack is checked and indexed on its own.
  const caps = service === 'git-receive-pack' ? 'report-status side-band-64k no-thin delete-refs' : 'side-band-64k ofs-delta';
  const lines = [pktLine(`# service=${service}\n`), FLUSH];
  if (refs.length === 0) lines.push(pktLine(`${ZERO} capabilities^{}\0${caps}\n`));
  for (const [i, [name, oid]] of refs.entries()) lines.push(pktLine(i === 0 ? `${oid} ${name}\0${caps}\n` : `${oid} ${name}\n`));
  lines.push(FLUSH);
  return Buffer.concat(lines);
}

/** Writes `content` to `path` through a temporary file in the same directory, so readers see the old or the new whole. */
async function writeAtomically(path: string, content: string | Buffer): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, content, { flag: 'wx', mode: 0o644 });
  await rename(temp, path);
}

/** Creates the directories of `rel` under `dir`, refusing a symbolic link among them. */
async function mkdirInside(dir: string, rel: string): Promise<void> {
  let at = dir;
  for (const part of rel.split('/')) {
    at = join(at, part);
    if (!(await expectKind(at, 'dir', `directory ${rel}`)))
      await mkdir(at).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'EEXIST') throw e;
      });
  }
}

/** Receives one push: the pack goes in as a checked, indexed pack file, then each ref under the prefix is written. */
async function receivePack(dir: string, body: Buffer, limits: ImportLimits): Promise<Buffer> {
  await checkBareRepository(dir);
  const commands: { old: string; oid: string; ref: string }[] = [];
  let at = 0;
  for (;;) {
    const length = Number.parseInt(body.subarray(at, at + 4).toString('latin1'), 16);
    if (!Number.isInteger(length)) throw new LocalMirrorError('malformed push');
    if (length === 0) {
      at += 4;
      break;
    }
    const line = body
      .subarray(at + 4, at + length)
      .toString('utf8')
      .split('\0')[0]!
      .trim();
    at += length;
    const [old, oid, ref] = line.split(' ');
    if (!old || !oid || !ref || !OID.test(old) || !OID.test(oid)) throw new LocalMirrorError('malformed push command');
    if (!ref.startsWith(MIRROR_PREFIX) || ref.split('/').some((p) => p === '' || p === '.' || p === '..' || p.startsWith('.')))
      throw new LocalMirrorError(`a mirror writes only refs under ${MIRROR_PREFIX}, not ${ref}`);
    commands.push({ old, oid, ref });
  }
  const pack = body.subarray(at);
  if (pack.byteLength > 32) {
    await mkdirInside(dir, 'objects/pack');
    const packDir = join(dir, 'objects', 'pack');
    const temp = join(packDir, `tmp_pack_${randomBytes(6).toString('hex')}.pack`);
    await writeFile(temp, pack, { flag: 'wx', mode: 0o444 });
    try {
      await indexReceivedPack(temp, limits);
    } catch (error) {
      await rm(temp, { force: true });
      await rm(temp.replace(/\.pack$/, '.idx'), { force: true });
      throw error;
    }
    const name = `pack-${pack.subarray(pack.byteLength - 20).toString('hex')}`;
    // The index last: git looks packs up by their index.
    await rename(temp, join(packDir, `${name}.pack`));
    await rename(temp.replace(/\.pack$/, '.idx'), join(packDir, `${name}.idx`));
  }
  const report = [pktLine('unpack ok\n')];
  for (const { oid, ref } of commands) {
    const parts = ref.split('/');
    await mkdirInside(dir, parts.slice(0, -1).join('/'));
    const path = join(dir, ref);
    // Throws for a symbolic link where the ref would be: it is replaced, never written through.
    await expectKind(path, 'file', `ref ${ref}`);
    if (oid === ZERO) await rm(path, { force: true });
    else await writeAtomically(path, `${oid}\n`);
    report.push(pktLine(`ok ${ref}\n`));
  }
  report.push(FLUSH);
  return Buffer.concat([pktLine(Buffer.concat([Buffer.from([1]), ...report])), FLUSH]);
}

/**
 * isomorphic-git's `http` plugin for a bare repository at `dir`: answers the
 * ref advertisements and pushes as a smart-HTTP server would.
 */
export function localTransport(dir: string): HttpClient {
  // The pushed pack is the store's own: checked for shape and indexed, with no import limits on its sizes.
  const limits: ImportLimits = { maxObjectBytes: Number.MAX_SAFE_INTEGER, maxTotalBytes: Number.MAX_SAFE_INTEGER };
  return {
    async request({ url, method, body }) {
      const path = new URL(url).pathname;
      const service = new URL(url).searchParams.get('service');
      if (method === 'GET' && path.endsWith('/info/refs') && (service === 'git-upload-pack' || service === 'git-receive-pack'))
        return answer(url, await advertise(dir, service));
      if (method === 'POST' && path.endsWith('/git-receive-pack')) return answer(url, await receivePack(dir, await collect(body), limits));
      return answer(url, Buffer.alloc(0), 404);
    },
  };
}

/** Parses a loose object's inflated bytes, checking its header against the limits. */
function parseLoose(raw: Buffer, name: string): { type: AnyObjectType; content: Buffer } {
  const nul = raw.indexOf(0);
  const match = nul > 0 && nul < 32 ? /^(blob|tree|commit|tag) (\d+)$/.exec(raw.subarray(0, nul).toString('latin1')) : null;
  if (!match) throw refusedImport(`the mirror's object ${name} is corrupt`);
  const content = raw.subarray(nul + 1);
  if (Number(match[2]) !== content.byteLength) throw refusedImport(`the mirror's object ${name} is not the size its header declares`);
  return { type: match[1] as AnyObjectType, content };
}

/**
 * Brings every object of the bare repository at `dir` into `gitdir` (a
 * scratch repository): each pack file copied and checked by the same
 * intake as a fetched pack, the loose objects inflated within the limits
 * into one more pack that goes through it too. Resolves with what came.
 */
export async function fetchLocalObjects(dir: string, gitdir: string, limits: ImportLimits): Promise<PackContents> {
  await checkBareRepository(dir);
  const contents: PackContents = new Map();
  let received = 0;
  let inflated = 0;
  const remaining = (): ImportLimits => ({ maxObjectBytes: limits.maxObjectBytes, maxTotalBytes: limits.maxTotalBytes - inflated });
  const take = (bytes: number): void => {
    received += bytes;
    if (received > limits.maxTotalBytes)
      throw refusedImport(`the mirror holds more than ${describeBytes(limits.maxTotalBytes)}, the most one import takes in (--store-budget)`);
  };
  const packDir = join(gitdir, 'objects', 'pack');
  await mkdir(packDir, { recursive: true });
  const keep = async (packPath: string): Promise<void> => {
    const got = await indexReceivedPack(packPath, remaining());
    for (const [oid, info] of got) {
      if (!contents.has(oid)) inflated += info.size;
      contents.set(oid, info);
    }
    const head = (await readFile(packPath)).subarray(-20).toString('hex');
    await rename(packPath, join(packDir, `pack-${head}.pack`));
    await rename(packPath.replace(/\.pack$/, '.idx'), join(packDir, `pack-${head}.idx`));
  };
  const objects = join(dir, 'objects');
  const loose: string[] = [];
  let n = 0;
  for (const entry of await readdir(objects, { withFileTypes: true })) {
    if (entry.isSymbolicLink())
      throw new LocalMirrorError(`the mirror repository's objects/${entry.name} is a symbolic link; a mirror's files must be inside it`);
    if (entry.name === 'pack' && entry.isDirectory()) {
      for (const file of await readdir(join(objects, 'pack'), { withFileTypes: true })) {
        if (!file.name.endsWith('.pack')) continue;
        if (!file.isFile()) throw new LocalMirrorError(`the mirror repository's objects/pack/${file.name} is not a file inside it`);
        const copy = join(packDir, `received-${n++}.pack`);
        take(await copyInside(join(objects, 'pack', file.name), copy, limits.maxTotalBytes - received));
        await keep(copy);
      }
    } else if (/^[0-9a-f]{2}$/.test(entry.name) && entry.isDirectory()) {
      for (const file of await readdir(join(objects, entry.name), { withFileTypes: true })) {
        if (!/^[0-9a-f]{38}$/.test(file.name)) continue;
        if (!file.isFile()) throw new LocalMirrorError(`the mirror repository's object ${entry.name}${file.name} is not a file inside it`);
        loose.push(`${entry.name}/${file.name}`);
      }
    }
  }
  if (loose.length > 0) {
    const path = join(packDir, `received-${n++}.pack`);
    const out = await open(path, 'wx', 0o600);
    const hash = createHash('sha1');
    const write = async (bytes: Buffer): Promise<void> => {
      hash.update(bytes);
      await out.write(bytes);
    };
    try {
      const header = Buffer.alloc(12);
      header.write('PACK', 0, 'latin1');
      header.writeUInt32BE(2, 4);
      header.writeUInt32BE(loose.length, 8);
      await write(header);
      for (const name of loose) {
        const compressed = await readInside(join(objects, name), limits.maxTotalBytes - received);
        take(compressed.byteLength);
        let raw: Buffer;
        try {
          // Stops inflating past the largest object allowed: a small file that inflates to gigabytes is cut off there.
          raw = inflateSync(compressed, { maxOutputLength: limits.maxObjectBytes + 64 });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
            throw refusedImport(`the mirror's object ${name.replace('/', '')} is larger than ${describeBytes(limits.maxObjectBytes)} (--max-file-size)`);
          throw refusedImport(`the mirror's object ${name.replace('/', '')} is corrupt`);
        }
        const { type, content } = parseLoose(raw, name.replace('/', ''));
        if (content.byteLength > limits.maxObjectBytes)
          throw refusedImport(`the mirror's object ${name.replace('/', '')} is larger than ${describeBytes(limits.maxObjectBytes)} (--max-file-size)`);
        await write(Buffer.concat([encodeEntryHeader(PACK_TYPE_CODE[type], content.byteLength), deflateSync(content)]));
      }
      await out.write(hash.digest());
    } finally {
      await out.close();
    }
    await keep(path);
  }
  return contents;
}
