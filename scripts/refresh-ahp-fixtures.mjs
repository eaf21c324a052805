#!/usr/bin/env node
// Refreshes the pinned AHP test fixtures in test/fixtures/ahp/ from a checkout
// of the AHP specification repository:
//
//   npm run refresh-ahp-fixtures -- <path to an AHP checkout> [--add-new]
//
// Copies the JSON Schemas (schema/*.schema.json), the LICENSE, and the
// reducer and round-trip fixtures (test-cases/ or types/test-cases/). Only the
// fixtures already pinned are refreshed: the specification covers channels
// this server does not serve (terminals, tool calls…), so a new fixture is
// listed, and copied only with --add-new, for someone to look at. A pinned
// fixture that the checkout no longer has is removed. The spec's prose is not
// copied: the docs link to it.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const target = join(root, 'test', 'fixtures', 'ahp');

/** The reducers this project ships (reducers/index.ts): only their fixtures can apply. */
const OUR_REDUCERS = new Set(['root', 'session', 'chat', 'changeset']);

const args = process.argv.slice(2);
const addNew = args.includes('--add-new');
const positional = args.filter((a) => !a.startsWith('--'));
if (positional.length !== 1 || args.some((a) => a.startsWith('--') && a !== '--add-new')) {
  console.error('Usage: npm run refresh-ahp-fixtures -- <path to an AHP checkout> [--add-new]');
  process.exit(2);
}
const source = positional[0];

function fail(message) {
  console.error(`refresh-ahp-fixtures: ${message}`);
  process.exit(1);
}

const schemaSource = join(source, 'schema');
const testCaseSource = [join(source, 'test-cases'), join(source, 'types', 'test-cases')].find((d) => existsSync(join(d, 'reducers')));
if (!existsSync(schemaSource)) fail(`no schema/ folder in ${source}`);
if (!testCaseSource) fail(`no test-cases/reducers/ (or types/test-cases/reducers/) folder in ${source}`);
if (!existsSync(join(source, 'LICENSE'))) fail(`no LICENSE in ${source}`);

const jsonFiles = (dir) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
    : [];

/** Reads a JSON file, failing with its name if it does not parse. */
function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    fail(`${file}: ${err.message}`);
  }
}

// Files are read and written rather than copied, so read-only sources do not
// leave read-only files behind in the checkout.
function copy(from, to) {
  mkdirSync(dirname(to), { recursive: true });
  writeFileSync(to, readFileSync(from));
}

const report = [];

// Schemas: the whole set, replacing what was there.
const schemas = jsonFiles(schemaSource).filter((f) => f.endsWith('.schema.json'));
if (schemas.length === 0) fail(`no *.schema.json in ${schemaSource}`);
for (const f of jsonFiles(join(target, 'schema'))) if (!schemas.includes(f)) rmSync(join(target, 'schema', f));
for (const f of schemas) {
  readJson(join(schemaSource, f));
  copy(join(schemaSource, f), join(target, 'schema', f));
}
report.push(`schema: ${schemas.length} files`);

copy(join(source, 'LICENSE'), join(target, 'LICENSE'));

/** Whether a fixture the checkout has but we do not pin could apply here. */
const applies = {
  reducers: (fixture) => OUR_REDUCERS.has(fixture.reducer),
  'round-trips': () => true,
};

for (const kind of ['reducers', 'round-trips']) {
  const from = join(testCaseSource, kind);
  const to = join(target, 'test-cases', kind);
  const available = jsonFiles(from);
  const pinned = jsonFiles(to);
  let refreshed = 0;
  const gone = [];
  const fresh = [];
  for (const f of pinned) {
    if (available.includes(f)) {
      readJson(join(from, f));
      copy(join(from, f), join(to, f));
      refreshed++;
    } else {
      rmSync(join(to, f));
      gone.push(f);
    }
  }
  for (const f of available) {
    if (pinned.includes(f) || !applies[kind](readJson(join(from, f)))) continue;
    fresh.push(f);
    if (addNew) copy(join(from, f), join(to, f));
  }
  report.push(`test-cases/${kind}: ${refreshed} refreshed`);
  if (gone.length > 0) report.push(`  removed (no longer in the checkout): ${gone.join(', ')}`);
  if (fresh.length > 0) report.push(`  ${addNew ? 'added' : 'not pinned (add with --add-new)'}: ${fresh.join(', ')}`);
}

console.log(`Refreshed ${relative(root, target)}/ from ${source}`);
for (const line of report) console.log(`  ${line}`);
console.log('Check the protocol version in test/fixtures/ahp/README.md, then run the protocol and reducer tests.');
