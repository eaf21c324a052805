/**
 * The authorship log of one commit, from what the record attributes to
 * turns (each recording session one prompt record, hashed from its agent and
 * session id as the standard says) and, for a rewritten commit (an amend, a
 * rebased commit), the log of the commit it replaced carried onto the new
 * content line by line.
 */
import type { TurnAuthor } from '../../protocol/extensions/provenance.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { CommitAttribution } from './commit-attribution.js';
import { lineMapping } from './commit-lines.js';
import { AUTHORSHIP_SCHEMA, promptHash, type AuthorshipLog, type AuthorshipMessage, type FileAttestation, type PromptRecord } from './notes-format.js';

/** The standard's tool names for the agents this server knows by name. */
const TOOLS: Record<string, string> = { 'Claude Code': 'claude', Cursor: 'cursor', 'Gemini CLI': 'gemini', Codex: 'codex' };

/** The tool name a prompt record carries for a session's agent. */
function toolOf(agent: string | undefined): string {
  if (!agent) return 'unknown';
  return (
    TOOLS[agent] ??
    (agent
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') ||
      'unknown')
  );
}

/** The log a rewritten commit carries from the commit it replaced: its log and that commit's files' lines. */
export interface CarriedLog {
  log: AuthorshipLog;
  /** The replaced commit's lines of each file its log names. */
  lines: ReadonlyMap<string, readonly string[]>;
}

/** The prompt record of a recording session: every prompt and tool call of its turns. */
function promptRecord(session: RecordingSession, humanAuthor: string): PromptRecord {
  const messages: AuthorshipMessage[] = [];
  let additions = 0;
  let deletions = 0;
  for (const turn of session.turns) {
    if (turn.message && !turn.automatic) messages.push({ type: 'user', text: turn.message, timestamp: turn.startedAt });
    for (const step of turn.steps ?? []) {
      messages.push({
        type: 'tool_use',
        name: step.tool ?? 'unknown',
        input: { paths: step.paths.map((p) => session.files.displayOf(p)) },
        timestamp: step.at,
      });
    }
    const stats = session.meta.turns[turn.id];
    additions += stats?.added ?? 0;
    deletions += stats?.deleted ?? 0;
  }
  return {
    agent_id: { tool: toolOf(session.meta.agent), id: session.id, model: 'unknown' },
    ...(humanAuthor ? { human_author: humanAuthor } : {}),
    messages,
    total_additions: additions,
    total_deletions: deletions,
    accepted_lines: 0,
    overriden_lines: 0,
  };
}

/**
 * The commit's authorship log, or undefined when no line of it is an
 * agent's. Lines the record gives a turn come first; a line it does not
 * keeps the hash the carried log gave it.
 */
export function authorshipLogOf(attribution: CommitAttribution, sessions: readonly RecordingSession[], carried?: CarriedLog): AuthorshipLog | undefined {
  const { commit } = attribution;
  const prompts: Record<string, PromptRecord> = { ...(carried?.log.metadata.prompts ?? {}) };
  const hashOf = new Map<string, string>();
  const sessionHash = (author: TurnAuthor): string | undefined => {
    const known = hashOf.get(author.session);
    if (known) return known;
    const session = sessions.find((s) => s.uri === author.session);
    if (!session) return undefined;
    const hash = promptHash(toolOf(session.meta.agent), session.id);
    prompts[hash] = promptRecord(session, commit.author);
    hashOf.set(author.session, hash);
    return hash;
  };
  const files: FileAttestation[] = [];
  for (const file of attribution.files) {
    const byLine = new Map<number, string>();
    const before = carried?.log.files.find((f) => f.path === file.path);
    const oldLines = carried?.lines.get(file.path);
    if (before && oldLines) {
      const map = lineMapping(oldLines, file.lines);
      const oldHash = new Map<number, string>();
      for (const [hash, lines] of before.lines) for (const n of lines) oldHash.set(n, hash);
      map.forEach((from, i) => {
        const hash = from > 0 ? oldHash.get(from) : undefined;
        if (hash) byLine.set(i + 1, hash);
      });
    }
    file.added.forEach((line, i) => {
      const author = file.authors[i];
      const hash = author ? sessionHash(author) : undefined;
      if (hash) byLine.set(line, hash);
    });
    if (byLine.size === 0) continue;
    const lines = new Map<string, number[]>();
    for (const n of [...byLine.keys()].sort((a, b) => a - b)) {
      const hash = byLine.get(n)!;
      const list = lines.get(hash) ?? [];
      list.push(n);
      lines.set(hash, list);
    }
    files.push({ path: file.path, lines });
  }
  if (files.length === 0) return undefined;
  for (const record of Object.values(prompts)) record.accepted_lines = 0;
  for (const f of files) for (const [hash, lines] of f.lines) if (prompts[hash]) prompts[hash].accepted_lines += lines.length;
  return { files, metadata: { schema_version: AUTHORSHIP_SCHEMA, base_commit_sha: commit.oid, prompts } };
}
