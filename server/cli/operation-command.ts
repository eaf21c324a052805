import { parseClientArgs, TARGET_USAGE, targetOf, type ClientValues } from './client-args.js';
import { Output } from '../client/output.js';

import { parseLineRange, runOperation, type OperationCommand } from '../client/operation-request.js';
import { connectToSession } from '../client/target.js';
import { plural } from '../client/turn-ref.js';
import { UsageError } from '../client/errors.js';

export type { OperationCommand } from '../client/operation-request.js';

const TURN_HELP = '  --turn T             the turn: the number "status" shows, "last", -1 (the last), -2, …, or its id';
const DRY_RUN_HELP = '  --dry-run            show the files it would change and any conflicts; write nothing';
const OUTSIDE_LINKS_HELP = [
  '  --allow-outside-symlinks',
  '                       from an imported session, also create symbolic links that point outside the',
  '                       working directory (they are listed as skipped otherwise)',
].join('\n');

export const OPERATION_USAGE: Record<OperationCommand, string> = {
  revert: [
    'Usage: changeset-server revert [--turn T] [--file PATH [--lines A-B] [--side after|before]] [--dry-run] [options]',
    '',
    'Reverts what a turn changed: the whole turn, one file, or a line range of one',
    'file. Edits made since are kept where they do not overlap; a file edited since',
    'on the same lines is a conflict, and then nothing is written. "undo" puts it back.',
    '',
    `${TURN_HELP} (default: the last ended turn)`,
    '  --file PATH          only this file (relative to the current directory, or absolute)',
    '  --lines A-B          only the changes touching lines A to B of --file, as your editor numbers them',
    '  --side after|before  count --lines in the file after the turn (default) or before it',
    DRY_RUN_HELP,
    OUTSIDE_LINKS_HELP,
  ].join('\n'),
  restore: [
    'Usage: changeset-server restore --turn T [--step N] [--and-turns] [--dry-run] [options]',
    '',
    'Puts every file back as it was when turn T started (or, with --step, just',
    'before its Nth file-editing tool call). Edits made since are overwritten',
    '("undo" brings them back).',
    '',
    TURN_HELP,
    "  --step N             back to just before the turn's Nth tool call that edited files",
    '  --and-turns          also remove turn T and every later turn from the session',
    DRY_RUN_HELP,
    OUTSIDE_LINKS_HELP,
  ].join('\n'),
  discard: [
    'Usage: changeset-server discard --file PATH [--lines A-B] [--dry-run] [options]',
    '',
    "Discards a file's uncommitted changes: it goes back to its content in the last",
    'commit (git HEAD). "undo" puts them back.',
    '',
    '  --file PATH          the file',
    '  --lines A-B          only the changes touching lines A to B of it, as your editor numbers them',
    DRY_RUN_HELP,
  ].join('\n'),
  undo: [
    'Usage: changeset-server undo [--dry-run] [options]',
    '',
    'Undoes the last revert, restore or discard: every file it wrote comes back',
    'byte for byte.',
    '',
    DRY_RUN_HELP,
    OUTSIDE_LINKS_HELP,
  ].join('\n'),
  redo: [
    'Usage: changeset-server redo [--dry-run] [options]',
    '',
    'Takes back the last undo: the files it put back get the content the undone',
    'revert, restore or discard had written. Only right after an undo: a new revert,',
    'restore or discard leaves nothing to redo. A file edited since the undo is a',
    'conflict, and then nothing is written.',
    '',
    DRY_RUN_HELP,
    OUTSIDE_LINKS_HELP,
  ].join('\n'),
};

const OWN_OPTIONS: Record<OperationCommand, (keyof ClientValues & string)[]> = {
  revert: ['turn', 'file', 'lines', 'side', 'dry-run', 'allow-outside-symlinks'],
  restore: ['turn', 'step', 'and-turns', 'dry-run', 'allow-outside-symlinks'],
  discard: ['file', 'lines', 'dry-run'],
  undo: ['dry-run', 'allow-outside-symlinks'],
  redo: ['dry-run', 'allow-outside-symlinks'],
};

/** Runs `revert`, `restore`, `discard`, `undo` or `redo`. */
export async function operationCommand(command: OperationCommand, argv: readonly string[]): Promise<number> {
  const { values } = parseClientArgs(argv, OWN_OPTIONS[command] as never[]);
  if (values.help) {
    process.stdout.write(`${OPERATION_USAGE[command]}\n${TARGET_USAGE}\n`);
    return 0;
  }
  if (values.lines !== undefined && values.file === undefined) throw new UsageError('--lines needs --file');
  if (command === 'discard' && values.file === undefined) throw new UsageError('discard needs --file: it discards the uncommitted changes of one file');
  if (command === 'restore' && values.turn === undefined) throw new UsageError('restore needs --turn (the number "changeset-server status" shows, or "last")');
  const side = values.side ?? 'after';
  if (side !== 'after' && side !== 'before') throw new UsageError(`--side must be after or before, got "${side}"`);
  const lines = values.lines === undefined ? undefined : parseLines(values.lines);
  const step = values.step === undefined ? undefined : Number(values.step);
  if (step !== undefined && (!Number.isInteger(step) || step < 1)) throw new UsageError(`--step must be a step number from 1, got "${values.step}"`);
  const dryRun = values['dry-run'] === true;
  const out = new Output(values.json === true);
  const target = { ...targetOf(values), startForHistory: true };
  const { client, picked, report } = await connectToSession(target, out, (p) => ({ session: p.session.channel }));
  try {
    const done = await runOperation(client, picked.session, {
      command,
      ...(values.turn !== undefined ? { turn: values.turn } : {}),
      ...(values.file !== undefined ? { file: values.file } : {}),
      ...(lines ? { lines } : {}),
      side,
      andTurns: values['and-turns'] === true,
      ...(step !== undefined ? { step } : {}),
      dryRun,
      ...(values['allow-outside-symlinks'] === true ? { allowOutsideSymlinks: true } : {}),
    });
    const skipped = done.skipped.map((s) => `  skipped ${s.path}: ${s.reason}`);
    const userEdits = userEditLines(done.userEdits, dryRun);
    const userEditFields = { userEdited: done.userEdited, userEdits: done.userEdits };
    if (done.turn) report['turn'] = { index: done.turn.index, turnId: done.turn.turnId };
    if (dryRun) {
      const files = done.files as { path: string; action: string }[];
      const heading =
        `Dry run, nothing written: ${command} ${done.turn?.label ?? ''} would ${files.length === 0 ? 'change no file' : `change ${plural(files.length, 'file')}:`}`.replace(
          / {2,}/g,
          ' ',
        );
      const body = files.map((f) => `  ${f.action.padEnd(6)} ${f.path}`);
      out.result([heading, ...body, ...skipped, ...userEdits].join('\n'), {
        ...report,
        operation: done.operationId,
        dryRun: true,
        files,
        unchanged: done.unchanged,
        skipped: done.skipped,
        ...userEditFields,
        message: done.message,
      });
      return 0;
    }
    const files = done.files as string[];
    const heading = done.action ?? done.message;
    const body = files.length > 0 ? files.map((f) => `  ${f}`) : ['  (no file needed a change)'];
    out.result([heading, ...body, ...skipped, ...userEdits].join('\n'), {
      ...report,
      operation: done.operationId,
      action: heading,
      files,
      skipped: done.skipped,
      ...userEditFields,
      message: done.message,
    });
    return 0;
  } finally {
    await client.close();
  }
}

/** The files holding edits no turn made, each with when they were made and what becomes of them. */
function userEditLines(edits: readonly { path: string; reason: string }[], dryRun: boolean): string[] {
  if (edits.length === 0) return [];
  const head = `${plural(edits.length, 'file')} ${dryRun ? (edits.length === 1 ? 'has' : 'have') : 'had'} edits no turn made:`;
  return [head, ...edits.map((e) => `  ${e.path}: ${e.reason}`)];
}

/** `--lines A-B` (or `A`), as editors number lines. */
function parseLines(text: string): { start: number; end: number } {
  const range = parseLineRange(text);
  if (!range) throw new UsageError(`--lines must be A-B with 1 <= A <= B (line numbers as your editor shows them), got "${text}"`);
  return range;
}
