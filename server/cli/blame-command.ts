import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ProvenanceResult } from '../../protocol/extensions/provenance.js';
import { parseClientArgs, TARGET_USAGE, targetOf } from './client-args.js';
import { Output } from '../client/output.js';
import { connectToSession, realDir } from '../client/target.js';
import { CommandError, UsageError } from '../client/errors.js';
import { isInsideDir } from '../paths.js';
import { lineWords, oneLine, rangesInWords, sessionId, timeWords, turnsOf, type BlameContext, type BlameRange, type BlameTurn } from '../client/blame-words.js';

export const BLAME_USAGE = [
  'Usage: changeset-server blame FILE [--lines A-B] [options]',
  '',
  'Who last wrote each line of FILE, from the record: a turn (its number, the agent,',
  'the step and tool that wrote it), you (an edit no turn made: between turns, after',
  'the last one, or during a turn in a file its tool calls did not write), or the',
  "repository's history before recording began (the commit that last changed the",
  'line). Lines a revert, restore or undo put back keep who wrote them before, marked',
  '"put back". Each turn\'s prompt is listed once at the end.',
  '',
  '  FILE                 relative to the current directory, or absolute',
  '  --lines A-B          only these lines ("12-30", or "12" for one), counted from 1',
  TARGET_USAGE,
  '',
].join('\n');

/** `changeset-server blame FILE [--lines A-B]`. */
export async function blameCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseClientArgs(argv, ['lines'], { positionals: 1 });
  if (values.help) {
    process.stdout.write(BLAME_USAGE);
    return 0;
  }
  const file = positionals[0];
  if (file === undefined) throw new UsageError('blame needs a FILE');
  const lines = values.lines === undefined ? undefined : lineRange(values.lines);
  const out = new Output(values.json === true);
  const target = { ...targetOf(values), startForHistory: true };
  const { client, picked, report } = await connectToSession(target, out);
  try {
    const session = picked.session;
    const abs = resolve(realDir(undefined), file);
    if (!session.workingDirectories.some((dir) => isInsideDir(dir, abs))) {
      throw new CommandError(`${file} is not in a folder "${oneLine(session.title, 80)}" records (${session.workingDirectories.join(', ')})`);
    }
    const result = await client.request('provenance/lines', {
      session: session.channel,
      path: abs,
      ...(lines ? { startLine: lines.start, endLine: lines.end } : {}),
    });
    if (result.missing) throw new CommandError(`${result.path} is not in the working tree as "${oneLine(session.title, 80)}" last recorded it`);
    if (lines && !result.binary && lines.start > result.lineCount) {
      throw new CommandError(
        `${result.path} has ${result.lineCount === 1 ? 'only 1 line' : `only ${result.lineCount} lines`}, so there is no line ${lines.start}`,
      );
    }
    const ctx: BlameContext = { session, others: picked.others, user: 'you' };
    const ranges = rangesInWords(result, ctx);
    const turns = turnsOf(result, ctx);
    const json = {
      ...report,
      session: { id: sessionId(session.channel), title: session.title },
      path: result.path,
      lineCount: result.lineCount,
      ...(result.binary ? { binary: true } : {}),
      ranges,
      turns,
    };
    if (result.binary) {
      out.result(`${result.path} is a binary file: it has no lines to say who wrote.`, json);
      return 0;
    }
    const text = textOf(abs, result);
    if (text === undefined && !out.json) out.note(`${result.path} changed since it was last recorded, so its lines are shown as ranges without their text.`);
    out.result(blameText(result, ranges, turns, text, ctx), json);
    return 0;
  } finally {
    await client.close();
  }
}

/** `--lines`: "A-B" or "A", 1 <= A <= B. */
function lineRange(text: string): { start: number; end: number } {
  const match = /^\s*(\d+)\s*(?:[-–]\s*(\d+))?\s*$/.exec(text);
  const start = match ? Number(match[1]) : NaN;
  const end = match?.[2] !== undefined ? Number(match[2]) : start;
  if (!match || start < 1 || end < start) throw new UsageError(`--lines takes A-B or A with 1 <= A <= B (such as 12-30), not "${text}"`);
  return { start, end };
}

/** The file's lines as they are on disk, when they are the version the server blamed (same line count); undefined otherwise. */
function textOf(abs: string, result: ProvenanceResult): string[] | undefined {
  let content: string;
  try {
    content = readFileSync(abs, 'utf8');
  } catch {
    return undefined;
  }
  const lines = content.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.length === result.lineCount ? lines : undefined;
}

/**
 * Like `git blame`: each line with its author column and number, then each
 * turn named once with its prompt. Without the text (the file changed since
 * it was recorded), one line per range.
 */
function blameText(result: ProvenanceResult, ranges: BlameRange[], turns: BlameTurn[], text: string[] | undefined, ctx: BlameContext): string {
  if (ranges.length === 0) return `${result.path} is empty: no lines to say who wrote.`;
  const width = Math.max(...ranges.map((r) => r.by.length));
  const out: string[] = [];
  if (text) {
    const numWidth = String(ranges.at(-1)!.endLine).length;
    for (const r of ranges) {
      for (let n = r.startLine; n <= r.endLine; n++) {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: a file's control characters are not for the terminal
        const line = (text[n - 1] ?? '').replace(/\r$/, '').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '\ufffd');
        out.push(`${r.by.padEnd(width)}  ${String(n).padStart(numWidth)} │ ${line}`.trimEnd());
      }
    }
  } else {
    const where = ranges.map((r) => lineWords(r.startLine, r.endLine));
    const whereWidth = Math.max(...where.map((w) => w.length));
    ranges.forEach((r, i) => {
      out.push(`${where[i]!.padEnd(whereWidth)}  ${r.by}`);
    });
  }
  if (turns.length > 0) {
    out.push('');
    for (const t of turns) {
      const who = [t.agent !== undefined ? oneLine(t.agent, 30) : undefined, timeWords(t.at, ctx)].filter(Boolean).join(', ');
      out.push(`${t.name}: ${t.prompt !== undefined ? `"${oneLine(t.prompt, 100)}"` : '(no prompt recorded)'} (${who})`);
    }
  }
  return out.join('\n');
}
