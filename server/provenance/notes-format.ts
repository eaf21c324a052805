/**
 * The authorship log of the Git AI Standard v3.0.0, the note `serve --notes`
 * attaches to a commit under `refs/notes/ai`: an attestation section (each
 * file with AI-written lines, then one line per prompt record: its 16-hex
 * hash and the line ranges it wrote), a line holding exactly `---`, and a
 * JSON metadata section (`schema_version`, `base_commit_sha`, `prompts`).
 * Writing and reading it; reading is strict where the standard says MUST,
 * so it also checks what this server writes.
 */
import { createHash } from 'node:crypto';

/** The schema version the standard fixes. */
export const AUTHORSHIP_SCHEMA = 'authorship/3.0.0';

/** One message of a prompt record's conversation. */
export interface AuthorshipMessage {
  type: 'user' | 'assistant' | 'tool_use';
  /** The text, for `user` and `assistant` messages. */
  text?: string;
  /** ISO 8601. */
  timestamp?: string;
  /** The tool's name, for `tool_use`. */
  name?: string;
  /** The tool's input, for `tool_use`. */
  input?: Record<string, unknown>;
}

/** A prompt record: one agent session (conversation) whose lines are attested. */
export interface PromptRecord {
  agent_id: { tool: string; id: string; model: string };
  human_author?: string;
  messages: AuthorshipMessage[];
  total_additions: number;
  total_deletions: number;
  accepted_lines: number;
  overriden_lines: number;
}

/** The metadata section. */
interface AuthorshipMetadata {
  schema_version: string;
  base_commit_sha: string;
  prompts: Record<string, PromptRecord>;
  git_ai_version?: string;
}

/** One file of the attestation section: prompt hash → its lines, 1-based, ascending. */
export interface FileAttestation {
  path: string;
  lines: Map<string, number[]>;
}

/** A whole authorship log. */
export interface AuthorshipLog {
  files: FileAttestation[];
  metadata: AuthorshipMetadata;
}

/** The prompt record hash: the first 16 hex characters of SHA-256 of `{tool}:{conversation id}`. */
export function promptHash(tool: string, conversationId: string): string {
  return createHash('sha256').update(`${tool}:${conversationId}`).digest('hex').slice(0, 16);
}

/** `1-4,9,12-13` from ascending line numbers (duplicates dropped). */
export function formatRanges(lines: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const start = lines[i]!;
    let end = start;
    while (i + 1 < lines.length && lines[i + 1]! <= end + 1) end = Math.max(end, lines[++i]!);
    parts.push(start === end ? String(start) : `${start}-${end}`);
    i++;
  }
  return parts.join(',');
}

/** Line numbers from `1-4,9`; throws on anything the standard does not allow. */
export function parseRanges(text: string): number[] {
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(text))
    throw new AuthorshipLogError(`line ranges ${JSON.stringify(text)} are not numbers and ranges separated by commas`);
  const out: number[] = [];
  for (const part of text.split(',')) {
    const [a, b] = part.split('-').map(Number) as [number, number | undefined];
    const end = b ?? a;
    if (a < 1 || end < a) throw new AuthorshipLogError(`line range ${part} is not a range of positive line numbers`);
    if (out.length > 0 && a <= out[out.length - 1]!) throw new AuthorshipLogError(`line ranges ${text} are not in ascending order`);
    for (let n = a; n <= end; n++) out.push(n);
  }
  return out;
}

/** A path as the attestation section writes it: quoted when it holds a space, a tab or a newline. */
function formatPath(path: string): string {
  return /[ \t\n]/.test(path) ? `"${path}"` : path;
}

/** The note's text. Files without lines are left out, as the standard requires. */
export function serializeAuthorshipLog(log: AuthorshipLog): string {
  const out: string[] = [];
  for (const file of log.files) {
    const entries = [...file.lines].filter(([, lines]) => lines.length > 0);
    if (entries.length === 0) continue;
    out.push(formatPath(file.path));
    for (const [hash, lines] of entries) out.push(`  ${hash} ${formatRanges(lines)}`);
  }
  out.push('---');
  return `${out.join('\n')}\n${JSON.stringify(log.metadata, null, 2)}\n`;
}

/** A note that is not an authorship log of schema 3.0.0. */
export class AuthorshipLogError extends Error {}

/** Reads an authorship log, checking what the standard says MUST hold. */
export function parseAuthorshipLog(text: string): AuthorshipLog {
  const lines = text.split('\n');
  const divider = lines.indexOf('---');
  if (divider < 0) throw new AuthorshipLogError('no line holding exactly "---" divides the attestation section from the metadata');
  let metadata: AuthorshipMetadata;
  try {
    metadata = JSON.parse(lines.slice(divider + 1).join('\n')) as AuthorshipMetadata;
  } catch (error) {
    throw new AuthorshipLogError(`the metadata section is not JSON: ${(error as Error).message}`);
  }
  if (typeof metadata !== 'object' || metadata === null) throw new AuthorshipLogError('the metadata section is not a JSON object');
  if (metadata.schema_version !== AUTHORSHIP_SCHEMA)
    throw new AuthorshipLogError(`schema_version is ${JSON.stringify(metadata.schema_version)}, not ${AUTHORSHIP_SCHEMA}`);
  if (typeof metadata.base_commit_sha !== 'string') throw new AuthorshipLogError('base_commit_sha is missing');
  if (typeof metadata.prompts !== 'object' || metadata.prompts === null) throw new AuthorshipLogError('prompts is missing');
  for (const [hash, record] of Object.entries(metadata.prompts)) checkPrompt(hash, record);
  const files: FileAttestation[] = [];
  for (const line of lines.slice(0, divider)) {
    if (line === '') continue;
    if (line.startsWith('  ')) {
      const m = /^ {2}([0-9a-f]{7}|[0-9a-f]{16}) (\S+)$/.exec(line);
      if (!m) throw new AuthorshipLogError(`attestation entry ${JSON.stringify(line)} is not "  <hash> <ranges>"`);
      const file = files[files.length - 1];
      if (!file) throw new AuthorshipLogError('an attestation entry comes before any file path');
      if (!(m[1]! in metadata.prompts)) throw new AuthorshipLogError(`hash ${m[1]} of ${file.path} has no prompt record in the metadata`);
      file.lines.set(m[1]!, parseRanges(m[2]!));
      continue;
    }
    if (/^\s/.test(line)) throw new AuthorshipLogError(`line ${JSON.stringify(line)} is indented but not by exactly two spaces`);
    const quoted = /^"(.*)"$/.exec(line);
    const path = quoted ? quoted[1]! : line;
    if (!quoted && /[ \t]/.test(path)) throw new AuthorshipLogError(`path ${JSON.stringify(path)} holds a space or tab and is not quoted`);
    files.push({ path, lines: new Map() });
  }
  for (const file of files) if (file.lines.size === 0) throw new AuthorshipLogError(`file ${file.path} has no attested lines`);
  return { files, metadata };
}

function checkPrompt(hash: string, record: PromptRecord): void {
  if (!/^[0-9a-f]+$/.test(hash)) throw new AuthorshipLogError(`prompt hash ${JSON.stringify(hash)} is not hexadecimal`);
  const a = record?.agent_id;
  if (typeof a !== 'object' || a === null || typeof a.tool !== 'string' || typeof a.id !== 'string' || typeof a.model !== 'string') {
    throw new AuthorshipLogError(`prompt ${hash} has no agent_id with tool, id and model`);
  }
  if (!Array.isArray(record.messages)) throw new AuthorshipLogError(`prompt ${hash} has no messages`);
  for (const m of record.messages) {
    if (!['user', 'assistant', 'tool_use'].includes(m?.type)) throw new AuthorshipLogError(`prompt ${hash} has a message of type ${JSON.stringify(m?.type)}`);
  }
  for (const key of ['total_additions', 'total_deletions', 'accepted_lines', 'overriden_lines'] as const) {
    if (!Number.isInteger(record[key])) throw new AuthorshipLogError(`prompt ${hash} has no whole number ${key}`);
  }
}
