import { AhpErrorCodes } from '../../protocol/common/errors.js';
import { RemoteError } from './remote-error.js';
import { UsageError } from './errors.js';
import { CLI_HINTS, type Hints } from './hints.js';

/** An error as `--json` prints it: `{"error": {"code", "message", "data"?}}`. */
export interface ErrorOutput {
  /** The JSON-RPC error code, or `usage` / `failed` for errors of the command line itself. */
  code: number | 'usage' | 'failed';
  message: string;
  data?: unknown;
}

/** Writes a command's result: plain lines for people, one JSON object with `--json`. */
export class Output {
  constructor(readonly json: boolean) {}

  /** Something worth knowing beside the result (which session was used): stderr for people, a field in JSON. */
  note(text: string | undefined, into?: Record<string, unknown>): void {
    if (!text) return;
    if (this.json) {
      if (into) into['note'] = text;
    } else process.stderr.write(`${text}\n`);
  }

  result(human: string, json: unknown): void {
    process.stdout.write(this.json ? `${JSON.stringify(json)}\n` : human.endsWith('\n') ? human : `${human}\n`);
  }
}

/** The words a person reads for an error: no method names, no codes. */
export function describeError(error: unknown, hints: Hints = CLI_HINTS): ErrorOutput {
  if (error instanceof UsageError) return { code: 'usage', message: error.message };
  if (error instanceof RemoteError) {
    const data = error.data;
    switch (error.code) {
      case AhpErrorCodes.AlreadyExists: {
        const conflicts = (data as { conflicts?: { path: string; reason: string }[] } | undefined)?.conflicts;
        if (conflicts?.length) {
          const lines = conflicts.map((c) => `  ${c.path}: ${c.reason}`);
          return {
            code: error.code,
            message: `Nothing was written: ${conflicts.length === 1 ? '1 file' : `${conflicts.length} files`} would lose edits:\n${lines.join('\n')}`,
            data,
          };
        }
        return { code: error.code, message: error.message, ...(data !== undefined ? { data } : {}) };
      }
      case AhpErrorCodes.TurnInProgress:
        return {
          code: error.code,
          message:
            hints === CLI_HINTS
              ? `${error.message.replace(/; operations wait until it ends$/, '')}: try again once it ends ("changeset-server turn end" ends it)`
              : `${error.message.replace(/; operations wait until it ends$/, '')}: try again once it has ended`,
        };
      case AhpErrorCodes.PermissionDenied:
        return { code: error.code, message: `refused: ${error.message}` };
      default:
        return { code: error.code, message: error.message.replace(/^params\./, ''), ...(data !== undefined ? { data } : {}) };
    }
  }
  return { code: 'failed', message: error instanceof Error ? error.message : String(error) };
}
