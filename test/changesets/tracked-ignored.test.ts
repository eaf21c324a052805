/**
 * `uncommitted` on a clean clone whose tracked files an ignore rule matches
 * (added with `git add -f`): nothing is listed, and an edit to such a file
 * is listed as what `git status` calls it, a modification.
 */
import { pathToFileURL } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, type ChangesetState } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { subscribeReady } from '../helpers/changesets.js';
import { serviceForEachTest } from '../helpers/service.js';
import { git, TempDirs, writeFiles } from '../helpers/workspace.js';

const temp = new TempDirs();
let client: TestClient;
let repo: string;
const SID = 'tracked-ignored';

serviceForEachTest(temp, (_s, c) => (client = c));
beforeEach(async () => {
  repo = temp.make();
  git(repo, ['init', '-q', '-b', 'main']);
  writeFiles(repo, { '.gitignore': 'build/\n*.log\n', 'build/t.txt': 'tracked\n', 'a.log': 'tracked log\n', 'src.txt': 'source\n' });
  git(repo, ['add', '.gitignore', 'src.txt']);
  git(repo, ['add', '-f', 'build/t.txt', 'a.log']);
  git(repo, ['commit', '-q', '-m', 'initial']);
  await client.request('createSession', { channel: `ahp-session:/${SID}`, workingDirectory: pathToFileURL(repo).href });
});

describe('uncommitted with tracked files an ignore rule matches', () => {
  it('lists nothing on a clean clone, and an edit to one as modified, like git status', async () => {
    const uri = changesetUriTemplate(SID, 'uncommitted');
    expect((await subscribeReady(client, uri)).files).toEqual([]);
    expect(git(repo, ['status', '--porcelain'])).toBe('');

    const listed = client.waitForEnvelope((e) => e.channel === uri && e.action.type === 'changeset/fileSet', 20_000);
    writeFiles(repo, { 'build/t.txt': 'edited\n', 'build/new.txt': 'untracked, ignored\n' });
    expect(git(repo, ['status', '--porcelain'])).toBe('M build/t.txt');
    await listed;
    const state = client.state<ChangesetState>(uri)!;
    expect(state.files.map((f) => [(f._meta as { path: string }).path, (f._meta as { kind?: string }).kind])).toEqual([['build/t.txt', 'modified']]);
  });
});
