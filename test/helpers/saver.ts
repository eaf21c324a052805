import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

/** How the second process saves (see test/operations/processes/saver.mjs). */
export type SaveStyle = 'append' | 'rewrite' | 'rename' | 'chunked';

/** A point of the server's swap the save waits for. */
export type SaveMoment = 'now' | 'replacing' | 'aside';

export interface SaveCommand {
  style: SaveStyle | 'lines' | 'hold' | 'release';
  path?: string;
  when?: SaveMoment;
  data?: string;
  gapMs?: number;
  count?: number;
  prefix?: string;
  after?: 'replaced';
  /** `lines`: the file stays open after the last line, until a `release` command. */
  keepOpen?: boolean;
  /** How long to wait for the moment before giving up (default 20 s). */
  waitMs?: number;
}

export interface SaveReply {
  /** The bytes the save wrote (for `lines`, every line appended). */
  written?: string;
  pid?: number;
  held?: boolean;
  error?: string;
}

/** A child process that saves files on command, one command at a time. */
export class Saver {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly lines: Interface;

  constructor(script: string) {
    this.child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = createInterface({ input: this.child.stdout });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Sends one command; resolves with its reply once the save is done. */
  run(cmd: SaveCommand): Promise<SaveReply> {
    return new Promise((resolve, reject) => {
      this.lines.once('line', (line) => {
        const msg = JSON.parse(line) as SaveReply;
        if (msg.error) reject(new Error(msg.error));
        else resolve(msg);
      });
      this.child.stdin.write(`${JSON.stringify(cmd)}\n`);
    });
  }

  stop(): void {
    this.child.kill();
  }
}
