import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { progressLine } from '../../server/cli/progress.js';

function stream(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const s = new PassThrough();
  let text = '';
  s.on('data', (chunk: Buffer) => (text += chunk.toString()));
  Object.assign(s, { isTTY });
  return { stream: s as unknown as NodeJS.WriteStream, text: () => text };
}

describe('snapshot progress line', () => {
  it('draws a self-overwriting count on a terminal and clears it when done', () => {
    const out = stream(true);
    const progress = progressLine(out.stream, 'Snapshotting…', 0);
    progress.update(12_345);
    progress.done();
    expect(out.text()).toBe('\r\x1b[2KSnapshotting… 12,345 files\r\x1b[2K');
  });

  it('writes a few plain lines when stderr is not a terminal: one per interval and the count at the end', () => {
    const out = stream(false);
    const progress = progressLine(out.stream, 'Snapshotting…', 0, 60_000);
    progress.update(10, 20_000);
    progress.update(15_000, 20_000);
    progress.update(20_000, 20_000);
    progress.done();
    expect(out.text()).toMatch(/^Snapshotting… 10 of 20,000 files\nSnapshotting… 20,000 files, done in \d+\.\d s\n$/);
  });

  it('writes nothing for a snapshot shorter than the delay, terminal or not', () => {
    for (const isTTY of [true, false]) {
      const out = stream(isTTY);
      const progress = progressLine(out.stream, 'Snapshotting…', 60_000);
      progress.update(10, 20);
      progress.done();
      expect(out.text()).toBe('');
    }
  });
});
