import {
  AhpErrorCodes,
  formatChangesetUri,
  isChangesetUriError,
  parseChangesetUri,
  type ChangesetOperation,
  type ChangesetState,
  type InvokeChangesetOperationParams,
  type InvokeChangesetOperationResult,
  type InvokeOperationParams,
  type OperationInvocationMeta,
  type ParsedChangesetUri,
} from '../../protocol/index.js';
import type { Changesets } from '../changesets/changesets.js';
import type { ChangesetChannel, SessionChangesets } from '../changesets/session-changesets.js';
import type { RootTrees } from '../changes/collect-changes.js';
import type { FileChange } from '../changes/file-change.js';
import { invalidParams, DomainError } from '../domain-error.js';
import type { MethodTable } from '../method-table.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SessionManager } from '../session/session-manager.js';
import type { SafetyRecord } from '../session/session-journal.js';
import { OperationId, operationsFor, type OperationStatusInfo } from './catalogue.js';
import type * as Execute from './execute.js';
import type * as Planning from './plan.js';
import type { Plan } from './plan.js';
import type { HistoryFrom, UnrecordedGap } from './unrecorded-edits.js';
import type * as WriteGuard from './write-guard.js';
import type { RangeSelection } from './reverse-merge.js';
import { userActionText } from '../session/user-action-text.js';
import { stepOf } from '../session/step-recorder.js';
import { checkpointTrees, missingStepMessage } from '../changesets/changeset-sides.js';

/**
 * Error code of an operation refused because files changed since: AHP's
 * AlreadyExists ("the target exists and the operation does not overwrite");
 * `data.conflicts` lists every path with the reason.
 */
const OPERATION_CONFLICT = AhpErrorCodes.AlreadyExists;

/** Planning and the write path (merges, the disk writes), loaded at the first operation: a server that runs none never loads them. */
type WritePath = typeof Execute & typeof Planning & typeof WriteGuard;
let writePath: WritePath | undefined;
async function loadWritePath(): Promise<WritePath> {
  if (!writePath) {
    const [execute, planning, guard] = await Promise.all([import('./execute.js'), import('./plan.js'), import('./write-guard.js')]);
    writePath = { ...execute, ...planning, ...guard };
  }
  return writePath;
}

/** What `_meta` of an invocation may carry. */
type InvocationMeta = OperationInvocationMeta;

/**
 * `invokeChangesetOperation`: revert a turn, a file or a range; discard
 * uncommitted changes; restore a checkpoint (optionally dropping later
 * turns); undo the last of these. One at a time per session, identical
 * concurrent invocations coalesced, a safety checkpoint before any write.
 */
export class ChangesetOperations {
  private readonly status = new Map<string, OperationStatusInfo>();
  private readonly inFlight = new Map<string, Promise<InvokeChangesetOperationResult>>();
  /** Whether undo and redo are possible, per session, as last published (`"true false"`). */
  private readonly undoable = new Map<string, string>();

  constructor(
    private readonly sessions: SessionManager,
    private readonly changesets: Changesets,
  ) {}

  /** `invokeChangesetOperation` (its params are checked by the protocol's validator, its `_meta` here). */
  methods(): MethodTable {
    return { invokeChangesetOperation: { request: (params) => this.invoke(params) } };
  }

  /** The operations a changeset offers, with their status now (what the changesets publish; `service.ts` connects them). */
  offeredOn(session: RecordingSession, parsed: ParsedChangesetUri): ChangesetOperation[] {
    return operationsFor(parsed, (id) => this.statusOf(session, parsed, id));
  }

  /** Resolves once every operation running now has finished, whatever its outcome (a clean stop waits for them). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inFlight.values()]);
  }

  async invoke(params: InvokeOperationParams): Promise<InvokeChangesetOperationResult> {
    const meta = (params as { _meta?: InvocationMeta })._meta;
    if (meta !== undefined && (typeof meta !== 'object' || meta === null || (meta.dryRun !== undefined && typeof meta.dryRun !== 'boolean'))) {
      throw invalidParams('params._meta.dryRun must be a boolean');
    }
    const dryRun = meta?.dryRun === true;
    const step = meta?.step;
    if (step !== undefined && (typeof step !== 'number' || !Number.isInteger(step) || step < 1)) {
      throw invalidParams('params._meta.step must be a step number (an integer from 1)');
    }
    if (meta?.allowOutsideSymlinks !== undefined && typeof meta.allowOutsideSymlinks !== 'boolean') {
      throw invalidParams('params._meta.allowOutsideSymlinks must be a boolean');
    }
    const { owner, channel } = await this.changesets.channel(params.channel);
    const session = owner.session;
    const state = this.changesets.stateOf(params.channel) as ChangesetState;
    const op = state.operations?.find((o) => o.id === params.operationId);
    if (!op) throw invalidParams(`operationId: "${params.operationId}" is not an operation of ${params.channel}`);
    // Undo's and redo's published status may lag the journal (a restart, an operation just ended): the journal decides.
    const history = op.id === OperationId.Undo || op.id === OperationId.Redo ? historyOf(await session.safety.list()) : undefined;
    const possible = op.id === OperationId.Undo ? history?.undoable !== undefined : op.id === OperationId.Redo && history?.redoable !== undefined;
    if (op.status === 'disabled' && !possible) throw invalidParams(`operationId: "${op.id}" is disabled${disabledWhy(op.id)}`);
    if (step !== undefined) {
      if (op.id !== OperationId.RestoreCheckpoint || channel.parsed.kind !== 'turn') {
        throw invalidParams('params._meta.step: only restore-checkpoint on a turn changeset takes a step');
      }
      const turn = session.turn(channel.parsed.turnId!);
      if (turn && !stepOf(turn, step)) throw invalidParams(missingStepMessage(turn, step));
    }
    const scope = params.target?.kind ?? 'changeset';
    if (!op.scopes.includes(scope)) throw invalidParams(`target.kind: "${op.id}" takes ${op.scopes.join(', ')}, not ${scope}`);
    const selected = this.selectChanges(channel, params);
    const { assertInside, OutsideWorkspaceError } = await loadWritePath();
    for (const change of selected) {
      for (const path of [change.absPath, change.oldAbsPath]) {
        if (path === undefined) continue;
        await assertInside(session, path).catch((error: unknown) => {
          throw error instanceof OutsideWorkspaceError ? new DomainError(AhpErrorCodes.PermissionDenied, error.message) : error;
        });
      }
    }
    if (session.activeTurnId !== undefined) {
      throw new DomainError(AhpErrorCodes.TurnInProgress, `${turnName(session, session.activeTurnId)} is being recorded; operations wait until it ends`);
    }

    const key = JSON.stringify([params.channel, params.operationId, params.target ?? null, dryRun, step ?? null, meta?.allowOutsideSymlinks === true]);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const run = this.run(session, owner, channel, op.id, params, selected, dryRun).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, run);
    return run;
  }

  private async run(
    session: RecordingSession,
    owner: SessionChangesets,
    channel: ChangesetChannel,
    opId: string,
    params: InvokeChangesetOperationParams,
    selected: FileChange[],
    dryRun: boolean,
  ): Promise<InvokeChangesetOperationResult> {
    if (!dryRun) this.setStatus(owner, channel, opId, { status: 'running' });
    try {
      const result = await session.exclusive(async () => {
        if (session.activeTurnId !== undefined) {
          throw new DomainError(AhpErrorCodes.TurnInProgress, `${turnName(session, session.activeTurnId)} is being recorded; operations wait until it ends`);
        }
        const { plan, undoes, truncateAfter, describe } = await this.plan(session, channel.parsed, opId, params, selected);
        if (plan.conflicts.length > 0) {
          const list = plan.conflicts.map((c) => `${c.path} (${c.reason})`).join(', ');
          throw new DomainError(OPERATION_CONFLICT, `Nothing was written: ${plural(plan.conflicts.length, 'conflict')}: ${list}`, {
            conflicts: plan.conflicts,
          });
        }
        const message = describe(plan);
        if (dryRun) return { message: `Dry run: ${message}`, _meta: dryRunMeta(plan) } as InvokeChangesetOperationResult;
        const files = plan.writes.map((w) => w.display);
        const undid = undoes !== undefined ? undoneAction(await session.safety.list(), undoes, opId === OperationId.Redo) : undefined;
        const step = (params as { _meta?: InvocationMeta })._meta?.step;
        const parsed = step !== undefined ? { ...channel.parsed, step } : channel.parsed;
        const action = userActionText(session, { operation: opId, parsed, target: params.target, files, ...(undid ? { undid } : {}) });
        const written = plan.writes.length > 0 || truncateAfter !== undefined;
        if (written) {
          await (await loadWritePath()).executePlan(session, plan, {
            operation: opId,
            changeset: params.channel,
            message,
            action,
            ...(undoes !== undefined ? { undoes } : {}),
            ...(truncateAfter !== undefined ? { truncateAfter } : {}),
          });
        }
        // Status goes back to idle before the removed turns' channels close, so no client keeps a running operation.
        this.setStatus(owner, channel, opId, { status: 'idle' });
        if (truncateAfter !== undefined) this.dropTurns(session, owner, truncateAfter);
        const writes = plan.writes.map((w) => ({ absPath: w.absPath, root: w.root, ...(w.next ? { content: w.next.content, mode: w.next.mode } : {}) }));
        await session.recordUserAction({ at: new Date().toISOString(), operation: opId, text: action, files, changeset: params.channel }, written, writes);
        const userEdits = plan.userEdits?.length ? { userEdited: plan.userEdited, userEdits: plan.userEdits } : {};
        return {
          message,
          _meta: { action, files, ...(plan.skipped.length > 0 ? { skipped: plan.skipped } : {}), ...userEdits },
        } as InvokeChangesetOperationResult;
      });
      if (!dryRun) await this.afterWrite(session, owner);
      return result;
    } catch (error) {
      if (!dryRun) {
        // A stopped operation that put everything back has cancelled its own safety checkpoint.
        await this.refreshUndo(session);
        const message = error instanceof Error ? error.message : String(error);
        this.setStatus(owner, channel, opId, {
          status: 'error',
          error: { errorType: error instanceof DomainError && error.code === OPERATION_CONFLICT ? 'Conflict' : 'OperationFailed', message },
        });
      }
      if (error instanceof RangeError) throw invalidParams(`target.range: ${error.message}`);
      if (writePath && error instanceof writePath.OutsideWorkspaceError) throw new DomainError(AhpErrorCodes.PermissionDenied, error.message);
      throw error;
    }
  }

  private async plan(
    session: RecordingSession,
    parsed: ParsedChangesetUri,
    opId: string,
    params: InvokeChangesetOperationParams,
    selected: FileChange[],
  ): Promise<{ plan: Plan; undoes?: number; truncateAfter?: string | null; describe: (plan: Plan) => string }> {
    const target = params.target;
    const { planReverse, planRestore, planUndo, writeGuardFor } = await loadWritePath();
    const guard = await writeGuardFor(session, (params as { _meta?: InvocationMeta })._meta?.allowOutsideSymlinks === true);
    const selection: RangeSelection | undefined =
      target?.kind === 'range' ? { range: target.range, side: target.side === 'before' ? 'before' : 'after' } : undefined;
    switch (opId) {
      case OperationId.Revert:
      case OperationId.Discard: {
        const plan = await planReverse(
          session,
          selected,
          selection,
          this.restoredTrees(session, parsed),
          opId === OperationId.Discard ? { ...guard, imported: false } : guard,
        );
        if (opId === OperationId.Revert) await this.noteRevertedEdits(session, parsed, plan);
        const verb = opId === OperationId.Discard ? 'Discarded changes to' : 'Reverted';
        return { plan, describe: (p) => summary(`${verb} ${plural(p.writes.length, 'file')}`, p) };
      }
      case OperationId.RestoreCheckpoint:
      case OperationId.RestoreCheckpointAndTurns: {
        const turn = session.turn(parsed.turnId!);
        if (!turn?.after) throw invalidParams(`${turnName(session, parsed.turnId!)} has not ended yet: there is no end to restore from`);
        const stepIndex = parsed.kind === 'step' ? parsed.step : (params as { _meta?: InvocationMeta })._meta?.step;
        const step = stepIndex !== undefined ? stepOf(turn, stepIndex) : undefined;
        if (stepIndex !== undefined && !step) throw invalidParams(missingStepMessage(turn, stepIndex));
        if (step) {
          const plan = await planRestore(session, step.trees, turn, step.index, guard);
          const label = `before step ${step.index}${step.tool ? ` (${step.tool})` : ''} of turn ${turn.index}`;
          return { plan, describe: (p) => restoredText(p, label) };
        }
        const plan = await planRestore(session, turn.before, turn, undefined, guard);
        const index = session.turns.indexOf(turn);
        const truncateAfter = opId === OperationId.RestoreCheckpointAndTurns ? (index > 0 ? session.turns[index - 1]!.id : null) : undefined;
        return {
          plan,
          ...(truncateAfter !== undefined ? { truncateAfter } : {}),
          describe: (p) => {
            let text = summary(`Restored ${plural(p.writes.length, 'file')} to the start of turn ${turn.index}`, p);
            if (truncateAfter !== undefined) text += `; removed ${plural(session.turns.length - index, 'turn')} from the chat`;
            if (p.userEdited.length > 0) {
              text += `; ${plural(p.userEdited.length, 'file')} had edits no turn made: ${p.userEdited.join(', ')} (undo brings them back)`;
            }
            return text;
          },
        };
      }
      case OperationId.Undo: {
        const record = await this.lastUndoable(session);
        if (!record) throw invalidParams('operationId: "undo" is disabled: there is nothing to undo');
        const plan = await planUndo(session, record, guard);
        return {
          plan,
          undoes: record.index,
          describe: (p) => summary(`Undid ${operationNoun(session, record, session.safety.known())}: put back ${plural(p.writes.length, 'file')}`, p),
        };
      }
      case OperationId.Redo: {
        // Redo undoes the last undo, from that undo's own safety checkpoint: a file edited since the undo is a conflict.
        const records = await session.safety.list();
        const record = historyOf(records).redoable;
        if (!record) throw invalidParams(`operationId: "redo" is disabled${disabledWhy(OperationId.Redo)}`);
        const plan = await planUndo(session, record, guard);
        const original = doneBy(
          records,
          records.find((r) => r.index === record.details.undoes),
        );
        const what = original ? operationNoun(session, original) : 'the last operation';
        return { plan, undoes: record.index, describe: (p) => summary(`Redid ${what}: put back ${plural(p.writes.length, 'file')}`, p) };
      }
      default:
        throw invalidParams(`operationId: unknown operation "${opId}"`);
    }
  }

  /**
   * Names the files a revert writes that hold edits no turn made: those
   * after the changeset's end are kept (the revert merges around them),
   * those within it (a hand edit between two of the session's turns) are
   * reverted with the rest.
   */
  private async noteRevertedEdits(session: RecordingSession, parsed: ParsedChangesetUri, plan: Plan): Promise<void> {
    const kept = 'kept, the revert merges around it';
    const reverted = 'reverted too, undo brings it back';
    let from: HistoryFrom | undefined;
    let fate: (gap: UnrecordedGap) => string = () => kept;
    if (parsed.kind === 'session') {
      from = 'start';
      // A recording session's changes run to today's files; an ended one's to where it ended.
      fate = (gap) => (session.isEnded && gap.afterLastTurn ? kept : reverted);
    } else if (parsed.kind === 'turn' || parsed.kind === 'step' || parsed.kind === 'since') {
      from = session.turn(parsed.turnId!);
      if (parsed.kind === 'since') fate = () => reverted;
    }
    if (from === undefined || plan.writes.length === 0) return;
    await (await loadWritePath()).noteUnrecordedEdits(session, plan, from, await session.snapshotInQueue(), fate);
  }

  /** The state a revert goes back to, where it is recorded: directories it does not have are removed once emptied. */
  private restoredTrees(session: RecordingSession, parsed: ParsedChangesetUri): RootTrees[] | undefined {
    if (parsed.kind === 'turn') return session.turn(parsed.turnId!)?.before;
    if (parsed.kind === 'step') {
      const turn = session.turn(parsed.turnId!);
      return turn ? stepOf(turn, parsed.step!)?.trees : undefined;
    }
    if (parsed.kind === 'since') return checkpointTrees(session, parsed);
    if (parsed.kind === 'session') return session.startTrees;
    return undefined;
  }

  /** The files a target names: every file for the changeset scope, else the one whose id or URIs match. */
  private selectChanges(channel: ChangesetChannel, params: InvokeChangesetOperationParams): FileChange[] {
    const target = params.target;
    if (!target) return [...channel.changes.values()];
    if (typeof target.resource !== 'string' || target.resource.length === 0) throw invalidParams('target.resource must be a file URI of the changeset');
    const direct = channel.changes.get(target.resource);
    if (direct) return [direct];
    for (const [id, change] of channel.changes) {
      const file = channel.files.get(id);
      if (file?.edit.before?.uri === target.resource || file?.edit.after?.uri === target.resource) return [change];
    }
    throw invalidParams(`target.resource: ${target.resource} is not a file of ${params.channel}`);
  }

  private dropTurns(session: RecordingSession, owner: SessionChangesets, keepUpTo: string | null): void {
    const dropped = new Set(session.dropTurnsAfter(keepUpTo).map((t) => t.id));
    for (const [uri, channel] of owner.channels) {
      const p = channel.parsed;
      if (![p.turnId, p.originalTurnId, p.modifiedTurnId].some((id) => id !== undefined && dropped.has(id))) continue;
      for (const key of [...this.status.keys()]) if (key.startsWith(`${uri} `)) this.status.delete(key);
      owner.close(uri);
    }
  }

  private async afterWrite(session: RecordingSession, owner: SessionChangesets): Promise<void> {
    await this.refreshUndo(session);
    await owner.refreshLive();
    const totals = await owner.refreshTotals();
    this.sessions.publishSummaryChange(session, { changes: totals });
  }

  private async lastUndoable(session: RecordingSession): Promise<SafetyRecord | undefined> {
    return historyOf(await session.safety.list()).undoable;
  }

  /** Publishes whether `undo` and `redo` are possible on a session's changesets (for every session added; `service.ts` connects them). */
  async refreshUndo(session: RecordingSession): Promise<void> {
    const history = await session.safety.list().then(historyOf, () => ({ undoable: undefined, redoable: undefined }));
    const available = `${history.undoable !== undefined} ${history.redoable !== undefined}`;
    if (this.undoable.get(session.uri) === available) return;
    this.undoable.set(session.uri, available);
    this.changesets.of(session)?.refreshOperations();
  }

  private statusOf(session: RecordingSession, parsed: ParsedChangesetUri, id: string): OperationStatusInfo {
    const tracked = this.status.get(`${formatChangesetUri(parsed)} ${id}`);
    if (tracked && tracked.status !== 'idle') return tracked;
    if ((id === OperationId.Undo || id === OperationId.Redo) && !this.available(session, id)) return { status: 'disabled' };
    return { status: 'idle' };
  }

  /** From the journal's records when it has read them (a restarted session's first answers are then right), else as last refreshed. */
  private available(session: RecordingSession, id: typeof OperationId.Undo | typeof OperationId.Redo): boolean {
    const known = session.safety.known();
    if (known) {
      const history = historyOf(known);
      return (id === OperationId.Undo ? history.undoable : history.redoable) !== undefined;
    }
    const [undo, redo] = (this.undoable.get(session.uri) ?? 'false false').split(' ');
    return (id === OperationId.Undo ? undo : redo) === 'true';
  }

  private setStatus(owner: SessionChangesets, channel: ChangesetChannel, opId: string, info: OperationStatusInfo): void {
    this.status.set(`${channel.uri} ${opId}`, info);
    owner.setOperationStatus(channel.uri, opId, info);
  }
}

/**
 * What `undo` and `redo` would take, replaying the journal's safety
 * records in order. Every operation that wrote files goes on the undo
 * stack; an undo takes its operation off and goes on the redo stack; a
 * redo takes its undo off the redo stack and goes on the undo stack itself
 * (undoing a redo puts back what the undo left); any other operation
 * empties the redo stack, so redo only ever follows an undo. A stopped
 * operation that put everything back (a `rollback` cancels it) counts as
 * never having run, so an undo that was stopped can be done again.
 */
function historyOf(records: readonly SafetyRecord[]): { undoable?: SafetyRecord; redoable?: SafetyRecord } {
  const rolledBack = new Set(records.filter((r) => r.details.operation === 'rollback').map((r) => r.details.undoes));
  let done: SafetyRecord[] = [];
  let redo: SafetyRecord[] = [];
  for (const r of records) {
    if (r.details.operation === 'rollback' || rolledBack.has(r.index)) continue;
    if (r.details.operation === OperationId.Undo) {
      done = done.filter((d) => d.index !== r.details.undoes);
      redo.push(r);
      continue;
    }
    if (r.details.operation === OperationId.Redo) redo = redo.filter((d) => d.index !== r.details.undoes);
    else redo = [];
    if (r.details.paths.length > 0) done.push(r);
  }
  return { ...(done.length > 0 ? { undoable: done.at(-1)! } : {}), ...(redo.length > 0 ? { redoable: redo.at(-1)! } : {}) };
}

/** Why undo or redo is disabled, in the words a person reads. */
function disabledWhy(id: string): string {
  if (id === OperationId.Undo) return ': there is nothing to undo';
  if (id === OperationId.Redo)
    return ': there is nothing to redo (redo only follows an undo, and a new revert, discard or restore since leaves nothing to redo)';
  return '';
}

/** The timeline line of what an undo (or, for a redo, the undo it takes back) had undone. */
function undoneAction(records: readonly SafetyRecord[], undoes: number, redo: boolean): string | undefined {
  const undone = records.find((r) => r.index === undoes);
  if (!redo || undone?.details.undoes === undefined) return doneBy(records, undone)?.details.action;
  return doneBy(
    records,
    records.find((r) => r.index === undone.details.undoes),
  )?.details.action;
}

/** The operation a record stands for: itself, or for a redo, the revert, discard or restore it did again (through any number of redos). */
function doneBy(records: readonly SafetyRecord[], record: SafetyRecord | undefined): SafetyRecord | undefined {
  for (let hops = 0; record?.details.operation === OperationId.Redo && hops < records.length; hops++) {
    const undo = records.find((r) => r.index === record!.details.undoes);
    record = undo ? records.find((r) => r.index === undo.details.undoes) : undefined;
  }
  return record;
}

/** An operation named as a person would: "the revert of turn 3", "the restore to the start of turn 2". */
function operationNoun(session: RecordingSession, record: SafetyRecord, records?: readonly SafetyRecord[]): string {
  const redone = record.details.operation === OperationId.Redo && records ? doneBy(records, record) : undefined;
  if (redone && redone !== record) return `the redo of ${operationNoun(session, redone)}`;
  const nouns: Record<string, string> = {
    revert: 'the revert',
    discard: 'the discard',
    'restore-checkpoint': 'the restore',
    'restore-checkpoint-and-turns': 'the restore',
    redo: 'the redo',
  };
  const noun = nouns[record.details.operation] ?? 'the last operation';
  const parsed = parseChangesetUri(record.details.changeset);
  if (isChangesetUriError(parsed)) return noun;
  const index = parsed.turnId !== undefined ? session.turns.findIndex((t) => t.id === parsed.turnId) : -1;
  const turn = index >= 0 ? `turn ${index + 1}` : 'a turn';
  const restore = record.details.operation.startsWith('restore');
  switch (parsed.kind) {
    case 'turn':
      return restore ? `${noun} to the start of ${turn}` : `${noun} of ${turn}`;
    case 'step':
      return restore ? `${noun} to before step ${parsed.step} of ${turn}` : `${noun} of step ${parsed.step} of ${turn}`;
    case 'since':
      return `${noun} of the changes since ${turn}`;
    case 'session':
      return `${noun} of the session's changes`;
    case 'uncommitted':
      return `${noun} of uncommitted changes`;
    default:
      return noun;
  }
}

/** "turn 3", by the number people see; the id only for a turn the session no longer lists. */
function turnName(session: RecordingSession, turnId: string): string {
  const turn = session.turn(turnId);
  return turn ? `turn ${turn.index}` : `turn "${turnId}"`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function summary(head: string, plan: Plan): string {
  const parts = [head];
  if (plan.unchanged.length > 0) parts.push(`${plural(plan.unchanged.length, 'file')} already as wanted`);
  if (plan.skipped.length > 0) parts.push(`skipped ${plan.skipped.map((s) => `${s.path} (${s.reason})`).join(', ')}`);
  return parts.join('; ');
}

function restoredText(plan: Plan, label: string): string {
  let text = summary(`Restored ${plural(plan.writes.length, 'file')} to ${label}`, plan);
  if (plan.userEdited.length > 0) {
    text += `; ${plural(plan.userEdited.length, 'file')} had edits no turn made: ${plan.userEdited.join(', ')} (undo brings them back)`;
  }
  return text;
}

function dryRunMeta(plan: Plan): Record<string, unknown> {
  return {
    dryRun: true,
    files: plan.writes.map((w) => ({ path: w.display, action: w.next ? (w.current ? 'write' : 'create') : 'delete' })),
    unchanged: plan.unchanged,
    skipped: plan.skipped,
    conflicts: plan.conflicts,
    userEdited: plan.userEdited,
    userEdits: plan.userEdits ?? [],
  };
}
