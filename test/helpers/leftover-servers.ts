import { readdirSync, readFileSync } from 'node:fs';

/**
 * The `changeset-server serve` processes a test file started, directly (its
 * own children) or through a command that starts one in the background (the
 * hooks, MCP, the CLI: detached, so no longer its children), found after the
 * file so that one left running fails the file that left it
 * (`file-isolation.ts`) instead of living on after its directories are gone.
 */

/** Directories the file made (`TempDirs`): a server whose command line names one is the file's. */
const dirs = new Set<string>();
/** Servers the file's helpers spawned. */
const pids = new Set<number>();

/** Counts `dir` as this test file's: a server started over it or with its state in it belongs to the file. */
export function ownDir(dir: string): void {
  dirs.add(dir);
}

/** Counts `pid` as a server this test file started. */
export function ownServer(pid: number | undefined): void {
  if (pid !== undefined) pids.add(pid);
}

interface Found {
  pid: number;
  command: string;
}

function belongsHere(pid: number, parent: number, args: string[]): boolean {
  if (pids.has(pid) || parent === process.pid) return true;
  return args.some((arg) => dirs.has(arg) || [...dirs].some((dir) => arg.startsWith(`${dir}/`)));
}

/** The `serve` processes of this file still running. */
function find(): Found[] {
  const found: Found[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let args: string[];
    let parent: number;
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const script = args.findIndex((arg) => arg.endsWith('changeset-server.js') || arg.endsWith('changeset-server'));
      if (script < 0 || args[script + 1] !== 'serve') continue;
      args = args.slice(script).filter(Boolean);
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      continue; // gone meanwhile
    }
    if (belongsHere(pid, parent, args)) found.push({ pid, command: args.join(' ') });
  }
  return found;
}

/**
 * After a test file: waits a little for its servers still stopping, kills
 * (SIGKILL) those still running, forgets what the file owned, and returns
 * the command lines of the servers it had to kill.
 */
export async function endLeftoverServers(waitMs = 5000): Promise<string[]> {
  try {
    if (dirs.size === 0 && pids.size === 0) return [];
    const deadline = Date.now() + waitMs;
    let left = find();
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      left = find();
    }
    for (const { pid } of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // exited meanwhile
      }
    }
    return left.map(({ pid, command }) => `pid ${pid}: ${command}`);
  } finally {
    dirs.clear();
    pids.clear();
  }
}
