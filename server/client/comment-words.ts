import type { ReviewComment } from '../../protocol/extensions/comments.js';

/** Most lines of code shown under one comment. */
const MAX_CODE_LINES = 8;
/** Most characters of one code line or of one comment's text shown. */
const MAX_LINE_CHARS = 200;
const MAX_BODY_CHARS = 1500;

/** "line 4", "lines 12–14". */
function lineWords(start: number, end: number): string {
  return start === end ? `line ${start}` : `lines ${start}–${end}`;
}

/** Text from a file or a person, without anything a terminal or a model's context would take as control. */
function cleanText(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is replaced
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\ufffd');
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Where a comment points, in words: "src/app.ts lines 5–6, written on turn 1",
 * "src/app.ts lines 7–8, written on turn 1 at lines 5–6", "turn 3 as a whole",
 * "src/app.ts line 18 as turn 1 left it, outdated: …".
 */
export function commentPlace(c: ReviewComment): string {
  if (c.anchor.kind === 'turn') return `turn ${c.turn ?? '?'} as a whole`;
  const lines = lineWords(c.anchor.startLine, c.anchor.endLine);
  const removed = c.anchor.side === 'before' ? ' (lines the turn removed)' : '';
  if (c.now === null) {
    const left = c.turn !== undefined ? ` as turn ${c.turn} ${c.anchor.side === 'before' ? 'found it' : 'left it'}` : '';
    return `${cleanText(c.anchor.path)} ${lines}${left}${removed}, outdated: those lines have since been removed or rewritten`;
  }
  const now = c.now ?? { path: c.anchor.path, startLine: c.anchor.startLine, endLine: c.anchor.endLine };
  const moved = now.path !== c.anchor.path || now.startLine !== c.anchor.startLine || now.endLine !== c.anchor.endLine;
  const was = moved ? ` at ${now.path !== c.anchor.path ? `${cleanText(c.anchor.path)} ` : ''}${lines}` : '';
  const written = c.turn !== undefined ? `, written on turn ${c.turn}${was}` : moved ? `, written${was}` : '';
  return `${cleanText(now.path)} ${lineWords(now.startLine, now.endLine)}${written}${removed}`;
}

/** The code a comment points at, cut to a few short lines. */
export function commentCode(c: ReviewComment): string[] {
  const code = (c.code ?? []).map((line) => cut(cleanText(line), MAX_LINE_CHARS));
  if (code.length <= MAX_CODE_LINES) return code;
  return [...code.slice(0, MAX_CODE_LINES), `… ${code.length - MAX_CODE_LINES} more line${code.length - MAX_CODE_LINES === 1 ? '' : 's'}`];
}

/** A comment's text, cut when very long. */
export function commentBody(c: ReviewComment): string {
  return cut(cleanText(c.body.replace(/\r\n?/g, '\n')), MAX_BODY_CHARS);
}

/** One comment as a model reads it: its number and place, the code, and what the reviewer wrote. */
function commentItem(c: ReviewComment): string {
  const out = [`- Comment #${c.id} on ${commentPlace(c)}, from ${cleanText(c.author)}:`];
  const code = commentCode(c);
  if (code.length > 0) {
    out.push('  The code it points at:');
    for (const line of code) out.push(`  | ${line}`);
  }
  out.push('  The comment:');
  for (const line of commentBody(c).split('\n')) out.push(`  > ${line}`);
  return out.join('\n');
}

/** Options of {@link openCommentsForAgent}. */
interface AgentCommentsOptions {
  /** Most characters of the whole text (10,000 reach Claude Code whole). */
  maxChars?: number;
}

/**
 * The open review comments handed to an agent at its next prompt: short
 * and plain, one item per comment with its file and lines, the code, the
 * comment, and how to say it was addressed; undefined when there are none.
 */
export function openCommentsForAgent(comments: readonly ReviewComment[], options: AgentCommentsOptions = {}): string | undefined {
  const open = comments.filter((c) => c.state === 'open');
  if (open.length === 0) return undefined;
  const maxChars = options.maxChars ?? 8000;
  const head =
    open.length === 1
      ? 'The reviewer of your changes left a comment that is still open. Address it as part of this prompt when it applies:'
      : `The reviewer of your changes left ${open.length} comments that are still open. Address them as part of this prompt when they apply:`;
  const tail =
    'When you have addressed a comment, say so with the resolve_comment tool of changeset-server (its number and a note of what you did); without that tool, say in your answer which comments you addressed.';
  const items: string[] = [];
  let size = head.length + tail.length + 4;
  for (const [i, c] of open.entries()) {
    const item = commentItem(c);
    const rest = open.length - i;
    const more = `- … and ${rest} more open comment${rest === 1 ? '' : 's'} (the list_comments tool of changeset-server, or "changeset-server comment list", shows them all).`;
    if (size + item.length + 1 + more.length > maxChars) {
      items.push(more);
      break;
    }
    items.push(item);
    size += item.length + 1;
  }
  return [head, ...items, tail].join('\n');
}
