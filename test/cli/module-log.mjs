// Loaded with `node --import`: appends the URL of every module the process loads to the file named by
// CHANGESET_SERVER_TEST_MODULE_LOG, so a test can check what a command pays for at start-up.
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
let log;
export function initialize(data) { log = data.log; }
export async function load(url, context, next) {
  appendFileSync(log, url + '\\n');
  return next(url, context);
}
`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { log: process.env.CHANGESET_SERVER_TEST_MODULE_LOG } });
