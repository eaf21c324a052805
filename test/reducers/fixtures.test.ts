import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ChannelKind, ChannelState, StateAction } from '../../protocol/index.js';
import { reduce } from '../../reducers/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixtureDir = path.join(repoRoot, 'test/fixtures/ahp/test-cases/reducers');

/** The fixtures' clock: every `modifiedAt` stamp they expect is 9999 ms after the epoch. */
const FIXTURE_NOW = 9999;

interface Fixture {
  description: string;
  reducer: ChannelKind;
  initial: ChannelState;
  actions: StateAction[];
  expected: ChannelState;
}

/**
 * The fixtures write TypeScript's `undefined` as JSON `null`; read them back
 * as `undefined` (as the protocol's own test harness does).
 */
function nullToUndefined(value: unknown): unknown {
  if (value === null) return undefined;
  if (Array.isArray(value)) return value.map(nullToUndefined);
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, nullToUndefined(v)]));
  }
  return value;
}

/** Drops `undefined` the way the wire does. */
function wire(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

function load(file: string): Fixture {
  return nullToUndefined(JSON.parse(readFileSync(path.join(fixtureDir, file), 'utf8'))) as Fixture;
}

const files = readdirSync(fixtureDir)
  .filter((f) => f.endsWith('.json'))
  .sort();

describe('AHP reducer fixtures', () => {
  it('finds the fixture corpus', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  for (const file of files) {
    const fixture = load(file);
    it(`${file}: ${fixture.description}`, () => {
      let state = fixture.initial;
      for (const action of fixture.actions) {
        state = reduce(fixture.reducer, state, action, { now: () => FIXTURE_NOW });
      }
      expect(wire(state)).toEqual(wire(fixture.expected));
    });
  }
});
