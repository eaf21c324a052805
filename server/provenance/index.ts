/**
 * Line provenance (`provenance/lines`): who last wrote each line of a file,
 * read from a session's record. See docs/provenance.md.
 */
import { sessionFileParamsProblem } from '../../protocol/validate/checks.js';
import type { MethodTable } from '../method-table.js';
import type { SessionManager } from '../session/session-manager.js';
import { lineProvenance } from './line-provenance.js';

export { lineProvenance } from './line-provenance.js';

/** The `provenance/lines` method. */
export function provenanceMethods(sessions: SessionManager): MethodTable {
  return {
    'provenance/lines': { request: (params) => lineProvenance(sessions, params), check: checkProvenanceParams },
  };
}

/** Checks `provenance/lines`'s params: the first problem, or undefined. */
export function checkProvenanceParams(params: unknown): string | undefined {
  const problem = sessionFileParamsProblem(params);
  if (problem !== undefined) return problem;
  const p = params as Record<string, unknown>;
  const changeset = p['changeset'];
  if (changeset !== undefined && (typeof changeset !== 'string' || !changeset.startsWith('ahp-changeset:')))
    return 'params.changeset must be a changeset URI (ahp-changeset:/…)';
  const side = p['side'];
  if (side !== undefined && side !== 'before' && side !== 'after') return "params.side must be 'before' or 'after'";
  for (const name of ['startLine', 'endLine'] as const) {
    const value = p[name];
    if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < 1)) return `params.${name} must be an integer from 1`;
  }
  if (typeof p['startLine'] === 'number' && typeof p['endLine'] === 'number' && p['endLine'] < p['startLine'])
    return 'params.endLine must not be less than params.startLine';
  return undefined;
}
