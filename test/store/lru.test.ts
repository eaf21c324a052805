import { afterEach, describe, expect, it, vi } from 'vitest';
import { LruCache } from '../../server/store/lru.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('LruCache', () => {
  it('evicts the least recently used entries over its weight', () => {
    const cache = new LruCache<string, string>(10, (v) => v.length);
    cache.set('a', 'aaaa');
    cache.set('b', 'bbbb');
    expect(cache.get('a')).toBe('aaaa');
    cache.set('c', 'cccc');
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('aaaa');
    expect(cache.get('c')).toBe('cccc');
  });

  it('drops entries left unused for longer than its idle limit, and keeps those in use', () => {
    vi.useFakeTimers();
    const cache = new LruCache<string, number>(1000, undefined, 60_000);
    cache.set('old', 1);
    cache.set('used', 2);
    vi.advanceTimersByTime(40_000);
    expect(cache.get('used')).toBe(2);
    vi.advanceTimersByTime(30_000);
    cache.set('new', 3);
    expect(cache.size).toBe(2);
    expect(cache.get('old')).toBeUndefined();
    expect(cache.get('used')).toBe(2);
    expect(cache.get('new')).toBe(3);
  });

  it('drops entries not used since a given moment, however short ago', () => {
    vi.useFakeTimers();
    const cache = new LruCache<string, number>(1000, undefined, 60_000);
    cache.set('earlier turn', 1);
    cache.set('read again', 2);
    vi.advanceTimersByTime(300);
    const turnEndBegan = Date.now();
    expect(cache.get('read again')).toBe(2);
    cache.set('this turn', 3);
    cache.dropUnusedSince(turnEndBegan);
    expect(cache.size).toBe(2);
    expect(cache.get('earlier turn')).toBeUndefined();
    expect(cache.get('read again')).toBe(2);
    expect(cache.get('this turn')).toBe(3);
  });
});
