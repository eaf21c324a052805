import { describe, expect, it } from 'vitest';
import { changesetUri, channelKindOf, chatUri, parseChannel, ROOT_CHANNEL, sessionUri } from '../../protocol/index.js';

describe('channel URIs', () => {
  it('recognises the four channel kinds we serve', () => {
    expect(channelKindOf(ROOT_CHANNEL)).toBe('root');
    expect(channelKindOf(sessionUri('0b7c'))).toBe('session');
    expect(channelKindOf(chatUri('c1'))).toBe('chat');
    expect(channelKindOf(changesetUri('s1/turn/t3'))).toBe('changeset');
    expect(parseChannel('ahp-changeset:/s1/turn/t3')).toEqual({ kind: 'changeset', id: 's1/turn/t3' });
    expect(parseChannel('ahp-session:/abc')).toEqual({ kind: 'session', id: 'abc' });
  });

  it('rejects URIs we do not serve', () => {
    for (const uri of [
      '',
      'ahp-root:/',
      'ahp-root://x',
      'ahp-session:/',
      'ahp-session:/s1/annotations',
      'ahp-chat:/',
      'ahp-changeset:/',
      'ahp-changeset://host',
      'ahp-terminal:/t1',
      'file:///w/a.ts',
    ]) {
      expect(channelKindOf(uri), uri).toBeUndefined();
    }
  });
});
