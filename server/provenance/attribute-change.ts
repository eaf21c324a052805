/**
 * Who made one recorded change of a file: the one place that decides it.
 * The provenance walk (`line-provenance.ts`) describes each change between
 * two recorded versions of a file as a {@link RecordedChange} — where in
 * the session's record it was seen — and this function names its author.
 * Lines an operation put back are not decided here: they keep the author
 * they had before (see `line-provenance.ts`).
 */
import type { LineAuthor, TurnAuthor, UserAuthor } from '../../protocol/extensions/provenance.js';
import { sharedWriters } from '../session/shared-folder.js';

/** The session whose record saw the change. */
export interface RecordedSession {
  /** The session URI. */
  uri: string;
  /** Its title, when it has one. */
  title?: string;
  /** The agent recording it, when known. */
  agent?: string;
}

/** A turn of the session, as provenance names it. */
export interface RecordedTurn {
  /** The turn's number as people see it (1 for the first). */
  number: number;
  /** The turn id. */
  id: string;
  /** The prompt that started it, when recorded. */
  prompt?: string;
  /** When it started, ISO 8601. */
  at: string;
  /** The turn's changeset URI. */
  changeset: string;
}

/** A step (tool call) of a turn: the change ran from its checkpoint to the next one (or the turn's end). */
export interface RecordedStep {
  /** Its 1-based position in the turn. */
  index: number;
  /** The tool, when the harness named it. */
  tool?: string;
  /** The absolute paths the hooks said the tool would write (may be empty). */
  paths: readonly string[];
  /** When the tool call was announced, ISO 8601. */
  at: string;
  /** The step's changeset URI. */
  changeset: string;
}

/** Where in the record a change of the file was seen. */
export type RecordedChange =
  /** Between two recorded states while no turn was recording: before the first turn, between two turns, after the last, or around an operation. */
  | {
      kind: 'outside-turns';
      session: RecordedSession;
      /** The last turn that ended before the change (none before the first turn). */
      afterTurn?: RecordedTurn;
      /** The file, as an absolute path (compared with other sessions' steps' paths). */
      file?: string;
      /** When the record last saw the file before the change, ISO 8601. */
      after?: string;
      /** When the record next saw it, ISO 8601. */
      before?: string;
    }
  /** While a turn was recording: before its first step (`step` absent), or during one step's tool call. */
  | {
      kind: 'in-turn';
      session: RecordedSession;
      turn: RecordedTurn;
      /** The step whose tool call the change happened in; absent before the first step or when the turn recorded none. */
      step?: RecordedStep;
      /** The file, as an absolute path (compared with the step's paths). */
      file: string;
      /** When the record last saw the file before the change, ISO 8601. */
      after?: string;
      /** When the record next saw it, ISO 8601. */
      before?: string;
    };

/**
 * Tools that write only the files they name (Claude Code's, Cursor's,
 * Gemini CLI's file tools). A change during one of them to a file it did
 * not name was not its doing.
 */
const FILE_TOOLS: ReadonlySet<string> = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'Delete', 'write_file', 'replace']);

/** Whether a step's tool writes only the files it names. A shell tool (Bash…) or an unknown one can write anything. */
export function isFileTool(tool: string | undefined): boolean {
  return tool !== undefined && FILE_TOOLS.has(tool);
}

/**
 * The author of one recorded change:
 *
 * - outside every turn (between turns, before the first, after the last,
 *   around an operation): the user, `between-turns`;
 * - in a turn before its first step, or in a turn without steps: the turn;
 * - during a step: the step's tool call — unless the step is a file tool
 *   whose named files do not include this one, then the user made it while
 *   the turn ran (`during-turn`). A shell tool, or a step naming no file,
 *   wrote whatever changed during it.
 * - before all that, when turns of other sessions recording the folder ran
 *   meanwhile and changed the file (`session/shared-folder.ts`): the one
 *   turn whose tool call named it, else the one that may have written it,
 *   else `mixed` with every turn that may have.
 */
export function attributeChange(change: RecordedChange): LineAuthor {
  // Another session recording the folder ran a turn meanwhile that changed the file: the hooks say whose it is, or it is mixed.
  const shared = sharedWriters(change, isFileTool);
  if (shared?.kind === 'one') return turnAuthor(shared.writer.session, shared.writer.turn, shared.writer.step);
  if (shared?.kind === 'mixed') return { kind: 'mixed', candidates: shared.writers.map((w) => turnAuthor(w.session, w.turn, w.step)) };
  if (change.kind === 'outside-turns') {
    const user: UserAuthor = { kind: 'user', when: 'between-turns', session: change.session.uri };
    if (change.afterTurn) user.turn = change.afterTurn.number;
    if (change.after !== undefined) user.after = change.after;
    if (change.before !== undefined) user.before = change.before;
    return user;
  }
  const { step } = change;
  if (step && isFileTool(step.tool) && step.paths.length > 0 && !step.paths.includes(change.file)) {
    const user: UserAuthor = { kind: 'user', when: 'during-turn', turn: change.turn.number, session: change.session.uri };
    if (change.after !== undefined) user.after = change.after;
    if (change.before !== undefined) user.before = change.before;
    return user;
  }
  return turnAuthor(change.session, change.turn, step);
}

/** A turn (and step) of a session as an author. */
export function turnAuthor(session: RecordedSession, turn: RecordedTurn, step?: RecordedStep): TurnAuthor {
  const author: TurnAuthor = { kind: 'turn', session: session.uri, turn: turn.number, turnId: turn.id, at: step?.at ?? turn.at, changeset: turn.changeset };
  if (session.title !== undefined) author.sessionTitle = session.title;
  if (session.agent !== undefined) author.agent = session.agent;
  if (turn.prompt !== undefined) author.prompt = turn.prompt;
  if (step) {
    author.step = step.index;
    if (step.tool !== undefined) author.tool = step.tool;
    author.changeset = step.changeset;
  }
  return author;
}
