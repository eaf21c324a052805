/** The params checks of the `comments/*` methods: the first problem, naming the field, or undefined. */
import { sessionChannel } from '../../protocol/validate/checks.js';
import type { ParamsCheck } from '../method-table.js';
import { anchorProblem, bodyProblem, MAX_COMMENT_PATH, nameProblem } from './stored.js';

function object(params: unknown): Record<string, unknown> | string {
  return typeof params === 'object' && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : 'params must be an object';
}

/** A comment's id: the number the server gave it (`#` allowed in front, as people write it). */
function idProblem(value: unknown): string | undefined {
  return typeof value === 'string' && /^#?[1-9]\d{0,15}$/.test(value) ? undefined : 'params.id must be a comment number such as "3"';
}

export const checkAddComment: ParamsCheck = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  return (
    sessionChannel(p['channel'], 'params.channel') ??
    anchorProblem(p['anchor'], 'params.anchor') ??
    bodyProblem(p['body'], 'params.body') ??
    (p['author'] !== undefined ? nameProblem(p['author'], 'params.author') : undefined)
  );
};

export const checkListComments: ParamsCheck = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  const state = p['state'];
  if (state !== undefined && state !== 'open' && state !== 'resolved' && state !== 'all') return 'params.state must be "open", "resolved" or "all"';
  if (p['path'] !== undefined) {
    const problem = nameProblem(p['path'], 'params.path', MAX_COMMENT_PATH);
    if (problem) return problem;
  }
  if (p['follow'] !== undefined && typeof p['follow'] !== 'boolean') return 'params.follow must be true or false';
  return sessionChannel(p['channel'], 'params.channel');
};

export const checkResolveComment: ParamsCheck = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  const by = p['by'];
  if (by !== undefined && by !== 'reviewer' && by !== 'agent') return 'params.by must be "reviewer" or "agent"';
  return sessionChannel(p['channel'], 'params.channel') ?? idProblem(p['id']) ?? (p['note'] !== undefined ? bodyProblem(p['note'], 'params.note') : undefined);
};

export const checkCommentRef: ParamsCheck = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  return sessionChannel(p['channel'], 'params.channel') ?? idProblem(p['id']);
};
