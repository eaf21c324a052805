export {
  findServerFor,
  isProcessAlive,
  listServers,
  removeServerEntry,
  removeServerEntrySync,
  writeServerEntry,
  type ServerEntry,
} from './server-registry.js';
