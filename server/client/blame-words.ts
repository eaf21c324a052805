import type { LineAuthor, ProvenanceResult, TurnAuthor } from '../../protocol/extensions/provenance.js';

/**
 * Who wrote a file's lines, in the words of the person or agent asking:
 * turn numbers, agents, prompts, "you" or "the user", commits before
 * recording — never a session or changeset URI, never a turn id. Shared by
 * `changeset-server blame` and the MCP server's `who_wrote`.
 */

/** A session the words may name: its URI (to compare), its title, and how many turns it has. */
interface KnownSession {
  channel: string;
  title: string;
  turnCount: number;
}

/** What the words are relative to: the session asked about, and others recording the same folder. */
export interface BlameContext {
  session: KnownSession;
  others?: readonly KnownSession[];
  /** How the user is named: "you" to a person, "the user" to an agent. */
  user: 'you' | 'the user';
  /** The current year (dates in it leave the year out); the clock's by default. */
  year?: number;
}

/** A line author as `--json` and the MCP tool give it: turn numbers and sessions by id and title, no URIs, no turn ids. */
type AuthorInWords =
  | {
      kind: 'turn';
      turn: number;
      /** Set when the turn is another session's: its id. */
      session?: string;
      sessionTitle?: string;
      agent?: string;
      prompt?: string;
      step?: number;
      tool?: string;
      at: string;
    }
  | { kind: 'user'; when: 'between-turns' | 'during-turn'; turn?: number; session?: string; after?: string; before?: string }
  | { kind: 'before-recording'; commit?: { id: string; summary: string; author: string; at: string }; reason?: string }
  | { kind: 'mixed'; candidates: Extract<AuthorInWords, { kind: 'turn' }>[] };

/** Consecutive lines with one author, in words. */
export interface BlameRange {
  startLine: number;
  endLine: number;
  /** The short author column the command line prints ("turn 3 · Claude Code · step 2 Edit"). */
  by: string;
  author: AuthorInWords;
  /** A revert, restore or undo put these lines back; the author is who wrote them before. */
  restored?: true;
}

/** A turn whose lines are shown, listed once with its prompt. */
export interface BlameTurn {
  /** "turn 3", or "turn 2 of "Other title"". */
  name: string;
  turn: number;
  session?: string;
  sessionTitle?: string;
  agent?: string;
  prompt?: string;
  at: string;
}

/** A session's id from its URI. */
export function sessionId(channel: string): string {
  return channel.replace(/^ahp-session:\/+/, '');
}

/** Text from a file, a prompt or a person on one line, without anything a terminal would take as control. */
export function oneLine(text: string, max = 200): string {
  const clean = text
    .replace(/\s*[\r\n]+\s*/g, ' ')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is replaced
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd')
    .trim();
  return clean.length <= max ? clean : `${clean.slice(0, max - 1)}…`;
}

function titleOf(ctx: BlameContext, channel: string): string | undefined {
  if (channel === ctx.session.channel) return ctx.session.title;
  return ctx.others?.find((s) => s.channel === channel)?.title;
}

/** "turn 3", or "turn 2 of "Other title"" for another session's. */
function turnName(author: Pick<TurnAuthor, 'turn' | 'session' | 'sessionTitle'>, ctx: BlameContext): string {
  if (author.session === ctx.session.channel) return `turn ${author.turn}`;
  const title = author.sessionTitle ?? titleOf(ctx, author.session);
  return `turn ${author.turn} of ${title !== undefined ? `"${oneLine(title, 60)}"` : 'another session'}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "3 Nov", or "3 Nov 2024" in another year (UTC). */
function dayWords(iso: string, ctx: BlameContext): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const year = ctx.year ?? new Date().getUTCFullYear();
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}${d.getUTCFullYear() === year ? '' : ` ${d.getUTCFullYear()}`}`;
}

/** "2 Dec 10:04 UTC". */
export function timeWords(iso: string, ctx: BlameContext): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${dayWords(iso, ctx)} ${iso.slice(11, 16)} UTC`;
}

/** Where a hand edit was seen: "between turns 2 and 3", "after turn 3", "before turn 1", "during turn 2". */
function userWhen(author: Extract<LineAuthor, { kind: 'user' }>, ctx: BlameContext): string {
  const own = author.session === ctx.session.channel;
  const title = own ? undefined : titleOf(ctx, author.session);
  const of = own ? '' : ` of ${title !== undefined ? `"${oneLine(title, 60)}"` : 'another session'}`;
  if (author.when === 'during-turn') return author.turn !== undefined ? `during turn ${author.turn}${of}` : `during a turn${of}`;
  if (author.turn === undefined) return `before turn 1${of}`;
  const count = own ? ctx.session.turnCount : ctx.others?.find((s) => s.channel === author.session)?.turnCount;
  return count !== undefined && author.turn < count ? `between turns ${author.turn} and ${author.turn + 1}${of}` : `after turn ${author.turn}${of}`;
}

/** The short author column: "turn 3 · Claude Code · step 2 Edit", "you, between turns 2 and 3", "before recording · a1b2c3d Ann 3 Nov", "mixed: …". */
function authorColumn(author: LineAuthor, ctx: BlameContext): string {
  switch (author.kind) {
    case 'turn': {
      const step = author.step !== undefined ? `step ${author.step}${author.tool ? ` ${oneLine(author.tool, 30)}` : ''}` : undefined;
      return [turnName(author, ctx), author.agent !== undefined ? oneLine(author.agent, 30) : undefined, step].filter(Boolean).join(' · ');
    }
    case 'user':
      return `${ctx.user}, ${userWhen(author, ctx)}`;
    case 'before-recording':
      return author.commit
        ? `before recording · ${author.commit.oid.slice(0, 7)} ${oneLine(author.commit.author, 30)} ${dayWords(author.commit.at, ctx)}`
        : `before recording · ${author.reason !== undefined ? oneLine(author.reason, 60) : 'no commit'}`;
    case 'mixed':
      return `mixed: ${author.candidates.map((c) => (c.session === ctx.session.channel ? `turn ${c.turn} of this session` : turnName(c, ctx))).join(', ')}`;
  }
}

/** The author in a sentence, for an agent: "turn 3 ("Fix the login"), by Claude Code, in step 2 (Edit), 2 Dec 10:04 UTC". */
export function authorSentence(author: LineAuthor, ctx: BlameContext): string {
  switch (author.kind) {
    case 'turn': {
      const prompt = author.prompt !== undefined ? ` ("${oneLine(author.prompt, 120)}")` : '';
      const agent = author.agent !== undefined ? `, by ${oneLine(author.agent, 30)}` : '';
      const step = author.step !== undefined ? `, in step ${author.step}${author.tool ? ` (${oneLine(author.tool, 30)})` : ''}` : '';
      return `${turnName(author, ctx)}${prompt}${agent}${step}, ${timeWords(author.at, ctx)}`;
    }
    case 'user':
      return `${ctx.user}, by hand ${userWhen(author, ctx)} (no turn made this edit)`;
    case 'before-recording':
      return author.commit
        ? `already there before recording began: commit ${author.commit.oid.slice(0, 7)} "${oneLine(author.commit.summary, 100)}" by ${oneLine(author.commit.author, 40)}, ${dayWords(author.commit.at, ctx)}`
        : `already there before recording began (${author.reason !== undefined ? oneLine(author.reason, 100) : 'no commit says who'})`;
    case 'mixed':
      return `one of ${author.candidates.map((c) => turnName(c, ctx)).join(' or ')}: several sessions changed the file at once and the record cannot tell which`;
  }
}

function turnInWords(author: TurnAuthor, ctx: BlameContext): Extract<AuthorInWords, { kind: 'turn' }> {
  const other = author.session !== ctx.session.channel;
  const title = other ? (author.sessionTitle ?? titleOf(ctx, author.session)) : undefined;
  return {
    kind: 'turn',
    turn: author.turn,
    ...(other ? { session: sessionId(author.session) } : {}),
    ...(title !== undefined ? { sessionTitle: title } : {}),
    ...(author.agent !== undefined ? { agent: author.agent } : {}),
    ...(author.prompt !== undefined ? { prompt: author.prompt } : {}),
    ...(author.step !== undefined ? { step: author.step } : {}),
    ...(author.tool !== undefined ? { tool: author.tool } : {}),
    at: author.at,
  };
}

/** An author without URIs or turn ids. */
function authorInWords(author: LineAuthor, ctx: BlameContext): AuthorInWords {
  switch (author.kind) {
    case 'turn':
      return turnInWords(author, ctx);
    case 'user':
      return {
        kind: 'user',
        when: author.when,
        ...(author.turn !== undefined ? { turn: author.turn } : {}),
        ...(author.session !== ctx.session.channel ? { session: sessionId(author.session) } : {}),
        ...(author.after !== undefined ? { after: author.after } : {}),
        ...(author.before !== undefined ? { before: author.before } : {}),
      };
    case 'before-recording':
      return {
        kind: 'before-recording',
        ...(author.commit ? { commit: { id: author.commit.oid, summary: author.commit.summary, author: author.commit.author, at: author.commit.at } } : {}),
        ...(author.reason !== undefined ? { reason: author.reason } : {}),
      };
    case 'mixed':
      return { kind: 'mixed', candidates: author.candidates.map((c) => turnInWords(c, ctx)) };
  }
}

/** The result's ranges in words, top to bottom. */
export function rangesInWords(result: ProvenanceResult, ctx: BlameContext): BlameRange[] {
  return result.ranges.map((r) => {
    const author = result.authors[r.author]!;
    return {
      startLine: r.startLine,
      endLine: r.endLine,
      by: authorColumn(author, ctx) + (r.restored ? ' · put back' : ''),
      author: authorInWords(author, ctx),
      ...(r.restored ? { restored: true as const } : {}),
    };
  });
}

/** Each turn the ranges name (mixed ones' candidates included), once, in the order of sessions then turn numbers. */
export function turnsOf(result: ProvenanceResult, ctx: BlameContext): BlameTurn[] {
  const seen = new Map<string, TurnAuthor>();
  const add = (a: TurnAuthor) => {
    const key = `${a.session}\n${a.turn}`;
    if (!seen.has(key)) seen.set(key, a);
  };
  for (const r of result.ranges) {
    const a = result.authors[r.author];
    if (a?.kind === 'turn') add(a);
    else if (a?.kind === 'mixed') a.candidates.forEach(add);
  }
  const own = (a: TurnAuthor) => (a.session === ctx.session.channel ? 0 : 1);
  return [...seen.values()]
    .sort((a, b) => own(a) - own(b) || a.session.localeCompare(b.session) || a.turn - b.turn)
    .map((a) => {
      const { kind: _k, step: _s, tool: _t, ...rest } = turnInWords(a, ctx);
      return { name: turnName(a, ctx), ...rest };
    });
}

/** "line 4", "lines 12–14". */
export function lineWords(start: number, end: number): string {
  return start === end ? `line ${start}` : `lines ${start}–${end}`;
}
