/**
 * The recorded turns the docs' screenshots show. The browser tests check
 * these same scenes, so a screenshot (`npm run screenshots`) shows what a
 * test asserts.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import type { Locator, Page } from 'playwright-core';
import { createSession, openViewer, recordTurn, type ViewerFixture } from './viewer-harness.js';

const BODY = Array.from({ length: 14 }, (_, i) => `  const step${i} = input * ${i + 1};`);
const APP_BEFORE = [
  'export function greet(name: string): string {',
  "  return 'Hello, ' + name;",
  '}',
  '',
  'export function compute(input: number): number {',
  ...BODY,
  '  return step13;',
  '}',
  '',
  'export const answer = 41;',
  '',
].join('\n');
const APP_AFTER = APP_BEFORE.replace("  return 'Hello, ' + name;", '  return `Hello, ${name}!`;').replace('answer = 41', 'answer = 42');

/**
 * Session `demo`, turn `t1`: five files (a modified source file with two
 * hunks, a new file, a deleted one, a binary and one in a subdirectory).
 */
export async function recordDemoTurn(fx: ViewerFixture): Promise<void> {
  const repo = makeRepo(fx.temp.make(), {
    'src/app.ts': APP_BEFORE,
    'src/util/math.ts': 'export const add = (a: number, b: number) => a + b;\n',
    'old.txt': 'obsolete\n',
    'logo.bin': Buffer.from([0, 1, 2, 3]),
    'README.md': '# Demo\n',
  });
  const session = await createSession(fx.server.client, 'demo', repo);
  await recordTurn(fx.server.client, session, 't1', 'Make greet friendlier and fix the answer', () => {
    writeFiles(repo, {
      'src/app.ts': APP_AFTER,
      'src/util/math.ts': 'export const add = (a: number, b: number): number => a + b;\nexport const sub = (a: number, b: number): number => a - b;\n',
      'docs/guide.md': '# Guide\n\nHow to greet.\n',
      'logo.bin': Buffer.from([0, 9, 9, 9]),
    });
    rmSync(join(repo, 'old.txt'));
  });
}

const SERVER_TS = [
  "import { createServer } from 'node:http';",
  '',
  '/** Answers every request with a greeting. */',
  'export function start(port: number): void {',
  '  const server = createServer((req, res) => {',
  "    res.writeHead(200, { 'content-type': 'text/plain' });",
  "    res.end('Hello');",
  '  });',
  '  server.listen(port);',
  '}',
  '',
].join('\n');

/** Session `shots`, turn `t1`: TypeScript, JSON and Markdown changes, for syntax colours. */
export async function recordThemeTurn(fx: ViewerFixture): Promise<void> {
  const repo = makeRepo(fx.temp.make(), { 'src/server.ts': SERVER_TS, 'src/config.json': '{\n  "port": 8080\n}\n', 'README.md': '# Demo\n\nRun it.\n' });
  const session = await createSession(fx.server.client, 'shots', repo);
  await recordTurn(fx.server.client, session, 't1', 'Greet by name and make the port configurable', () =>
    writeFiles(repo, {
      'src/server.ts': SERVER_TS.replace('export function start(port: number): void {', "export function start(port: number, name = 'world'): void {")
        .replace("res.end('Hello');", 'res.end(`Hello, ${name}!`);')
        .replace('server.listen(port);', 'server.listen(port, () => console.log(`listening on ${port}`));'),
      'src/config.json': '{\n  "port": 8080,\n  "name": "reviewer"\n}\n',
      'src/names.ts': "export const names = ['Ada', 'Grace'];\nexport const pick = (i: number): string => names[i % names.length]!;\n",
      'README.md': '# Demo\n\nRun it with `npm start`.\n',
    }),
  );
}

/** Records the theme turn and opens its review page at `src/server.ts`, coloured, with no focus ring on the file's tick. */
export async function openThemeReview(fx: ViewerFixture): Promise<{ page: Page; errors: string[] }> {
  await recordThemeTurn(fx);
  const opened = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=shots&turn=t1&file=src/server.ts`, { width: 1500, height: 820 });
  const file = opened.page.locator('.rv-file[data-path="src/server.ts"]');
  await file.locator('.hljs-keyword').first().waitFor();
  await file.locator('.rv-viewed').evaluate((el) => (el as unknown as { blur(): void }).blur());
  return opened;
}

/** Scrolls the review page to its top and waits until the other files are drawn and coloured too. */
export async function showReviewTop(page: Page): Promise<void> {
  await page.locator('#review').evaluate((el) => {
    el.scrollTop = 0;
  });
  await page.locator('.rv-file[data-path="src/names.ts"] .hljs-string').first().waitFor();
  await page.locator('.rv-file[data-path="README.md"] .rl.add').first().waitFor();
}

/** The colour a highlighted token is drawn in now. */
export function colourOf(token: Locator): Promise<string> {
  return token.evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color);
}

const GREET_BEFORE = [
  '/** Greets people by name. */',
  'export function greet(name: string): string {',
  "  return 'Hello, ' + name;",
  '}',
  '',
  'export function farewell(name: string): string {',
  "  return 'Bye, ' + name;",
  '}',
  '',
].join('\n');

/**
 * Session `blame`, for the blame gutter: `src/greet.ts` committed before
 * recording; turn `t1` ("Make greet friendlier", one Edit) rewrites line 3;
 * the user rewrites line 7 by hand; turn `t2` ("Add a shout helper", one
 * Write) appends lines 9–12.
 */
export async function recordBlameScene(fx: ViewerFixture): Promise<void> {
  const repo = makeRepo(fx.temp.make(), { 'src/greet.ts': GREET_BEFORE });
  const client = fx.server.client;
  const session = await createSession(client, 'blame', repo);
  const turn = async (turnId: string, message: string, tool: string, text: string) => {
    await client.request('harness/turnStarted', { channel: session, turnId, message }, { timeoutMs: 60_000 });
    await client.request('harness/beforeEdit', { channel: session, turnId, paths: ['src/greet.ts'], tool }, { timeoutMs: 60_000 });
    writeFiles(repo, { 'src/greet.ts': text });
    await client.request('harness/turnEnded', { channel: session, turnId }, { timeoutMs: 60_000 });
  };
  const friendlier = GREET_BEFORE.replace("  return 'Hello, ' + name;", '  return `Hello, ${name}!`;');
  await turn('t1', 'Make greet friendlier', 'Edit', friendlier);
  const byHand = friendlier.replace("  return 'Bye, ' + name;", '  return `Goodbye, ${name}.`;');
  writeFiles(repo, { 'src/greet.ts': byHand });
  await turn('t2', 'Add a shout helper', 'Write', `${byHand}\nexport function shout(name: string): string {\n  return greet(name).toUpperCase();\n}\n`);
}
