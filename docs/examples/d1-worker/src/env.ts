import type { AgentSession } from './agent-session.ts';

/** The Worker's bindings (see wrangler.jsonc). */
export interface Env {
  /** The D1 database that holds every session (agentstore_* tables) and the demo refunds table. */
  DB: D1Database;
  /** One Durable Object per session id. */
  AGENT_SESSIONS: DurableObjectNamespace<AgentSession>;
  /** An OpenAI-compatible chat completions endpoint, e.g. https://api.openai.com/v1. */
  LLM_BASE_URL: string;
  /** Secret: `wrangler secret put LLM_API_KEY`. */
  LLM_API_KEY: string;
  LLM_MODEL: string;
  /** Lease time-to-live in ms (default 30 000); a crashed run is resumed after twice this. */
  LEASE_TTL_MS?: string;
}
