/** Reducer for `ahp-changeset:/<id>` (AHP 0.6 `guide/changesets.md`). */

import { produce } from 'immer';
import type { ChangesetAction, ChangesetState } from '../protocol/index.js';
import type { UnknownAction } from './types.js';

/** Applies one changeset action; unknown types and no-op actions return `state` itself. */
export function changesetReducer(state: ChangesetState, action: ChangesetAction | UnknownAction): ChangesetState {
  const known = action as ChangesetAction;
  return produce(state, (draft) => {
    switch (known.type) {
      case 'changeset/statusChanged':
        draft.status = known.status;
        // An error only accompanies the `error` status; any other transition drops a stale one.
        if (known.status === 'error' && known.error != null) draft.error = known.error;
        else delete draft.error;
        break;

      case 'changeset/fileSet': {
        const index = draft.files.findIndex((f) => f.id === known.file.id);
        if (index < 0) draft.files.push(known.file);
        else draft.files[index] = known.file;
        break;
      }

      case 'changeset/fileRemoved': {
        const index = draft.files.findIndex((f) => f.id === known.fileId);
        if (index >= 0) draft.files.splice(index, 1);
        break;
      }

      case 'changeset/filesReviewChanged': {
        const ids = new Set(known.files);
        for (const file of draft.files) {
          if (ids.has(file.id) && file.reviewed !== known.reviewed) file.reviewed = known.reviewed;
        }
        break;
      }

      case 'changeset/contentChanged':
        draft.files = known.files;
        if (known.operations != null) draft.operations = known.operations;
        if (known.error != null) draft.error = known.error;
        else delete draft.error;
        if (known._meta != null) draft._meta = known._meta;
        else delete draft._meta;
        break;

      case 'changeset/operationsChanged':
        if (known.operations != null) draft.operations = known.operations;
        else delete draft.operations;
        break;

      case 'changeset/operationStatusChanged': {
        const operation = draft.operations?.find((o) => o.id === known.operationId);
        if (!operation) break;
        operation.status = known.status;
        if (known.status === 'error' && known.error != null) operation.error = known.error;
        else delete operation.error;
        break;
      }

      case 'changeset/cleared':
        if (draft.files.length > 0) draft.files = [];
        break;
    }
  });
}
