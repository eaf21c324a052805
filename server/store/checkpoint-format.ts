/**
 * Checkpoint commit messages and ref names. A message is a readable header
 * line, a blank line, and one trailer line `Changeset-Server: <json>` holding
 * the metadata (the raw ids, turn data, roots).
 */
import type { TurnState } from '../../protocol/chat/state.js';
import { CorruptObjectError } from './errors.js';
import { encodeRefComponent } from './ref-names.js';

/** Ref namespace holding every session's checkpoints. */
export const SESSIONS_PREFIX = 'refs/changeset-server/sessions/';

/** The trailer key that carries checkpoint metadata. */
export const TRAILER_KEY = 'Changeset-Server';

/** How a turn ended: AHP's own turn states. */
export type { TurnState };

/** What a checkpoint records: a turn's start or end, the state before one tool call of a turn (`step`), or the state before a destructive operation. */
export type CheckpointKind = 'start' | 'end' | 'step' | 'safety';

/** Whether the commit tree is the single root's tree, or a tree with one subtree per root. */
export type RootLayout = 'single' | 'multi';

/** The JSON trailer of a checkpoint commit (format version 1). */
export interface CheckpointTrailer {
  /** Format version. */
  v: 1;
  /** Which kind of checkpoint this is. */
  kind: CheckpointKind;
  /** The session's raw id. */
  sessionId: string;
  /** Position in the session's checkpoint chain, starting at 1. */
  seq: number;
  /** When the checkpoint was written (ISO 8601). */
  createdAt: string;
  /** Turn number within the session (turn checkpoints). */
  turnIndex?: number;
  /** The turn's raw id (turn checkpoints). */
  turnId?: string;
  /** The turn's message, e.g. the user prompt (turn checkpoints). */
  message?: string;
  /** How the turn ended (end checkpoints). */
  state?: TurnState;
  /** When the turn started (ISO 8601). */
  startedAt?: string;
  /** When the turn ended (ISO 8601). */
  endedAt?: string;
  /** Names of the tools the turn used. */
  tools?: string[];
  /** Position of the step within its turn, starting at 1 (step checkpoints). */
  step?: number;
  /** Number of the safety checkpoint within the session (safety checkpoints). */
  safetyIndex?: number;
  /** Why the safety checkpoint was taken, e.g. `revert turn 3` (safety checkpoints). */
  reason?: string;
  /** Caller-defined JSON about the operation (safety checkpoints) or the tool call (step checkpoints). */
  details?: unknown;
  /** Tree layout; see {@link RootLayout}. */
  layout: RootLayout;
  /** The roots, in order: entry name in a multi-root tree and the directory it snapshots. */
  roots: { name: string; path?: string }[];
  /** Id of the change-entries blob stored with this checkpoint, if any. */
  entries?: string;
}

/** Pads checkpoint numbers so stock git lists refs in order. */
function padNumber(n: number): string {
  return String(n).padStart(6, '0');
}

/** Ref paths of one session. */
export function sessionRefs(sessionId: string) {
  const prefix = `${SESSIONS_PREFIX}${encodeRefComponent(sessionId)}/`;
  return {
    prefix,
    head: `${prefix}head`,
    ended: `${prefix}ended`,
    turns: `${prefix}turns/`,
    safety: `${prefix}safety/`,
    steps: `${prefix}steps/`,
    turn: (index: number, turnId: string, leaf: 'start' | 'end' | 'entries') => `${prefix}turns/${padNumber(index)}-${encodeRefComponent(turnId)}/${leaf}`,
    safetyRef: (index: number) => `${prefix}safety/${padNumber(index)}`,
    // Beside `turns/`, not inside it: a turn's own refs stay start, end and entries.
    stepRef: (turnIndex: number, turnId: string, step: number) => `${prefix}steps/${padNumber(turnIndex)}-${encodeRefComponent(turnId)}/${padNumber(step)}`,
  };
}

function summary(text: string | undefined, max = 72): string {
  const line = (text ?? '').split('\n', 1)[0]!.trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The readable first line of a checkpoint commit message. */
function headerLine(t: CheckpointTrailer): string {
  if (t.kind === 'safety') return `safety ${t.safetyIndex}: ${summary(t.reason)}`;
  if (t.kind === 'step') {
    const tool = (t.details as { tool?: unknown } | undefined)?.tool;
    return `turn ${t.turnIndex} step ${t.step}${typeof tool === 'string' ? `: before ${summary(tool)}` : ''}`;
  }
  const state = t.kind === 'end' && t.state ? ` (${t.state})` : '';
  const text = summary(t.message);
  return `turn ${t.turnIndex} ${t.kind}${state}${text ? `: ${text}` : ''}`;
}

/** The full commit message for a checkpoint. */
export function checkpointMessage(t: CheckpointTrailer): string {
  return `${headerLine(t)}\n\n${TRAILER_KEY}: ${JSON.stringify(t)}\n`;
}

/** Extracts the trailer from a commit message; throws when the commit is not a checkpoint. */
export function parseCheckpointMessage(message: string, commit: string): CheckpointTrailer {
  const lines = message.trimEnd().split('\n');
  const line = [...lines].reverse().find((l) => l.startsWith(`${TRAILER_KEY}: `));
  if (!line) throw new CorruptObjectError(`commit ${commit} is not a checkpoint (no ${TRAILER_KEY} trailer)`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(line.slice(TRAILER_KEY.length + 2));
  } catch {
    throw new CorruptObjectError(`commit ${commit} has an unreadable ${TRAILER_KEY} trailer`);
  }
  const t = parsed as Partial<CheckpointTrailer>;
  if (t?.v !== 1 || typeof t.sessionId !== 'string' || typeof t.seq !== 'number' || !Array.isArray(t.roots)) {
    throw new CorruptObjectError(`commit ${commit} has an unsupported ${TRAILER_KEY} trailer`);
  }
  return t as CheckpointTrailer;
}
