/**
 * Where an error sends the reader next, in the words of the surface that
 * shows it: a person at the command line runs commands, an agent over MCP
 * calls its own tools.
 */
export interface Hints {
  /** What lists the turns with their numbers. */
  turns: string;
  /** What lists the sessions with their ids. */
  sessions: string;
  /** How to pick one session among several. */
  pickSession: string;
  /** What to do about a turn still being recorded. */
  endTurn: string;
  /** The name of the line-range option. */
  lines: string;
}

/** The command line's. */
export const CLI_HINTS: Hints = {
  turns: '"changeset-server status"',
  sessions: '"changeset-server sessions"',
  pickSession: 'pick one with --session',
  endTurn: 'end it first ("changeset-server turn end")',
  lines: '--lines',
};

/** The MCP tools'. */
export const MCP_HINTS: Hints = {
  turns: 'list_turns',
  sessions: 'list_sessions',
  pickSession: 'pass "session" to pick one',
  endTurn: 'it is the turn being recorded now; try again once it has ended',
  lines: '"lines"',
};
