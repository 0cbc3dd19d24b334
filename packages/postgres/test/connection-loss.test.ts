import { AgentStoreError, defineAgent, run, SeqConflictError, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { describe, expect, it } from 'vitest';
import { init, message, uniqueId, usePostgres, useProxiedStore } from './harness.ts';

const server = usePostgres('loss');

/** Seqs and ids exactly as stored, read with plain SQL (not through the store). */
async function stored(sessionId: string) {
  const { rows } = await server.pool.query<{ seq: string; body: string }>(
    `SELECT seq, body FROM "${server.schema}".agentstore_messages WHERE session_id = $1 ORDER BY seq`,
    [sessionId],
  );
  return rows.map((row) => ({ seq: Number(row.seq), id: JSON.parse(row.body).id as string }));
}

const anyInput = {
  '~standard': { version: 1 as const, vendor: 'test', validate: (value: unknown) => ({ value }) },
};

describe('connection loss during an append', () => {
  const via = useProxiedStore(server);

  it('an answer lost after commit is an untyped error; a re-read shows the messages exactly once', async () => {
    const id = uniqueId();
    await via.store.append(id, {
      expectedSeq: 0,
      messages: [message('a')],
      session: { init: init() },
      lease: null,
    });
    const dropped = via.proxy.loseNextAnswer();
    const lost = [message('b'), message('c')];
    const error = await via.store.append(id, { expectedSeq: 1, messages: lost, lease: null }).catch((e) => e);
    await dropped;
    // Not a typed store error: the caller must treat the outcome as unknown and re-read.
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(AgentStoreError);
    expect(await stored(id)).toEqual([
      { seq: 1, id: 'a' },
      { seq: 2, id: 'b' },
      { seq: 3, id: 'c' },
    ]);
    const reread = await via.store.load(id, { afterSeq: 1 });
    expect(reread?.messages.map((m) => m.id)).toEqual(['b', 'c']);
    // Blindly retrying cannot duplicate: the guard refuses it.
    await expect(
      via.store.append(id, { expectedSeq: 1, messages: lost, lease: null }),
    ).rejects.toBeInstanceOf(SeqConflictError);
    expect((await stored(id)).length).toBe(3);
  });

  it('a backend killed before commit writes nothing, and the retry lands once', async () => {
    const id = uniqueId();
    await via.store.append(id, {
      expectedSeq: 0,
      messages: [message('a')],
      session: { init: init() },
      lease: null,
    });
    // Hold the session row so the append blocks inside its statement, then kill its backend.
    const locker = await server.pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM "${server.schema}".agentstore_sessions WHERE id = $1 FOR UPDATE`, [
        id,
      ]);
      const pending = via.store
        .append(id, { expectedSeq: 1, messages: [message('b')], lease: null })
        .catch((e) => e);
      let pid: number | undefined;
      for (let i = 0; i < 200 && pid === undefined; i++) {
        const { rows } = await server.pool.query(
          `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH advanced AS%'`,
        );
        pid = rows[0]?.pid;
        if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(pid).toBeDefined();
      await server.pool.query('SELECT pg_terminate_backend($1)', [pid]);
      const error = await pending;
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(AgentStoreError);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    expect(await stored(id)).toEqual([{ seq: 1, id: 'a' }]);
    expect(await via.store.append(id, { expectedSeq: 1, messages: [message('b')], lease: null })).toEqual({
      headSeq: 2,
    });
    expect(await stored(id)).toEqual([
      { seq: 1, id: 'a' },
      { seq: 2, id: 'b' },
    ]);
  });

  it('run() resolves a lost tool-result ack by re-reading: the tool ran once and every message is stored once', async () => {
    const sessionId = uniqueId('run');
    const calls: string[] = [];
    let answersLost = 0;
    const agent = defineAgent({
      name: 'notifier',
      instructions: 'Notify.',
      tools: {
        notify: tool({
          description: 'Sends a notification (a side effect, not safe to retry)',
          input: anyInput,
          handler: async (_input, ctx) => {
            calls.push(ctx.toolCallId);
            // The write of this result reaches the server, but its answer never comes back.
            void via.proxy.loseNextAnswer().then(() => {
              answersLost += 1;
            });
            return { sent: true };
          },
        }),
      },
    });
    const llm = scriptedLlm([
      { toolCalls: [{ id: 'call-1', name: 'notify', input: { to: 'ops' } }] },
      { text: 'Done.' },
    ]);
    const result = await run(agent, { store: via.store, sessionId, message: 'go', llm });
    expect(result.status).toBe('complete');
    expect(result.response).toBe('Done.');
    expect(calls).toEqual(['call-1']);
    expect(answersLost).toBe(1);
    const rows = await stored(sessionId);
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    const loaded = await via.store.load(sessionId);
    expect(loaded?.messages.filter((m) => m.role === 'tool' && m.toolCallId === 'call-1')).toHaveLength(1);
    expect(loaded?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(loaded?.session.lease).toBeNull();
  });
});

/** A FATAL ErrorResponse (57P01, what pg_terminate_backend sends), as Postgres frames it. */
function fatalFrame(): Buffer {
  const fields = 'SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0';
  const body = Buffer.from(fields, 'latin1');
  const head = Buffer.alloc(5);
  head.write('E', 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

describe('a connection error read with the reply that frees the pool’s only client', () => {
  const via = useProxiedStore(server);

  // pg-pool stops listening for the client's 'error' when it hands the client to a waiter; the
  // FATAL parsed right behind the reply is emitted then. Unheard, it is an uncaught exception
  // that kills the process (vitest fails the run on it).
  const waiters = {
    append: (id: string) => via.store.append(id, { expectedSeq: 1, messages: [message('b')], lease: null }),
    deleteSession: (id: string) => via.store.deleteSession(id),
    migrate: (_id: string) => via.store.migrate(),
  };
  for (const [name, wait] of Object.entries(waiters)) {
    it(`${name}, waiting for the client, hears it: it fails, and the store goes on`, async () => {
      const id = uniqueId(name);
      await via.store.append(id, {
        expectedSeq: 0,
        messages: [message('a')],
        session: { init: init() },
        lease: null,
      });
      const ended = via.proxy.endAfterNextAnswer(fatalFrame());
      // The load holds the only client; the waiter is handed it as the load's reply is read.
      const holding = via.store.load(id);
      const waiting = wait(id).then(
        () => null,
        (error: unknown) => error,
      );
      expect((await holding)?.messages.map((m) => m.id)).toEqual(['a']);
      await ended;
      const error = await waiting;
      // Nothing was sent on the dead connection: an untyped error, the outcome to be re-read.
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(AgentStoreError);
      expect(await stored(id)).toEqual([{ seq: 1, id: 'a' }]);
      // The broken client was destroyed, not pooled: the next call gets a fresh connection.
      await via.store.append(id, { expectedSeq: 1, messages: [message('b')], lease: null });
      expect(await stored(id)).toEqual([
        { seq: 1, id: 'a' },
        { seq: 2, id: 'b' },
      ]);
    });
  }
});
