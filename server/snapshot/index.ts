/**
 * The snapshot engine: captures a workspace as git trees at the start and end
 * of each agent turn, byte-identical to `git add -A && git write-tree`, without
 * writing into the user's repository. See docs/snapshot.md.
 */
export {
  fileSystemClock,
  unreadFiles,
  WorkspaceSnapshotter,
  type NestedSnapshot,
  type SnapshotOptions,
  type SnapshotResult,
} from './workspace-snapshotter.js';
export type { ListingSource } from './given-listings.js';
export type { SnapshotHooks, SnapshotWarning, UnreadFile, UnreadReason } from './walker.js';
export { findGitRepository, readHeadCommit, resolveDotGit, resolveRef, type GitRepositoryLocation } from './git-repository.js';
export { BUILTIN_EXCLUDES, DEFAULT_NON_REPO_MAX_FILE_BYTES } from './builtin-excludes.js';
export { EMPTY_TREE_OID, hashObject } from './git-objects.js';
export type { GitEnvironment } from './git-config.js';
export { checkoutConversion, unrunFilters, workingTreeContent, type CheckoutConversion } from './working-tree-content.js';
