import type { ChangesetFile, ChangesetState } from '../../protocol/index.js';
import type { ChannelStore } from '../../server/channels/channel-store.js';

/** A changeset file entry for file:///w/<name>. */
export function file(name: string): ChangesetFile {
  const uri = `file:///w/${name}`;
  return {
    id: uri,
    edit: {
      before: { uri, content: `test-content:/before/${name}` },
      after: { uri, content: `test-content:/after/${name}` },
      diff: { added: 1, removed: 1 },
    },
  };
}

/** Creates a ready changeset channel holding `names` directly through the store. */
export function createChangeset(store: ChannelStore, uri: string, names: string[], reviewable: boolean): void {
  const state: ChangesetState = { status: 'ready', files: names.map(file) };
  store.createChannel(uri, 'changeset', state, { reviewable });
}
