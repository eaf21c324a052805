// A second process that saves one file the way programs do, at an exact
// point of an operation's swap: each command line on stdin names the file,
// the save style, the bytes, and when to save; the reply line on stdout
// says what was written. The moments are found by watching the file's
// directory, so the save lands there every time, not by luck:
//
// - "replacing": the new version is being written beside the file (its
//   `.changeset-*.tmp` appeared): the file was checked and is about to be
//   replaced (the server pauses there under
//   CHANGESET_SERVER_TEST_PAUSE_BEFORE_REPLACE_MS);
// - "aside": the file's name is absent while its `.changeset-*.old` exists
//   (CHANGESET_SERVER_TEST_PAUSE_WHILE_ASIDE_MS);
// - "now".
//
// Styles: "append" (open O_APPEND|O_CREAT, write, close, as `>>` does),
// "rewrite" (open O_TRUNC|O_CREAT, write, close), "rename" (a new file
// renamed over the name, as editors save), "chunked" (O_TRUNC, then the
// bytes in four writes with pauses), "lines" (open O_APPEND|O_CREAT and keep
// it open, appending `count` lines `gapMs` apart; with `after: "replaced"`
// the first line waits until the name leads to another file; with
// `keepOpen` the file stays open after the last line until a "release"
// command), "hold" (open for writing and keep it open until a "release"
// command).
import { closeSync, existsSync, fstatSync, openSync, readdirSync, renameSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const reply = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
let held;

let waitMs = 20_000;

async function until(holds, what) {
  const deadline = Date.now() + waitMs;
  while (!holds()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(0.5);
  }
}

const temps = (dir, suffix) => readdirSync(dir).filter((n) => n.startsWith('.changeset-') && n.endsWith(suffix));

async function moment(when, path) {
  const dir = dirname(path);
  if (when === 'replacing') await until(() => temps(dir, '.tmp').length > 0, 'the new version to be written beside the file');
  else if (when === 'aside') await until(() => !existsSync(path) && temps(dir, '.old').length > 0, 'the file to be moved aside');
}

async function save(style, path, data, gapMs) {
  const bytes = Buffer.from(data);
  if (style === 'append' || style === 'rewrite') {
    const fd = openSync(path, style === 'append' ? 'a' : 'w');
    writeSync(fd, bytes);
    closeSync(fd);
  } else if (style === 'rename') {
    const tmp = join(dirname(path), `.${basename(path)}.swp`);
    const fd = openSync(tmp, 'w');
    writeSync(fd, bytes);
    closeSync(fd);
    renameSync(tmp, path);
  } else if (style === 'chunked') {
    const fd = openSync(path, 'w');
    const size = Math.ceil(bytes.length / 4);
    for (let i = 0; i < bytes.length; i += size) {
      writeSync(fd, bytes.subarray(i, i + size));
      await sleep(gapMs);
    }
    closeSync(fd);
  } else {
    throw new Error(`unknown style ${style}`);
  }
}

async function appendLines(path, count, gapMs, prefix, after, keepOpen) {
  const fd = openSync(path, 'a');
  const ino = fstatSync(fd).ino;
  if (after === 'replaced') await until(() => existsSync(path) && statSync(path).ino !== ino, 'the file to be replaced');
  const lines = [];
  for (let i = 0; i < count; i++) {
    const line = `${prefix} line ${i}\n`;
    writeSync(fd, line);
    lines.push(line);
    await sleep(gapMs);
  }
  if (keepOpen) held = fd;
  else closeSync(fd);
  return lines.join('');
}

for await (const line of createInterface({ input: process.stdin })) {
  const cmd = JSON.parse(line);
  waitMs = cmd.waitMs ?? 20_000;
  try {
    if (cmd.style === 'release') {
      closeSync(held);
      reply({ released: true });
      continue;
    }
    await moment(cmd.when ?? 'now', cmd.path);
    if (cmd.style === 'hold') {
      held = openSync(cmd.path, 'a');
      reply({ held: true, pid: process.pid });
    } else if (cmd.style === 'lines') {
      reply({ written: await appendLines(cmd.path, cmd.count, cmd.gapMs, cmd.prefix, cmd.after, cmd.keepOpen), pid: process.pid });
    } else {
      await save(cmd.style, cmd.path, cmd.data, cmd.gapMs ?? 10);
      reply({ written: cmd.data });
    }
  } catch (error) {
    reply({ error: String(error) });
  }
}
