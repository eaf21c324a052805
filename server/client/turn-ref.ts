import type { SessionStatusInfo, TurnStatus } from '../../protocol/index.js';
import { CommandError } from './errors.js';
import { CLI_HINTS, type Hints } from './hints.js';

/**
 * The turn a `--turn` value names, the way people name turns: the number
 * `status` shows (`3`, `#3`), `last`, a negative offset from the end (`-1`
 * is the last turn, `-2` the one before), or a turn id. Without a value,
 * the last ended turn. `turns` must list every turn of the session.
 */
export function resolveTurn(session: SessionStatusInfo, ref: string | undefined, hints: Hints = CLI_HINTS): TurnStatus {
  const ended = session.turns.filter((t) => t.state !== undefined);
  const name = session.title;
  if (ref === undefined || ref === 'last') {
    const last = ended.at(-1);
    if (!last) throw new CommandError(`"${name}" has no ended turn yet`);
    return last;
  }
  const byId = session.turns.find((t) => t.turnId === ref);
  if (byId) return byId;
  const number = /^#?(\d+)$/.exec(ref);
  if (number) {
    const turn = session.turns.find((t) => t.index === Number(number[1]));
    if (!turn) throw new CommandError(`"${name}" has no turn ${number[1]} (it has ${plural(session.turnCount, 'turn')}; see ${hints.turns})`);
    return turn;
  }
  const offset = /^-(\d+)$/.exec(ref);
  if (offset) {
    const turn = ended.at(-Number(offset[1]));
    if (!turn || Number(offset[1]) === 0) throw new CommandError(`"${name}" has only ${plural(ended.length, 'ended turn')}, so there is no turn ${ref}`);
    return turn;
  }
  throw new CommandError(`"${name}" has no turn "${ref}"; name a turn by the number ${hints.turns} shows, "last", "-1", or its id`);
}

/** "turn 3" (with its title when it has one). */
export function turnLabel(turn: TurnStatus): string {
  const title = turn.title ?? turn.message;
  return title ? `turn ${turn.index} ("${title.length > 50 ? `${title.slice(0, 49)}…` : title}")` : `turn ${turn.index}`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
