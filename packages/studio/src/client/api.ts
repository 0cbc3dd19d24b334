// The studio's JSON API, as the page sees it. Fields a newer core writes (parts, usage) are optional.
export interface Lease {
  holder: string;
  epoch: number;
  expiresAt: string;
}

export interface SessionRow {
  id: string;
  agentName: string;
  ownerId: string | null;
  tenantId: string | null;
  headSeq: number;
  lease: Lease | null;
  createdAt: string;
  updatedAt: string;
  status: string;
  interruptedCallIds: string[];
  awaitingApprovalCallIds: string[];
  response: string | null;
}

export interface SessionDetail extends Omit<SessionRow, 'status'> {
  status: string;
}

export interface SessionAnswer extends Omit<SessionRow, 'id'> {
  session: SessionRow & { state: unknown };
  viewSeq: number;
  asOf: { seq: number; headSeqNow: number } | null;
  logStatus: string;
}

export interface Part {
  type: string;
  [key: string]: unknown;
}

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
  cacheWriteTokens?: number;
  modelId?: string;
  responseId?: string;
}

export interface MessageView {
  id: string;
  seq: number;
  role: string;
  content: string;
  createdAt: string;
  kind?: string;
  toolCalls?: { id: string; name: string; input: unknown; idempotencyKey: string }[];
  toolCallId?: string;
  toolName?: string;
  origin?: { via: string; attempt: number };
  idempotencyKey?: string;
  parts?: Part[];
  usage?: Usage;
}

export interface MessagesAnswer {
  headSeq: number;
  lease: Lease | null;
  updatedAt: string;
  messages: MessageView[];
}

export interface Info {
  scope: { tenantId?: string; ownerId?: string };
  csrfToken: string;
  statuses: string[];
  maxMessagePage: number;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export async function getJson<T>(path: string, params: Record<string, string | number | undefined> = {}) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') query.set(k, String(v));
  const text = query.toString();
  const res = await fetch(text ? `${path}?${text}` : path, { credentials: 'same-origin' });
  const body = (await res.json().catch(() => ({}))) as { error?: string };
  if (!res.ok) throw new ApiError(res.status, body.error ?? `HTTP ${res.status}`);
  return body as T;
}

export const sessionPath = (id: string) => `/api/sessions/${encodeURIComponent(id)}`;
