import { basename, relative, resolve, sep } from 'node:path';
import type { CommentAnchor, ReviewComment, SessionStatusInfo } from '../../protocol/index.js';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/changeset/uris.js';
import { parseClientArgs, TARGET_USAGE, targetOf, type ClientValues } from './client-args.js';
import { Output } from '../client/output.js';
import { connectToSession, realDir } from '../client/target.js';
import { plural, resolveTurn } from '../client/turn-ref.js';
import { CommandError, UsageError } from '../client/errors.js';
import { isInsideDir } from '../paths.js';

export const COMMENT_USAGE = [
  'Usage: changeset-server comment add FILE:LINE[-LINE] "text" [--turn N] [--before] [options]',
  '       changeset-server comment add --turn N "text"',
  '       changeset-server comment list [--all] [options]',
  '       changeset-server comment resolve ID [--note "text"] [options]',
  '       changeset-server comment reopen ID [options]',
  '       changeset-server comment delete ID [options]',
  '',
  'Review comments the agent reads: on lines of a file (as a turn left it with',
  '--turn, else as the session changed it), or on a whole turn. A comment is',
  'named by its number in the session ("3" or "#3"), which "add" and "list"',
  'print. Its lines are followed through later turns; when they are gone or',
  'rewritten the comment is "outdated".',
  '',
  '  --turn N             the turn: the number "changeset-server status" shows, "last" or "-1"',
  '  --before             lines of the file before the changes (removed lines), not after',
  '  --all                list resolved comments too (default: the open ones)',
  '  --note TEXT          with resolve: what was done about it',
  '',
  TARGET_USAGE,
  '',
].join('\n');

/** `changeset-server comment add|list|resolve|reopen|delete`. */
export async function commentCommand(argv: readonly string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action === undefined || action === '--help' || action === '-h') {
    process.stdout.write(COMMENT_USAGE);
    return action === undefined ? 2 : 0;
  }
  const spec: Record<string, { extra: ('turn' | 'before' | 'all' | 'note')[]; positionals: number }> = {
    add: { extra: ['turn', 'before'], positionals: 2 },
    list: { extra: ['all'], positionals: 0 },
    resolve: { extra: ['note'], positionals: 1 },
    reopen: { extra: [], positionals: 1 },
    delete: { extra: [], positionals: 1 },
  };
  const wanted = spec[action];
  if (!wanted) throw new UsageError(`unknown comment action "${action}" (expected add, list, resolve, reopen or delete)`);
  const { values, positionals } = parseClientArgs(rest, wanted.extra, { positionals: wanted.positionals });
  if (values.help) {
    process.stdout.write(COMMENT_USAGE);
    return 0;
  }
  const out = new Output(values.json === true);
  const target = { ...targetOf(values), startForHistory: true };
  const { client, picked, report } = await connectToSession(target, out, (p) => ({ session: p.session.channel }));
  try {
    const session = picked.session;
    if (action === 'add') {
      const anchor = anchorOf(session, values, positionals);
      const comment = await client.request('comments/add', { channel: session.channel, anchor: anchor.anchor, body: anchor.body });
      out.result(`Comment #${comment.id} on ${where(comment)}.`, { ...report, comment });
      return 0;
    }
    if (action === 'list') {
      const { comments } = await client.request('comments/list', { channel: session.channel, state: values.all ? 'all' : 'open' });
      const human = comments.length === 0 ? `No ${values.all ? '' : 'open '}comments in "${clean(session.title)}".` : comments.map(describe).join('\n\n');
      out.result(human, { ...report, comments });
      return 0;
    }
    const id = idOf(positionals[0]);
    if (action === 'resolve') {
      const comment = await client.request('comments/resolve', { channel: session.channel, id, ...(values.note !== undefined ? { note: values.note } : {}) });
      out.result(`Resolved #${comment.id}: ${where(comment)}.`, { ...report, comment });
    } else if (action === 'reopen') {
      const comment = await client.request('comments/reopen', { channel: session.channel, id });
      out.result(`Reopened #${comment.id}: ${where(comment)}.`, { ...report, comment });
    } else {
      await client.request('comments/delete', { channel: session.channel, id });
      out.result(`Deleted #${id}.`, { ...report, deleted: id });
    }
    return 0;
  } finally {
    await client.close();
  }
}

/** The comment's number as the server knows it: "3" from "3" or "#3". */
function idOf(text: string | undefined): string {
  if (text === undefined) throw new UsageError('name the comment by its number ("changeset-server comment list" shows them)');
  const match = /^#?([1-9]\d{0,15})$/.exec(text);
  if (!match) throw new UsageError(`"${text}" is not a comment number such as 3 or #3`);
  return match[1]!;
}

/** What `comment add` writes, from `FILE:LINE[-LINE] "text"` or `--turn N "text"`. */
function anchorOf(session: SessionStatusInfo, values: ClientValues, positionals: readonly string[]): { anchor: CommentAnchor; body: string } {
  const sessionId = session.channel.slice('ahp-session:/'.length);
  if (positionals.length === 1) {
    if (values.turn === undefined) throw new UsageError('comment add takes FILE:LINE and the text, or --turn N and the text');
    if (values.before) throw new UsageError('--before is for lines of a file, not a whole turn');
    const turn = resolveTurn(session, values.turn);
    return { anchor: { kind: 'turn', turnId: turn.turnId }, body: positionals[0]! };
  }
  if (positionals.length !== 2) throw new UsageError('comment add takes FILE:LINE[-LINE] and the text of the comment');
  const [place, body] = positionals as [string, string];
  const colon = place.lastIndexOf(':');
  const range = colon > 0 ? /^(\d+)(?:[-–](\d+))?$/.exec(place.slice(colon + 1)) : null;
  const start = range ? Number(range[1]) : NaN;
  const end = range?.[2] !== undefined ? Number(range[2]) : start;
  if (!range || start < 1 || end < start) throw new UsageError(`"${place}" does not name lines: write FILE:LINE or FILE:FIRST-LAST, e.g. src/app.ts:12-14`);
  const path = displayPath(session, place.slice(0, colon));
  const changeset =
    values.turn !== undefined
      ? expandChangesetUri(changesetUriTemplate(sessionId, 'turn'), { turnId: resolveTurn(session, values.turn).turnId })
      : changesetUriTemplate(sessionId, 'session');
  return { anchor: { kind: 'lines', changeset, path, side: values.before ? 'before' : 'after', startLine: start, endLine: end }, body };
}

/** The path as the session's changesets show it: relative to its working directory (with the directory's name first when it has several). */
function displayPath(session: SessionStatusInfo, file: string): string {
  const abs = resolve(realDir(undefined), file);
  const dirs = session.workingDirectories;
  const dir = dirs.filter((d) => isInsideDir(d, abs)).sort((a, b) => b.length - a.length)[0];
  if (dir === undefined) throw new CommandError(`${file} is not inside the folder "${clean(session.title)}" records (${dirs.join(', ')})`);
  const rel = relative(dir, abs).split(sep).join('/');
  return dirs.length > 1 ? `${basename(dir)}/${rel}` : rel;
}

function lineWords(start: number, end: number): string {
  return start === end ? `line ${start}` : `lines ${start}–${end}`;
}

/** "src/app.ts lines 12–14 (turn 3)", "turn 3", "src/app.ts lines 12–14 of turn 3, outdated". */
function where(c: ReviewComment): string {
  if (c.anchor.kind === 'turn') return `turn ${c.turn ?? '?'}`;
  const of = c.turn !== undefined ? ` (turn ${c.turn})` : '';
  if (c.now === null) return `${clean(c.anchor.path)} ${lineWords(c.anchor.startLine, c.anchor.endLine)}${of}, outdated`;
  const now = c.now ?? { path: c.anchor.path, startLine: c.anchor.startLine, endLine: c.anchor.endLine };
  const moved = now.startLine !== c.anchor.startLine || now.path !== c.anchor.path;
  const was = moved ? `, written on ${c.anchor.path !== now.path ? `${clean(c.anchor.path)} ` : ''}${lineWords(c.anchor.startLine, c.anchor.endLine)}` : '';
  return `${clean(now.path)} ${lineWords(now.startLine, now.endLine)}${of}${was}`;
}

/** One comment for `comment list`: its number, where, who and its state, its text, and the code it points at. */
function describe(c: ReviewComment): string {
  const state =
    c.state === 'open'
      ? 'open'
      : `resolved by ${c.resolution?.by === 'agent' ? 'the agent' : 'the reviewer'}${c.resolution?.note ? `: ${clean(c.resolution.note)}` : ''}`;
  const out = [`#${c.id}  ${where(c)} — ${clean(c.author)}, ${state}`];
  for (const line of c.body.split('\n')) out.push(`    ${clean(line)}`);
  const code = c.code ?? [];
  for (const line of code.slice(0, 5)) out.push(`    │ ${clean(line)}`);
  if (code.length > 5) out.push(`    │ … ${plural(code.length - 5, 'more line')}`);
  return out.join('\n');
}

/** Text from a file or another person, printed without anything a terminal would act on. */
function clean(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is replaced
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\ufffd');
}
