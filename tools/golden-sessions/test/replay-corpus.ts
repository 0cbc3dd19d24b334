import { type AgentStore, type MessageRecord, run } from '@agentstore/core';
import { unreachableLlm } from '@agentstore/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answeringLlm, goldenAgent, type HandlerLog } from '../src/agent.ts';
import {
  corpusDir,
  type ExpectedFile,
  type GoldenSession,
  readJson,
  releasesOf,
  type StoreName,
} from '../src/corpus-files.ts';
import type { CorpusBackend, RestoredStore } from '../src/stores/backend.ts';
import { BACKENDS } from '../src/stores/index.ts';

const NEW_TURN = 'One more question, asked under the current code.';
const NEW_ANSWER = 'Answered by the current code.';

interface Usage {
  inputTokens: number;
  outputTokens: number;
}
const usageOf = (state: unknown): Usage => (state as { usage: Usage }).usage;

/** The tool-call ids of the last assistant message: the calls a crashed or waiting session left open. */
const openCalls = (messages: MessageRecord[]) =>
  messages.findLast((m) => m.role === 'assistant')?.toolCalls ?? [];

/**
 * Resumes `golden` the way its end state asks and returns the head after it: a completed session
 * answers from the store alone; an interrupted one has its orphans handled; a waiting one takes
 * a decision and completes.
 */
async function resume(
  store: AgentStore,
  golden: GoldenSession,
  log: HandlerLog,
): Promise<{ head: number; modelCalls: number }> {
  const { session, messages } = golden.load;
  const agent = goldenAgent(log);
  const base = {
    store,
    sessionId: session.id,
    ownerId: session.ownerId,
    tenantId: session.tenantId,
    leaseWaitMs: 10_000,
  };
  if (golden.end === 'complete') {
    const again = await run(agent, { ...base, llm: unreachableLlm() });
    expect(again).toMatchObject({ status: 'complete', response: golden.answer, headSeq: session.headSeq });
    expect(log.calls).toEqual([]);
    return { head: again.headSeq, modelCalls: 0 };
  }
  if (golden.end === 'interrupted') {
    const llm = answeringLlm('Resumed after the crash.');
    const resumed = await run(agent, { ...base, llm });
    expect(resumed.status).toBe('complete');
    const calls = openCalls(messages);
    expect(calls.length).toBeGreaterThan(0);
    const results = resumed.messages.slice(messages.length).filter((m) => m.role === 'tool');
    expect(results.map((r) => r.toolCallId).sort()).toEqual(calls.map((c) => c.id).sort());
    for (const call of calls) {
      const result = results.find((r) => r.toolCallId === call.id);
      // A call that is not safe to retry never fires again: the model learns it may have happened.
      if (agent.tools[call.name]?.safeToRetry) {
        expect(result?.origin).toEqual({ via: 'handler', attempt: 2 });
      } else {
        expect(result).toMatchObject({
          kind: 'tool-durability-error',
          origin: { via: 'durability-error', attempt: 0 },
        });
      }
    }
    const retried = calls.filter((c) => agent.tools[c.name]?.safeToRetry).map((c) => c.id);
    expect(log.calls.map((c) => c.toolCallId)).toEqual(retried);
    // The model saw every result before it answered.
    expect(llm.requests[0]?.filter((m) => m.role === 'tool').map((m) => m.toolCallId)).toEqual(
      expect.arrayContaining(calls.map((c) => c.id)),
    );
    return { head: resumed.headSeq, modelCalls: llm.requests.length };
  }
  // Without a decision the run refuses, naming the waiting calls, before any model call or write.
  const pending = openCalls(messages).map((c) => c.id);
  expect(pending.length).toBeGreaterThan(0);
  await expect(run(agent, { ...base, llm: unreachableLlm() })).rejects.toMatchObject({
    code: 'APPROVAL_REQUIRED',
    sessionId: session.id,
    toolCallIds: pending,
  });
  expect((await store.load(session.id))?.session.headSeq).toBe(session.headSeq);
  const llm = answeringLlm('Done, as approved.');
  const approvals = Object.fromEntries(pending.map((id) => [id, { approve: true as const }]));
  const decided = await run(agent, { ...base, approvals, llm });
  expect(decided.status).toBe('complete');
  expect(log.calls.map((c) => c.toolCallId)).toEqual(pending);
  return { head: decided.headSeq, modelCalls: llm.requests.length };
}

async function checkSession(store: AgentStore, golden: GoldenSession): Promise<void> {
  const { session, messages } = golden.load;
  const loaded = await store.load(session.id);
  expect(loaded?.messages).toEqual(messages);
  expect(loaded?.session).toMatchObject({
    id: session.id,
    agentName: session.agentName,
    ownerId: session.ownerId,
    tenantId: session.tenantId,
    state: session.state,
    headSeq: session.headSeq,
    createdAt: session.createdAt,
  });

  const log: HandlerLog = { calls: [] };
  const resumed = await resume(store, golden, log);

  // A new turn: the old conversation reaches the model, and the old messages stay as written.
  const llm = answeringLlm(NEW_ANSWER);
  const next = await run(goldenAgent(log), {
    store,
    sessionId: session.id,
    ownerId: session.ownerId,
    tenantId: session.tenantId,
    message: NEW_TURN,
    llm,
  });
  expect(next).toMatchObject({ status: 'complete', response: NEW_ANSWER, headSeq: resumed.head + 2 });
  const sent = llm.requests[0] ?? [];
  const userTexts = messages.filter((m) => m.role === 'user').map((m) => m.content);
  expect(sent.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([...userTexts, NEW_TURN]);
  const answered = messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
  expect(sent.filter((m) => m.role === 'tool').map((m) => m.toolCallId)).toEqual(
    expect.arrayContaining(answered),
  );

  const after = await store.load(session.id);
  expect(after?.messages.slice(0, messages.length)).toEqual(messages);
  expect(after?.messages.slice(-2)).toMatchObject([
    { role: 'user', content: NEW_TURN, seq: resumed.head + 1 },
    { role: 'assistant', content: NEW_ANSWER, seq: resumed.head + 2 },
  ]);
  // The usage the old code kept in state goes on adding up (answeringLlm: 3 in, 2 out per call).
  const calls = resumed.modelCalls + 1;
  const before = usageOf(session.state);
  expect(usageOf(after?.session.state)).toEqual({
    inputTokens: before.inputTokens + 3 * calls,
    outputTokens: before.outputTokens + 2 * calls,
  });
}

/**
 * Registers, for every release's corpus of `name`: restore the raw dump into a fresh namespace
 * on a fresh real server, then load, list, resume and continue each session with the current code.
 */
export function replayCorpus(name: StoreName): void {
  const releases = releasesOf(name);
  let backend: CorpusBackend | undefined;
  beforeAll(async () => {
    backend = await BACKENDS[name]();
  });
  afterAll(async () => {
    await backend?.stop();
  });

  it('has a committed corpus', () => {
    expect(releases.length).toBeGreaterThan(0);
  });

  for (const release of releases) {
    describe(`sessions written by ${release}`, () => {
      const dir = corpusDir(name, release);
      const expected = readJson<ExpectedFile>(dir, 'expected.json');
      let restored: RestoredStore | undefined;
      beforeAll(async () => {
        restored = await backend!.restore(dir);
      });
      afterAll(async () => {
        await restored?.close();
      });

      it('lists them by owner as they were written', async () => {
        const owners = [...new Set(expected.sessions.map((s) => s.load.session.ownerId))];
        for (const ownerId of owners) {
          if (ownerId === null) continue;
          const want = expected.sessions
            .filter((s) => s.load.session.ownerId === ownerId)
            .map((s) => s.sessionId);
          const listed = await restored!.store.listSessions({ ownerId, limit: 100 });
          expect(listed.sessions.map((s) => s.id).sort()).toEqual(want.sort());
        }
      });

      for (const golden of expected.sessions) {
        it(`${golden.scenario}: loads as written, resumes, takes a new turn`, async () => {
          await checkSession(restored!.store, golden);
        });
      }
    });
  }
}
