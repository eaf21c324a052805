/**
 * The one function that says whose a recorded change of a file is: each
 * rule of docs/provenance.md on one change.
 */
import { describe, expect, it } from 'vitest';
import { attributeChange, type RecordedChange, type RecordedStep, type RecordedTurn } from '../../server/provenance/attribute-change.js';

const session = { uri: 'ahp-session:/s', title: 'Claude Code — parse dates', agent: 'Claude Code' };
const turn: RecordedTurn = { number: 2, id: 't2', prompt: 'parse dates', at: '2026-12-02T10:00:00.000Z', changeset: 'ahp-changeset:/s/turn/t2' };
const step = (tool: string | undefined, paths: string[]): RecordedStep => ({
  index: 3,
  paths,
  at: '2026-12-02T10:01:00.000Z',
  changeset: 'ahp-changeset:/s/step/t2/3',
  ...(tool !== undefined ? { tool } : {}),
});
const inTurn = (s?: RecordedStep): RecordedChange => ({
  kind: 'in-turn',
  session,
  turn,
  file: '/repo/a.ts',
  after: '2026-12-02T10:01:00.000Z',
  before: '2026-12-02T10:02:00.000Z',
  ...(s ? { step: s } : {}),
});

describe('attributeChange', () => {
  it('gives a step its tool call, with the turn, prompt and the step changeset', () => {
    expect(attributeChange(inTurn(step('Edit', ['/repo/a.ts'])))).toEqual({
      kind: 'turn',
      session: 'ahp-session:/s',
      sessionTitle: 'Claude Code — parse dates',
      agent: 'Claude Code',
      turn: 2,
      turnId: 't2',
      prompt: 'parse dates',
      step: 3,
      tool: 'Edit',
      at: '2026-12-02T10:01:00.000Z',
      changeset: 'ahp-changeset:/s/step/t2/3',
    });
  });

  it("gives the user a change during a file tool that named other files; a shell tool's, an unnamed tool's or a pathless step's stay the agent's", () => {
    expect(attributeChange(inTurn(step('Write', ['/repo/b.ts'])))).toEqual({
      kind: 'user',
      when: 'during-turn',
      turn: 2,
      session: 'ahp-session:/s',
      after: '2026-12-02T10:01:00.000Z',
      before: '2026-12-02T10:02:00.000Z',
    });
    expect(attributeChange(inTurn(step('write_file', ['/repo/b.ts']))).kind).toBe('user');
    expect(attributeChange(inTurn(step('Bash', ['/repo/Makefile'])))).toMatchObject({ kind: 'turn', step: 3, tool: 'Bash' });
    expect(attributeChange(inTurn(step(undefined, ['/repo/b.ts'])))).toMatchObject({ kind: 'turn', step: 3 });
    expect(attributeChange(inTurn(step('Edit', []))).kind).toBe('turn');
  });

  it('gives a change before the first step the turn without a step, and one outside every turn the user', () => {
    const before = attributeChange(inTurn());
    expect(before).toMatchObject({ kind: 'turn', turn: 2, changeset: 'ahp-changeset:/s/turn/t2', at: '2026-12-02T10:00:00.000Z' });
    expect('step' in before).toBe(false);
    expect(attributeChange({ kind: 'outside-turns', session, afterTurn: turn, after: 'x', before: 'y' })).toEqual({
      kind: 'user',
      when: 'between-turns',
      turn: 2,
      session: 'ahp-session:/s',
      after: 'x',
      before: 'y',
    });
    expect(attributeChange({ kind: 'outside-turns', session })).toEqual({ kind: 'user', when: 'between-turns', session: 'ahp-session:/s' });
  });
});
