import { describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, formatChangesetUri, isChangesetUriError, parseChangesetUri } from '../../protocol/index.js';

describe('changeset URIs', () => {
  it('round-trips turn ids with slashes, spaces, ? and non-ASCII', () => {
    for (const turnId of ['a/b', 'with space', 'what?', 'é😀', '100%', '..', 'x#y']) {
      const uri = expandChangesetUri(changesetUriTemplate('S1', 'turn'), { turnId });
      const parsed = parseChangesetUri(uri);
      expect(parsed).toEqual({ sessionId: 'S1', kind: 'turn', turnId });
      expect(formatChangesetUri(parsed as never)).toBe(uri);
    }
  });

  it('parses every kind, with and without a directory scope', () => {
    expect(parseChangesetUri('ahp-changeset:/S/session')).toEqual({ sessionId: 'S', kind: 'session' });
    expect(parseChangesetUri('ahp-changeset:/S/dir/1/uncommitted')).toEqual({ sessionId: 'S', kind: 'uncommitted', dir: 1 });
    expect(parseChangesetUri('ahp-changeset:/S/compare/a/b')).toEqual({ sessionId: 'S', kind: 'compare-turns', originalTurnId: 'a', modifiedTurnId: 'b' });
    expect(parseChangesetUri('ahp-changeset:/S/branch')).toEqual({ sessionId: 'S', kind: 'branch' });
  });

  it('parses and formats step and since changesets: a step number, or start for since', () => {
    const step = expandChangesetUri(changesetUriTemplate('S', 'step'), { turnId: 'a/b', step: '2' });
    expect(step).toBe('ahp-changeset:/S/step/a%2Fb/2');
    expect(parseChangesetUri(step)).toEqual({ sessionId: 'S', kind: 'step', turnId: 'a/b', step: 2 });
    expect(formatChangesetUri({ sessionId: 'S', kind: 'step', turnId: 'a/b', step: 2 })).toBe(step);
    expect(parseChangesetUri('ahp-changeset:/S/since/t/start')).toEqual({ sessionId: 'S', kind: 'since', turnId: 't' });
    expect(formatChangesetUri({ sessionId: 'S', kind: 'since', turnId: 't' })).toBe('ahp-changeset:/S/since/t/start');
    expect(parseChangesetUri('ahp-changeset:/S/dir/1/since/t/12')).toEqual({ sessionId: 'S', kind: 'since', dir: 1, turnId: 't', step: 12 });
    const bad: [string, string][] = [
      ['ahp-changeset:/S/step/t', 'a step changeset URI takes turnId and step segments after "step"'],
      ['ahp-changeset:/S/step/t/start', 'step must be a step number from 1 to 999999, got "start"'],
      ['ahp-changeset:/S/step/t/0', 'step must be a step number from 1 to 999999, got "0"'],
      ['ahp-changeset:/S/step/t/007', 'step must be a step number from 1 to 999999, got "007"'],
      ['ahp-changeset:/S/step/t/1000000', 'step must be a step number from 1 to 999999, got "1000000"'],
      ['ahp-changeset:/S/since/t/-1', 'step must be a step number from 1 to 999999 or "start", got "-1"'],
      ['ahp-changeset:/S/since/t/', 'step must not be empty'],
      ['ahp-changeset:/S/since/t/start/x', 'a since changeset URI takes turnId and step segments after "since"'],
    ];
    for (const [uri, message] of bad) {
      const parsed = parseChangesetUri(uri);
      expect(isChangesetUriError(parsed), uri).toBe(true);
      expect((parsed as { message: string }).message, uri).toBe(message);
    }
  });

  it('refuses missing, empty or extra segments and malformed encoding, naming the problem', () => {
    const bad: [string, RegExp][] = [
      ['ahp-changeset:/S/turn', /takes turnId/],
      ['ahp-changeset:/S/turn/', /turnId must not be empty/],
      ['ahp-changeset:/S/session/extra', /takes no segments/],
      ['ahp-changeset:/S/compare/a', /originalTurnId and modifiedTurnId/],
      ['ahp-changeset:/S/nope', /unknown changeset kind/],
      ['ahp-changeset:/S/turn/%E0%A4%A', /malformed percent-encoding/],
      ['ahp-changeset:/S/session?x=1', /no query/],
      ['ahp-changeset://session', /missing session id/],
      ['ahp-changeset:/S/dir/x/session', /working-directory index/],
      ['ahp-session:/S', /not an ahp-changeset/],
    ];
    for (const [uri, message] of bad) {
      const parsed = parseChangesetUri(uri);
      expect(isChangesetUriError(parsed), uri).toBe(true);
      expect((parsed as { message: string }).message).toMatch(message);
    }
  });
});
