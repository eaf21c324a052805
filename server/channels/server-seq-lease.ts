import { closeSync, fsyncSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { mkdirPrivateSync, openPrivateSync } from '../private-files.js';

/** How far ahead of the current `serverSeq` the stored number is kept. */
export const SERVER_SEQ_LEASE = 100_000;

const FILE_NAME = 'server-seq';

/**
 * Keeps `serverSeq` growing across restarts. Clients reconnect with the
 * last `serverSeq` they saw; a restarted server counting from 0 again would
 * take that number for one of its own and replay envelopes onto a state
 * the client never had. The state directory holds a number above every
 * `serverSeq` handed out (renewed, synchronously, before the count reaches
 * it), and the next run counts on from there.
 */
export class ServerSeqLease {
  private ceiling: number;

  private constructor(
    private readonly path: string,
    /** The `serverSeq` this run starts from: above any an earlier run sent. */
    readonly first: number,
    private readonly log: (line: string) => void,
  ) {
    this.ceiling = first;
  }

  /** Reads the stored number and takes the next lease; throws when the state directory cannot be written. */
  static open(stateDir: string, log: (line: string) => void): ServerSeqLease {
    mkdirPrivateSync(stateDir);
    const path = join(stateDir, FILE_NAME);
    const lease = new ServerSeqLease(path, readStored(path), log);
    lease.ceiling = lease.write(lease.first);
    return lease;
  }

  /** Told every committed `serverSeq`; renews the lease before the count can reach the stored number. */
  observe(seq: number): void {
    if (seq + 1 < this.ceiling) return;
    try {
      this.ceiling = this.write(seq);
    } catch (error) {
      // Recording goes on; only a later restart might replay across runs.
      this.ceiling = seq + SERVER_SEQ_LEASE;
      this.log(`cannot store the serverSeq lease in ${this.path}: ${(error as Error).message}`);
    }
  }

  private write(seq: number): number {
    // Servers sharing a state directory never lower what another one stored.
    const next = Math.max(readStored(this.path), seq) + SERVER_SEQ_LEASE;
    const temp = `${this.path}.${process.pid}.tmp`;
    const fd = openPrivateSync(temp, 'w');
    try {
      writeSync(fd, `${next}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, this.path);
    return next;
  }
}

function readStored(path: string): number {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return 0;
  }
  const value = Number(text.trim());
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}
