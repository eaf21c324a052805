import type { ChangesetOperation, ErrorInfo, ParsedChangesetUri } from '../../protocol/index.js';

/** The operation ids this server offers. */
export const OperationId = {
  Revert: 'revert',
  Discard: 'discard',
  RestoreCheckpoint: 'restore-checkpoint',
  RestoreCheckpointAndTurns: 'restore-checkpoint-and-turns',
  Undo: 'undo',
  Redo: 'redo',
} as const;
export type OperationId = (typeof OperationId)[keyof typeof OperationId];

/** The live status of one operation on one changeset. */
export interface OperationStatusInfo {
  status: 'idle' | 'running' | 'error' | 'disabled';
  error?: ErrorInfo;
}

type Definition = Omit<ChangesetOperation, 'status' | 'error'>;

const REVERT_TURN: Definition = {
  id: OperationId.Revert,
  label: 'Revert',
  description:
    "Undo this turn's changes in the working tree. Later edits to other lines are kept; a file edited since on the same lines is a conflict and nothing is written.",
  scopes: ['changeset', 'resource', 'range'],
  icon: 'discard',
  group: 'revert',
  confirmation: "Revert this turn's changes? Edits made since are kept where they do not overlap. Undo brings the files back.",
};

const RESTORE: Definition = {
  id: OperationId.RestoreCheckpoint,
  label: 'Restore checkpoint',
  description:
    'Bring every file of the workspace back to its state at the start of this turn (or, from one of its steps, to its state just before that tool call).',
  scopes: ['changeset'],
  icon: 'history',
  group: 'checkpoint',
  confirmation: 'Restore all files to the start of this turn? Edits made since, by the agent or by you, are overwritten; Undo brings them back.',
};

const RESTORE_AND_TURNS: Definition = {
  id: OperationId.RestoreCheckpointAndTurns,
  label: 'Restore checkpoint and remove later turns',
  description: 'Restore the files to the start of this turn and drop this turn and every later one from the chat.',
  scopes: ['changeset'],
  icon: 'history',
  group: 'checkpoint',
  confirmation:
    'Restore all files to the start of this turn and remove this turn and all later turns from the chat? Undo brings the files back; the turns stay removed.',
};

const REVERT_SESSION: Definition = {
  id: OperationId.Revert,
  label: 'Revert',
  description: 'Put files back to their content when the session began. Later edits to other lines are kept where possible.',
  scopes: ['changeset', 'resource', 'range'],
  icon: 'discard',
  group: 'revert',
  confirmation: 'Revert to the content the files had when the session began? Undo brings them back.',
};

const REVERT_STEP: Definition = {
  ...REVERT_TURN,
  description:
    "Undo this tool call's changes in the working tree. Later edits to other lines are kept; a file edited since on the same lines is a conflict and nothing is written.",
  confirmation: "Revert this tool call's changes? Edits made since are kept where they do not overlap. Undo brings the files back.",
};

const RESTORE_STEP: Definition = {
  ...RESTORE,
  description: 'Bring every file of the workspace back to its state just before this tool call.',
  confirmation:
    'Restore all files to their state just before this tool call? Edits made since, by the agent or by you, are overwritten; Undo brings them back.',
};

const REVERT_SINCE: Definition = {
  ...REVERT_SESSION,
  description: 'Put the files back to their content at this checkpoint. Later edits to other lines are kept where possible.',
  confirmation: 'Revert to the content the files had at this checkpoint? Undo brings them back.',
};

const UNDO: Definition = {
  id: OperationId.Undo,
  label: 'Undo',
  description: 'Put back what the last revert, discard or restore changed. Repeat to go further back.',
  scopes: ['changeset'],
  icon: 'undo',
  group: 'undo',
  confirmation: 'Put back the files as they were before the last revert, discard or restore?',
};

const REDO: Definition = {
  id: OperationId.Redo,
  label: 'Redo',
  description: 'Do again what the last undo took back. Only right after an undo: a new revert, discard or restore leaves nothing to redo.',
  scopes: ['changeset'],
  icon: 'redo',
  group: 'undo',
  confirmation: 'Put the files back as they were before the last undo?',
};

const DISCARD: Definition = {
  id: OperationId.Discard,
  label: 'Discard',
  description: 'Bring the file back to its content in the last commit (git HEAD). What is staged for the next commit is not touched.',
  scopes: ['resource', 'range'],
  icon: 'discard',
  group: 'revert',
  confirmation: 'Discard these uncommitted changes (back to the last commit)? Undo brings them back.',
};

/** The definitions a changeset kind offers. */
function definitionsFor(parsed: ParsedChangesetUri): Definition[] {
  switch (parsed.kind) {
    case 'turn':
      return [REVERT_TURN, RESTORE, RESTORE_AND_TURNS];
    case 'session':
      return parsed.dir === undefined ? [REVERT_SESSION, UNDO, REDO] : [REVERT_SESSION];
    case 'uncommitted':
      return [DISCARD];
    case 'step':
      return [REVERT_STEP, RESTORE_STEP];
    case 'since':
      return [REVERT_SINCE];
    default:
      return [];
  }
}

/** The operations of a changeset with their current status. */
export function operationsFor(parsed: ParsedChangesetUri, status: (id: string) => OperationStatusInfo): ChangesetOperation[] {
  return definitionsFor(parsed).map((d) => {
    const s = status(d.id);
    return { ...d, status: s.status, ...(s.error ? { error: s.error } : {}) };
  });
}
