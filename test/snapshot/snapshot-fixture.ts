import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkspaceSnapshotter, type SnapshotOptions } from '../../server/snapshot/index.js';
import { DirectoryWatcher } from '../../server/watch/directory-watcher.js';
import { WatchFeed } from '../../server/watch/watch-feed.js';
import { git, gitEnv, initRepo, removeDir, tempDir } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';

/**
 * Workspaces and snapshotters for the git-identity tests, which run every
 * test twice: walking the tree at each snapshot, and fed by a real file
 * watcher. `cleanup()` after each test stops the watchers and removes the
 * directories.
 */
export class SnapshotFixture {
  /** Whether snapshotters made now are fed by a file watcher. */
  watching = false;
  private readonly dirs: string[] = [];
  private readonly watches: (() => Promise<void>)[] = [];

  /** A fresh git repository and a cache directory beside it. */
  workspace(): { root: string; cacheDir: string } {
    const base = tempDir();
    this.dirs.push(base);
    const root = join(base, 'ws');
    initRepo(root);
    return { root, cacheDir: join(base, 'cache') };
  }

  /**
   * A fresh workspace holding a copy of the repository at `template`, made
   * in a fraction of the time writing and adding thousands of files takes:
   * every file is a hard link to the template's, except `ownCopies`, which
   * get an inode of their own (write to a file in place or change its mode
   * only if it is listed there; removing, renaming or replacing any file is
   * fine). The index's stat data is then refreshed to the copy, so its
   * entries match the files as they would in a repository made there.
   */
  linkedCopy(template: string, ownCopies: readonly string[] = []): { root: string; cacheDir: string } {
    const base = tempDir();
    this.dirs.push(base);
    const root = join(base, 'ws');
    execFileSync('cp', ['-al', template, root]);
    for (const rel of ownCopies) {
      const path = join(root, rel);
      copyFileSync(path, `${path}.own`);
      renameSync(`${path}.own`, path);
    }
    git(root, ['update-index', '-q', '--refresh']);
    return { root, cacheDir: join(base, 'cache') };
  }

  snapshotter(root: string, cacheDir: string, store = new MemoryObjectStore(), more: Partial<SnapshotOptions> = {}): WorkspaceSnapshotter {
    const opts: SnapshotOptions = { root, cacheDir, store, env: { HOME: gitEnv.HOME, XDG_CONFIG_HOME: gitEnv.XDG_CONFIG_HOME }, ...more };
    if (this.watching && existsSync(root)) {
      const watcher = DirectoryWatcher.acquire(realpathSync(root));
      const feed = new WatchFeed(watcher);
      this.watches.push(async () => {
        feed.close();
        await watcher.release();
      });
      opts.changes = feed;
    }
    return new WorkspaceSnapshotter(opts);
  }

  async cleanup(): Promise<void> {
    while (this.watches.length) await this.watches.pop()!();
    while (this.dirs.length) removeDir(this.dirs.pop()!);
  }
}

/** Writes a file under `root`, making its directories. */
export function write(root: string, rel: string, content: string | Buffer): void {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, content);
}
