import { type AgentStore, isAgentStoreError, type SessionRecord } from '@agentstore/core';
import { viewMessages } from './message-view.ts';
import { inScope, type StudioScope, scopedFilter } from './scope.ts';
import { loadLastStep, SESSION_STATUSES, type SessionStatus, statusOf } from './session-status.ts';

/** A refusal of a request's parameters: HTTP 400 with the reason. */
export class BadRequest extends Error {}

export interface ApiResponse {
  status: number;
  body: unknown;
}

export const MAX_LIST_LIMIT = 100;
export const MAX_MESSAGE_PAGE = 500;

function wholeNumber(params: URLSearchParams, name: string, min: number, max: number, fallback: number) {
  const text = params.get(name);
  if (text === null || text === '') return fallback;
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new BadRequest(`${name} takes a whole number from ${min} to ${max}, not ${JSON.stringify(text)}`);
  return value;
}

const optional = (params: URLSearchParams, name: string) => {
  const value = params.get(name);
  return value === null || value === '' ? undefined : value;
};

/** The session as the page lists it: the record without its state, and its status. */
function summary(session: SessionRecord) {
  const { state: _state, ...rest } = session;
  return rest;
}

export function createApi(store: AgentStore, scope: StudioScope) {
  /** A session the scope may see, or null (outside the scope is the same answer as absent). */
  async function scopedLoad(id: string, afterSeq: number) {
    const loaded = await store.load(id, { afterSeq });
    return loaded && inScope(scope, loaded.session) ? loaded : null;
  }

  async function listSessions(params: URLSearchParams): Promise<ApiResponse> {
    const limit = wholeNumber(params, 'limit', 1, MAX_LIST_LIMIT, 25);
    const status = optional(params, 'status');
    if (status !== undefined && !SESSION_STATUSES.includes(status as SessionStatus))
      throw new BadRequest(`status must be one of ${SESSION_STATUSES.join(', ')}`);
    const filter = scopedFilter(scope, {
      ...(optional(params, 'tenant') !== undefined ? { tenantId: optional(params, 'tenant')! } : {}),
      ...(optional(params, 'owner') !== undefined ? { ownerId: optional(params, 'owner')! } : {}),
    });
    if (filter === null) return { status: 200, body: { sessions: [], nextCursor: null, scanned: 0 } };
    const agentName = optional(params, 'agent');
    // One page of the store's own listing; the status filter applies within it (the store cannot
    // filter by status), so a page may hold fewer matches than `limit` and still have a next one.
    const page = await store.listSessions({
      ...filter,
      ...(agentName !== undefined ? { agentName } : {}),
      limit,
      cursor: optional(params, 'cursor') ?? null,
    });
    const now = Date.now();
    // One bounded tail load per listed session (at most `limit`), never the whole table.
    const rows = await Promise.all(
      page.sessions.map(async (session) => {
        const lastStep = await loadLastStep(store, session, session.headSeq);
        return { ...summary(session), ...statusOf(session, lastStep, { now, asOf: false }) };
      }),
    );
    return {
      status: 200,
      body: {
        sessions: status === undefined ? rows : rows.filter((r) => r.status === status),
        nextCursor: page.nextCursor,
        scanned: page.sessions.length,
      },
    };
  }

  async function getSession(id: string, params: URLSearchParams): Promise<ApiResponse> {
    const at = wholeNumber(params, 'at', 0, Number.MAX_SAFE_INTEGER, -1);
    // Only the session record: `afterSeq` at a far seq loads no message.
    const loaded = await scopedLoad(id, Number.MAX_SAFE_INTEGER);
    if (!loaded) return notFound(id);
    const { session } = loaded;
    const asOf = at >= 0;
    const upTo = asOf ? Math.min(at, session.headSeq) : session.headSeq;
    const lastStep = await loadLastStep(store, session, upTo);
    return {
      status: 200,
      body: {
        session: {
          ...session,
          // The log records messages, not leases or state: a past view knows neither (as loadSessionAt).
          ...(asOf ? { lease: null, updatedAt: lastStep.at(-1)?.createdAt ?? session.createdAt } : {}),
        },
        viewSeq: upTo,
        asOf: asOf ? { seq: upTo, headSeqNow: session.headSeq, leaseKnown: false, stateKnown: false } : null,
        ...statusOf(session, lastStep, { now: Date.now(), asOf }),
      },
    };
  }

  async function getMessages(id: string, params: URLSearchParams): Promise<ApiResponse> {
    const afterSeq = wholeNumber(params, 'afterSeq', 0, Number.MAX_SAFE_INTEGER, 0);
    const limit = wholeNumber(params, 'limit', 1, MAX_MESSAGE_PAGE, 200);
    const at = wholeNumber(params, 'at', 0, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    // The contract's load has no upper bound: the store reads from afterSeq to the head, and
    // only the page (at most `limit` messages) is sent on.
    const loaded = await scopedLoad(id, afterSeq);
    if (!loaded) return notFound(id);
    const upTo = Math.min(at, afterSeq + limit);
    const messages = loaded.messages.filter((m) => m.seq <= upTo);
    return {
      status: 200,
      body: {
        headSeq: loaded.session.headSeq,
        lease: loaded.session.lease,
        updatedAt: loaded.session.updatedAt,
        messages: await viewMessages(loaded.session, messages),
      },
    };
  }

  return {
    async handle(path: string, params: URLSearchParams): Promise<ApiResponse> {
      try {
        if (path === '/api/sessions') return await listSessions(params);
        const match = /^\/api\/sessions\/([^/]+)(\/messages)?$/.exec(path);
        if (match) {
          const id = decodeId(match[1]!);
          return match[2] ? await getMessages(id, params) : await getSession(id, params);
        }
        return { status: 404, body: { error: `no such endpoint ${path}` } };
      } catch (error) {
        if (error instanceof BadRequest) return { status: 400, body: { error: error.message } };
        // A value the store refuses (a cursor it never wrote, an ill-formed id) is the caller's mistake.
        if (isAgentStoreError(error, 'INVALID_ARGUMENT'))
          return { status: 400, body: { error: error.message } };
        throw error;
      }
    },
  };
}

function decodeId(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new BadRequest(`the session id in the path is not valid percent-encoding: ${text}`);
  }
}

const notFound = (id: string): ApiResponse => ({
  status: 404,
  body: { error: `session ${JSON.stringify(id)} not found` },
});
