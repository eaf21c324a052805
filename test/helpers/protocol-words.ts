/**
 * Protocol words in text a person (or an agent) reads: what the CLI, the MCP
 * tools and the viewer say must be in the user's terms — turn numbers, file
 * names — never the wire's field names, channel URIs, operation ids, raw
 * ids where a number exists, numeric statuses, or "1 files".
 */

/** A ULID as the server makes ids: 26 characters of Crockford's base32. */
const ULID = /\b[0-9A-HJKMNP-TV-Z]{26}\b/g;

const RULES: readonly { name: string; pattern: RegExp }[] = [
  { name: 'a _meta field', pattern: /_meta\b/ },
  { name: 'a channel URI', pattern: /\bahp-(?:session|changeset|chat|root):/ },
  { name: 'an operation id', pattern: /\brestore-checkpoint(?:-and-turns)?\b|\boperationId\b/ },
  { name: 'a params field', pattern: /\b(?:params|target)\.[a-zA-Z]/ },
  { name: 'a numeric status', pattern: /\bstatus\W{0,3}\d+|-32\d{3}\b/ },
  {
    name: 'a singular count with a plural noun',
    pattern: /(?<![\d.,])\b1 (?:turn|file|session|step|change|line|snapshot|check|verification|walk|object|pack|conflict|edit)s\b/,
  },
  { name: 'the npm start of the project itself', pattern: /\bnpm start\b/ },
];

/** One offending piece of text. */
export interface WordProblem {
  rule: string;
  text: string;
}

/**
 * The protocol words in `text`. ULIDs are allowed only when they are the id
 * of a session (sessions have no number; `--session` takes the id); any
 * other, a turn's id above all, is a raw id where a number exists.
 */
export function protocolWords(text: string, allowedIds: ReadonlySet<string> = new Set()): WordProblem[] {
  const problems: WordProblem[] = [];
  for (const { name, pattern } of RULES) if (pattern.test(text)) problems.push({ rule: name, text });
  for (const id of text.match(ULID) ?? []) if (!allowedIds.has(id)) problems.push({ rule: `a raw id (${id})`, text });
  return problems;
}

/** The keys of a JSON answer whose values are prose a person or an agent reads (the rest are data for programs). */
const PROSE_KEYS: ReadonlySet<string> = new Set(['message', 'note', 'action', 'reason', 'text', 'summaryText']);

/** The prose strings of a JSON answer: `message`, `note`, `action`, `reason` anywhere in it. */
export function proseOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) proseOf(v, out);
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (typeof v === 'string' && PROSE_KEYS.has(key)) out.push(v);
      else proseOf(v, out);
    }
  }
  return out;
}
