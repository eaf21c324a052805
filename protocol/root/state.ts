/** Root channel state (`ahp-root://`). */

import type { JsonObject, Meta } from '../common/state.js';

/** A model an agent offers. */
export interface SessionModelInfo {
  /** Model identifier. */
  id: string;
  /** Provider the model belongs to. */
  provider: string;
  /** Human-readable model name. */
  name: string;
  /** Maximum context window size in tokens. */
  maxContextWindow?: number;
  /** Whether the model accepts images. */
  supportsVision?: boolean;
  /** Provider-specific metadata, e.g. pricing. */
  _meta?: Meta;
}

/** An agent backend the server speaks to. */
export interface AgentInfo {
  /** Agent provider id, e.g. `claude-code`. */
  provider: string;
  /** Human-readable name. */
  displayName: string;
  /** Description string. */
  description: string;
  /** Models the agent offers. */
  models: SessionModelInfo[];
  /** OAuth protected resources the agent requires; carried without interpretation. */
  protectedResources?: JsonObject[];
  /** Customizations associated with the agent; carried without interpretation. */
  customizations?: JsonObject[];
  /** Static agent capabilities (multi-chat, fork); carried without interpretation. */
  capabilities?: JsonObject;
}

/** Global state every client subscribed to `ahp-root://` sees. */
export interface RootState {
  /** Agent backends the server speaks to. */
  agents: AgentInfo[];
  /** Number of sessions that are not disposed. */
  activeSessions?: number;
  /** Lightweight terminal catalogue; this server has no terminals and omits it. */
  terminals?: JsonObject[];
  /** Host configuration schema and values; carried without interpretation. */
  config?: JsonObject;
  /** Implementation-defined metadata about the host. */
  _meta?: Meta;
}
