import { basename } from 'node:path';
import { changesetUriTemplate, type Changeset, type ChangesetKindName } from '../../protocol/index.js';
import type { RecordingSession } from '../session/recording-session.js';
import { findBaseBranch } from './git-base.js';

const LABELS: Record<ChangesetKindName, string> = {
  session: 'Session Changes',
  turn: 'Turn Changes',
  'compare-turns': 'Compare Turns',
  uncommitted: 'Uncommitted Changes',
  branch: 'Branch Changes',
  step: 'Step Changes',
  since: 'Changes Since Checkpoint',
};

/** The changeset catalogue of a session (`SessionState.changesets`). Every entry is reviewable. */
export function catalogueFor(session: RecordingSession): Changeset[] {
  const entries: Changeset[] = [];
  const roots = session.files.list();
  const multiRoot = roots.length > 1;
  const add = (kind: ChangesetKindName, description: string, dir?: number) => {
    const scope = dir === undefined ? '' : ` (${basename(roots[dir]!.dir)})`;
    entries.push({
      label: LABELS[kind] + scope,
      uriTemplate: changesetUriTemplate(session.id, kind, dir),
      description,
      changeKind: kind,
      capabilities: { review: {} },
    });
  };
  add('session', 'Everything changed since the session began.');
  add('turn', 'What one turn changed.');
  add('compare-turns', 'The difference between the end states of two turns.');
  add('step', 'What one tool call of a turn changed (step 1 is its first tool call).');
  add('since', "A checkpoint (a turn's start, or the moment before one of its tool calls) → the working tree now.");
  const gitRoots = roots.map((r, i) => ({ root: r, i })).filter(({ root }) => root.repository);
  if (gitRoots.length > 0) {
    add('uncommitted', 'Working tree changes against HEAD (the index is not consulted).');
    const bases = gitRoots.map(({ root }) => findBaseBranch(root.repository!)).filter((b) => b !== undefined);
    if (bases.length > 0) add('branch', `Changes since the merge-base with ${[...new Set(bases.map((b) => b.name))].join(', ')}.`);
  }
  if (multiRoot) {
    roots.forEach((root, i) => {
      add('session', `Everything changed in ${root.dir} since the session began.`, i);
      add('turn', `What one turn changed in ${root.dir}.`, i);
      if (root.repository) {
        add('uncommitted', `Working tree changes against HEAD in ${root.dir}.`, i);
        const base = findBaseBranch(root.repository);
        if (base) add('branch', `Changes in ${root.dir} since the merge-base with ${base.name}.`, i);
      }
    });
  }
  return entries;
}
