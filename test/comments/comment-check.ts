/**
 * What the scripted client checks of every message in the comments tests:
 * AHP's own messages against the pinned AHP schemas (`schemaCheck`), and
 * this server's `comments/*` results and `comments/changed` notifications
 * against the extension's contract (`protocol/extensions/comments.ts`).
 */
import { type InboundMessageCheck, schemaCheck } from '../helpers/client.js';

type Problems = string[];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function position(v: unknown, at: string, out: Problems): void {
  if (v === null) return;
  if (!isRecord(v) || typeof v['path'] !== 'string' || !Number.isInteger(v['startLine']) || !Number.isInteger(v['endLine'])) out.push(`${at}: not a position`);
}

/** The problems of one `ReviewComment`. */
export function commentProblems(v: unknown, at = 'comment'): Problems {
  const out: Problems = [];
  if (!isRecord(v)) return [`${at}: not an object`];
  for (const key of ['id', 'channel', 'body', 'author']) if (typeof v[key] !== 'string') out.push(`${at}.${key}: not a string`);
  if (typeof v['createdAt'] !== 'number') out.push(`${at}.createdAt: not a number`);
  if (v['state'] !== 'open' && v['state'] !== 'resolved') out.push(`${at}.state: ${String(v['state'])}`);
  if (v['turn'] !== undefined && !Number.isInteger(v['turn'])) out.push(`${at}.turn: not a number`);
  const anchor = v['anchor'];
  if (!isRecord(anchor)) out.push(`${at}.anchor: not an object`);
  else if (anchor['kind'] === 'turn') {
    if (typeof anchor['turnId'] !== 'string') out.push(`${at}.anchor.turnId: not a string`);
    if (v['code'] !== undefined || v['now'] !== undefined) out.push(`${at}: a turn comment with lines`);
  } else if (anchor['kind'] === 'lines') {
    if (typeof anchor['changeset'] !== 'string' || typeof anchor['path'] !== 'string') out.push(`${at}.anchor: no changeset or path`);
    if (anchor['side'] !== 'before' && anchor['side'] !== 'after') out.push(`${at}.anchor.side: ${String(anchor['side'])}`);
    if (!Number.isInteger(anchor['startLine']) || !Number.isInteger(anchor['endLine'])) out.push(`${at}.anchor: no lines`);
    if (!Array.isArray(v['code']) || !(v['code'] as unknown[]).every((l) => typeof l === 'string')) out.push(`${at}.code: not lines`);
    if (!('now' in v)) out.push(`${at}.now: missing`);
    position(v['now'], `${at}.now`, out);
  } else out.push(`${at}.anchor.kind: ${String(anchor['kind'])}`);
  const r = v['resolution'];
  if (r !== undefined && (!isRecord(r) || (r['by'] !== 'reviewer' && r['by'] !== 'agent') || typeof r['at'] !== 'number'))
    out.push(`${at}.resolution: malformed`);
  if ((r !== undefined) !== (v['state'] === 'resolved')) out.push(`${at}: resolution and state disagree`);
  const known = ['id', 'channel', 'anchor', 'turn', 'body', 'author', 'createdAt', 'state', 'code', 'now', 'resolution'];
  for (const key of Object.keys(v)) if (!known.includes(key)) out.push(`${at}.${key}: not in the contract`);
  return out;
}

/** `schemaCheck` for AHP's messages; the extension's contract for the comments' own. */
export const commentsCheck: InboundMessageCheck = (message, requestMethod) => {
  const m = message as Record<string, unknown>;
  if (m['method'] === 'comments/changed') {
    const p = m['params'];
    if (!isRecord(p) || typeof p['channel'] !== 'string') return ['comments/changed: no channel'];
    if ((p['comment'] === undefined) === (p['deleted'] === undefined)) return ['comments/changed: needs exactly one of comment and deleted'];
    return p['comment'] !== undefined
      ? commentProblems(p['comment'], 'comments/changed.comment')
      : typeof p['deleted'] === 'string'
        ? []
        : ['deleted: not a string'];
  }
  if (requestMethod?.startsWith('comments/') && 'result' in m) {
    const result = m['result'];
    if (requestMethod === 'comments/delete') return result === null ? [] : ['comments/delete: result must be null'];
    if (requestMethod === 'comments/list') {
      if (!isRecord(result) || !Array.isArray(result['comments'])) return ['comments/list: no comments'];
      return (result['comments'] as unknown[]).flatMap((c, i) => commentProblems(c, `comments[${i}]`));
    }
    return commentProblems(result, requestMethod);
  }
  return schemaCheck(message, requestMethod);
};
