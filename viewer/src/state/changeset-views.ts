/**
 * What the main area can show, as the catalogue and the chat name it: a
 * static catalogue entry, one turn, one tool call (step) of a turn, or two
 * turns compared — each with its expanded URI and the label people read
 * (turns by number and message, not by id).
 */
import { expandChangesetUri } from '../../../protocol/changeset/uris.js';
import type { Changeset, ChatState, URI } from '../../../protocol/index.js';
import { firstLine } from './timeline.js';

/** The changeset shown in the main area. */
export interface OpenChangeset {
  /** Its expanded URI. */
  uri: URI;
  /** Heading shown above the file list. */
  label: string;
  /** The catalogue entry's `changeKind`. */
  changeKind: string;
  /** The catalogue entry advertises the review capability. */
  reviewable: boolean;
}

/** Catalogue entries that need no template variables: subscribable as they are. */
export function isStatic(entry: Changeset): boolean {
  return !entry.uriTemplate.includes('{');
}

function reviewable(entry: Changeset): boolean {
  return entry.capabilities?.review !== undefined;
}

function numberOf(chat: ChatState | undefined, turnId: string): number {
  return (chat?.turns.findIndex((t) => t.id === turnId) ?? -1) + 1;
}

/** A static catalogue entry. */
export function entryView(entry: Changeset): OpenChangeset {
  return { uri: entry.uriTemplate, label: entry.label, changeKind: entry.changeKind, reviewable: reviewable(entry) };
}

/** One turn's changeset. */
export function turnView(entry: Changeset, chat: ChatState | undefined, turnId: string): OpenChangeset {
  const turn = chat?.turns.find((t) => t.id === turnId);
  return {
    uri: expandChangesetUri(entry.uriTemplate, { turnId }),
    label: `Turn: ${firstLine(turn?.message.text) || turnId}`,
    changeKind: 'turn',
    reviewable: reviewable(entry),
  };
}

/** What one tool call (step, 1-based) of a turn changed. */
export function stepView(entry: Changeset, chat: ChatState | undefined, turnId: string, step: number): OpenChangeset {
  return {
    uri: expandChangesetUri(entry.uriTemplate, { turnId, step: String(step) }),
    label: `Turn ${numberOf(chat, turnId) || turnId}, step ${step}`,
    changeKind: 'step',
    reviewable: reviewable(entry),
  };
}

/** Two turns' end states compared (`original` is the old side). */
export function compareView(entry: Changeset, chat: ChatState | undefined, original: string, modified: string): OpenChangeset {
  return {
    uri: expandChangesetUri(entry.uriTemplate, { originalTurnId: original, modifiedTurnId: modified }),
    label: `Compare: turn ${numberOf(chat, original)} → turn ${numberOf(chat, modified)}`,
    changeKind: 'compare-turns',
    reviewable: reviewable(entry),
  };
}

/** The turn whose changeset `uri` is, when it is one of the chat's turns. */
export function turnOfUri(catalogue: readonly Changeset[], chat: ChatState | undefined, uri: URI): string | undefined {
  const entry = catalogue.find((c) => c.changeKind === 'turn');
  if (!entry || !chat) return undefined;
  return chat.turns.find((t) => expandChangesetUri(entry.uriTemplate, { turnId: t.id }) === uri)?.id;
}

/**
 * The label of a turn, step or comparison opened before the chat was
 * mirrored (a deep link), once it is; undefined when it cannot be named yet.
 */
export function relabel(
  open: OpenChangeset,
  chat: ChatState | undefined,
  turnId: string | undefined,
  step: number | undefined,
  compare: readonly string[],
): string | undefined {
  const turns = chat?.turns ?? [];
  if (open.changeKind === 'turn') {
    const message = firstLine(turns.find((t) => t.id === turnId)?.message.text);
    return message ? `Turn: ${message}` : undefined;
  }
  if (open.changeKind === 'step' && step !== undefined && turnId !== undefined) {
    const number = numberOf(chat, turnId);
    return number > 0 ? `Turn ${number}, step ${step}` : undefined;
  }
  if (open.changeKind === 'compare-turns' && compare.length === 2) {
    const [a, b] = compare.map((id) => numberOf(chat, id));
    return a && b ? `Compare: turn ${a} → turn ${b}` : undefined;
  }
  return undefined;
}
