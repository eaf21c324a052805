import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RecentIds } from '../../server/store/recent-ids.js';

const oid = (n: number): string => createHash('sha1').update(String(n)).digest('hex');

describe('RecentIds', () => {
  it('answers which ids were touched since a moment, each once, with its latest time', () => {
    const recent = new RecentIds();
    for (let n = 0; n < 1000; n++) recent.touch(oid(n), 1000 + n);
    recent.touch(oid(3), 5000);
    expect(recent.size).toBe(1000);
    expect(recent.since(1990)).toEqual(new Set([oid(990), oid(991), oid(992), oid(993), oid(994), oid(995), oid(996), oid(997), oid(998), oid(999), oid(3)]));
    expect(recent.since(0).size).toBe(1000);
    expect(recent.since(6000).size).toBe(0);
  });

  it('forgets ids last touched before a moment and keeps the rest findable', () => {
    const recent = new RecentIds();
    for (let n = 0; n < 5000; n++) recent.touch(oid(n), 1 + n);
    recent.touch(oid(7), 10_000);
    recent.forgetBefore(4990);
    expect(recent.size).toBe(12);
    expect(recent.since(0)).toEqual(new Set([oid(7), ...Array.from({ length: 11 }, (_, i) => oid(4989 + i))]));
    // Touching a kept id again updates it rather than adding a second one.
    recent.touch(oid(4999), 20_000);
    expect(recent.size).toBe(12);
    expect(recent.since(15_000)).toEqual(new Set([oid(4999)]));
  });
});
