import { type ChildProcess, spawn } from 'node:child_process';

const writers: ChildProcess[] = [];

/** A process (`sleep`, through `sh`) holding `path` open for writing until {@link killWriters}. */
export async function holdOpenForWriting(path: string): Promise<ChildProcess> {
  const child = spawn('sh', ['-c', 'exec 3>>"$0"; echo ready; exec sleep 60', path], { stdio: ['ignore', 'pipe', 'ignore'] });
  writers.push(child);
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return child;
}

/** Kills every process {@link holdOpenForWriting} started; for `afterEach`. */
export function killWriters(): void {
  for (const child of writers.splice(0)) child.kill('SIGKILL');
}
