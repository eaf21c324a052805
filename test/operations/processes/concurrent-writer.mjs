// A second process that edits files the way people and editors do, while
// the server runs an operation: each command line on stdin says which files,
// after how long, how many writes and how far apart. With `startWhen`
// ({ path, differsFrom }) the delay counts from the moment that file's content
// stops being `differsFrom` (the operation wrote it), so the saves land in the
// middle of the operation's writes every time, not by luck. Every completed
// write is reported on stdout (path and content), then `{"done":true}`.
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pick = (list) => list[Math.floor(Math.random() * list.length)];

/** Resolves once the file at `path` holds something other than `content` (a file being swapped is briefly absent: not yet). */
async function changed(path, content) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if (readFileSync(path, 'utf8') !== content) return;
    } catch {
      // Absent for a moment while it is swapped.
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${path} to be written`);
    await sleep(0.5);
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  const { files, delayMs, count, maxGapMs, tag, startWhen } = JSON.parse(line);
  if (startWhen) await changed(startWhen.path, startWhen.differsFrom);
  await sleep(delayMs);
  for (let i = 0; i < count; i++) {
    const path = pick(files);
    const content = `${tag} write ${i} ${randomBytes(8).toString('hex')}\n`;
    // The first two writes save one way each, so every race has both; the rest pick at random.
    if (i === 0 || (i > 1 && Math.random() < 0.5)) {
      // An in-place save: open with truncation, write, close.
      writeFileSync(path, content);
    } else {
      // An atomic save, as many editors do: a temporary file renamed over the original.
      const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(3).toString('hex')}.swp`);
      writeFileSync(tmp, content);
      try {
        renameSync(tmp, path);
      } catch {
        // A restore removed the half-saved file (it holds it in its safety checkpoint): this save never landed.
        continue;
      }
    }
    process.stdout.write(`${JSON.stringify({ path, content })}\n`);
    await sleep(Math.random() * maxGapMs);
  }
  process.stdout.write(`${JSON.stringify({ done: true })}\n`);
}
