import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The port and token a workspace's server used last, so open viewer tabs and links keep working across restarts. */
export interface RememberedEndpoint {
  port: number;
  token?: string;
}

function endpointFile(stateDir: string, directories: readonly string[]): string {
  const key = createHash('sha256').update(directories.join('\0')).digest('hex').slice(0, 16);
  return join(stateDir, 'endpoints', `${key}.json`);
}

/** The endpoint remembered for these directories, if any (a malformed file counts as none). */
export async function readEndpoint(stateDir: string, directories: readonly string[]): Promise<RememberedEndpoint | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(endpointFile(stateDir, directories), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const port = v['port'];
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  const token = v['token'];
  if (token !== undefined && (typeof token !== 'string' || !/^[\x21-\x7e]+$/.test(token))) return undefined;
  return { port, ...(typeof token === 'string' ? { token } : {}) };
}

/** Remembers the endpoint, readable by the user only (it holds the token). */
export async function writeEndpoint(stateDir: string, directories: readonly string[], endpoint: RememberedEndpoint): Promise<void> {
  const path = endpointFile(stateDir, directories);
  await mkdir(join(stateDir, 'endpoints'), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(endpoint)}\n`, { mode: 0o600 });
  await rename(tmp, path);
}
