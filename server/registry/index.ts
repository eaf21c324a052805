export {
  findServerFor,
  isProcessAlive,
  listServers,
  registryDir,
  removeServerEntry,
  removeServerEntrySync,
  writeServerEntry,
  type ServerEntry,
} from './server-registry.js';
