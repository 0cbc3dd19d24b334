import { SessionAccessDeniedError } from '@agentstore/core';
import { d1Store } from '@agentstore/d1';
import type { Env } from './env.ts';

export { AgentSession } from './agent-session.ts';

/**
 * POST /sessions/:id/messages  { "message": "…" }  → runs the agent in the session's Durable Object
 * GET  /sessions/:id                               → the stored conversation
 * GET  /sessions                                   → the caller's sessions, straight from D1
 * The caller is `x-user-id` here; use your real authentication instead.
 */
export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const userId = request.headers.get('x-user-id');
    if (!userId) return Response.json({ error: 'x-user-id header required' }, { status: 401 });
    const [, collection, rawId, action] = url.pathname.split('/');
    if (collection !== 'sessions') return new Response('not found', { status: 404 });
    const store = d1Store({ binding: env.DB });

    if (rawId === undefined || rawId === '') {
      const page = await store.listSessions({
        ownerId: userId,
        limit: 20,
        cursor: url.searchParams.get('cursor'),
      });
      return Response.json({ sessions: page.sessions.map((s) => s.id), nextCursor: page.nextCursor });
    }
    const sessionId = decodeURIComponent(rawId);

    if (request.method === 'POST' && action === 'messages') {
      const { message } = (await request.json()) as { message: string };
      const session = env.AGENT_SESSIONS.get(env.AGENT_SESSIONS.idFromName(sessionId));
      return Response.json(await session.send({ sessionId, userId, message }));
    }
    if (request.method === 'GET' && action === undefined) {
      const loaded = await store.load(sessionId);
      // Someone else's session looks exactly like a missing one.
      if (!loaded || loaded.session.ownerId !== userId) {
        const denied = new SessionAccessDeniedError({ sessionId });
        return Response.json({ error: denied.message }, { status: 404 });
      }
      return Response.json({
        headSeq: loaded.session.headSeq,
        messages: loaded.messages.map(({ seq, role, content, toolCalls }) => ({
          seq,
          role,
          content,
          toolCalls,
        })),
      });
    }
    return new Response('not found', { status: 404 });
  },
};
