/**
 * Operations that say what they will do: the dry run shown before the user
 * agrees (files written, created or deleted; files with edits no turn made,
 * when they were made and what becomes of them; conflicts that stop it), the reason a button is
 * disabled while a turn is recorded, turns named by number and title instead
 * of their ids, and `code` in server texts shown as code, not backticks.
 */
import type { ChangesetOperation, ChangesetOperationTarget, OperationConflictData, OperationInvocationMeta, URI } from '../../protocol/index.js';
import type { App } from './app.js';
import { firstLine, timelineOf } from './state/timeline.js';
import { h, type Child } from './dom.js';
import { RpcError } from './rpc.js';

/** What a dry run reports (`InvokeChangesetOperationResult._meta` with `dryRun: true`). */
export interface DryRun {
  files: { path: string; action: 'write' | 'create' | 'delete' }[];
  unchanged: string[];
  skipped: { path: string; reason: string }[];
  conflicts: { path: string; reason: string }[];
  userEdited: string[];
  /** The same files, each with when those edits were made and what the operation does with them. */
  userEdits: { path: string; reason: string }[];
  /** True for a restore, which overwrites every file it writes. */
  overwrites?: boolean;
  /** Why the operation cannot run now, when the dry run was refused for another reason than conflicts. */
  refused?: string;
}

/** Text with `code` spans as `<code>` elements (the page renders no HTML from the server). */
export function inlineText(text: string): Node[] {
  const out: Node[] = [];
  const parts = text.split(/(`[^`]+`)/);
  for (const part of parts) {
    if (part.length === 0) continue;
    out.push(part.startsWith('`') && part.endsWith('`') && part.length > 2 ? h('code', {}, part.slice(1, -1)) : document.createTextNode(part));
  }
  return out;
}

/** A turn as people know it: `turn 3 “Fix the parser”`. */
export function turnName(app: App, turnId: string): string {
  const chat = app.chat;
  const turns = chat?.turns ?? [];
  const at = turns.findIndex((t) => t.id === turnId);
  const active = chat?.activeTurn?.id === turnId ? chat.activeTurn : undefined;
  const number = at >= 0 ? at + 1 : active ? turns.length + 1 : undefined;
  if (number === undefined) return `turn ${turnId}`;
  const stats = timelineOf(app.session).turns?.[turnId];
  const title = (stats?.automatic ? stats.title : undefined) || firstLine((at >= 0 ? turns[at] : active)?.message.text);
  return title ? `turn ${number} “${title}”` : `turn ${number}`;
}

/** A server message with every known turn id (quoted or bare) replaced by the turn's number and title. */
export function nameTurns(app: App, text: string): string {
  const chat = app.chat;
  const ids = [...(chat?.turns ?? []).map((t) => t.id), ...(chat?.activeTurn ? [chat.activeTurn.id] : [])];
  let out = text;
  for (const id of ids.sort((a, b) => b.length - a.length)) {
    if (id.length === 0) continue;
    const name = turnName(app, id);
    // Server texts quote ids; bare ids are left alone (a short id could be part of a word or a path).
    out = out.split(`turn "${id}"`).join(name).split(`"${id}"`).join(name).split(`turn ${id} `).join(`${name} `);
  }
  // The server names turns by number ("the start of turn 2"): the page adds the title, as it does everywhere.
  const turns = chat?.turns ?? [];
  return out.replace(/\bturn (\d+)\b(?! “)/g, (said, n: string) => {
    const turn = turns[Number(n) - 1];
    return turn ? turnName(app, turn.id) : said;
  });
}

/** Why operations cannot run now (a turn is being recorded), or undefined. */
export function busyReason(app: App): string | undefined {
  const active = app.chat?.activeTurn;
  if (!active) return undefined;
  return `Waiting for ${turnName(app, active.id)} to finish recording; operations run once it ends.`;
}

/** What the open changeset is, for "Revert …?" headings of changeset-wide operations. */
export function openSubject(app: App): string {
  const open = app.open;
  if (!open) return '';
  if (open.changeKind === 'turn' && app.openTurnId !== undefined) return turnName(app, app.openTurnId);
  if (open.changeKind === 'compare-turns') return open.label.replace(/^Compare: /, 'the changes from ');
  if (open.changeKind === 'session') return 'every change of this session';
  return open.label;
}

/** Asks the server what an operation would do, without doing it. */
export async function dryRun(
  app: App,
  channel: URI,
  op: ChangesetOperation,
  target: ChangesetOperationTarget | undefined,
  meta?: OperationInvocationMeta,
): Promise<DryRun> {
  const empty: DryRun = {
    files: [],
    unchanged: [],
    skipped: [],
    conflicts: [],
    userEdited: [],
    userEdits: [],
    ...(op.id.startsWith('restore-checkpoint') ? { overwrites: true } : {}),
  };
  try {
    const result = await app.client.request('invokeChangesetOperation', {
      channel,
      operationId: op.id,
      ...(target ? { target } : {}),
      _meta: { ...meta, dryRun: true },
    });
    const done = result._meta;
    return { ...empty, ...(done && 'dryRun' in done ? done : {}) };
  } catch (error) {
    const conflicts = error instanceof RpcError ? (error.data as Partial<OperationConflictData> | undefined)?.conflicts : undefined;
    if (conflicts && conflicts.length > 0) return { ...empty, conflicts };
    return { ...empty, refused: nameTurns(app, (error as Error).message) };
  }
}

const ACTION = { write: 'changes', create: 'is created', delete: 'is deleted' } as const;

function list(title: string, items: Child[][], tone?: string): HTMLElement {
  return h(
    'section',
    { class: ['preview-group', tone] },
    h('h3', {}, title),
    h(
      'ul',
      {},
      items.map((nodes) => h('li', {}, nodes)),
    ),
  );
}

/** The dry run as the confirmation shows it. */
export function previewNodes(preview: DryRun): HTMLElement {
  const parts: HTMLElement[] = [];
  if (preview.refused) parts.push(h('p', { class: 'preview-refused', role: 'alert' }, preview.refused));
  if (preview.conflicts.length > 0) {
    parts.push(
      list(
        `Conflicts — nothing will be written (${preview.conflicts.length})`,
        preview.conflicts.map((c) => [h('code', {}, c.path), ` — ${c.reason}`]),
        'conflict',
      ),
    );
  }
  // Each file with when its edits no turn made were made and what becomes of them (a server that gives only the names: the names).
  const userEdits = preview.userEdits.length > 0 ? preview.userEdits : preview.userEdited.map((path) => ({ path, reason: '' }));
  if (userEdits.length > 0) {
    parts.push(
      list(
        `Edits no turn made${preview.overwrites ? ' that will be overwritten' : ''} (${userEdits.length})`,
        userEdits.map((e) => [h('code', {}, e.path), ...(e.reason ? [` — ${e.reason}`] : [])]),
        'user-edited',
      ),
    );
  }
  if (preview.files.length > 0)
    parts.push(
      list(
        `Files that change (${preview.files.length})`,
        preview.files.map((f) => [h('code', {}, f.path), ` ${ACTION[f.action] ?? f.action}`]),
      ),
    );
  else if (!preview.refused && preview.conflicts.length === 0) parts.push(h('p', {}, 'No file would change.'));
  if (preview.unchanged.length > 0) parts.push(h('p', { class: 'note' }, `${preview.unchanged.length} already as wanted.`));
  if (preview.skipped.length > 0)
    parts.push(
      list(
        `Left alone (${preview.skipped.length})`,
        preview.skipped.map((s) => [h('code', {}, s.path), ` — ${s.reason}`]),
      ),
    );
  return h('div', { class: 'preview', id: 'confirm-preview' }, parts);
}

/** Whether the user can go ahead after this dry run. */
export function canProceed(preview: DryRun): boolean {
  return preview.refused === undefined && preview.conflicts.length === 0;
}

/** Notices belong to the action that raised them: the next click or key elsewhere clears them. */
export function installNoticeClearing(app: App): void {
  const clear = (event: Event): void => {
    if (!app.notice) return;
    const target = event.target as Node | null;
    if (target && document.getElementById('notice')?.contains(target)) return;
    if (event instanceof KeyboardEvent && ['Shift', 'Control', 'Alt', 'Meta', 'Tab'].includes(event.key)) return;
    app.notice = undefined;
    app.invalidate('status');
  };
  document.addEventListener('pointerdown', clear, { capture: true });
  document.addEventListener('keydown', clear, { capture: true });
}
