import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, idempotencyKeyFor, run, tool } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

describe('the write protocol', () => {
  it('commits write #1 (user + assistant with tool calls) before any handler runs', async () => {
    const store = durableMemoryStore();
    let seenByHandler: string[] = [];
    const agent = defineAgent({
      name: 'probe',
      instructions: '',
      tools: {
        probe: tool({
          description: 'looks at the store',
          input: z.object({}),
          handler: async (_input, ctx) => {
            const stored = await store.load(ctx.sessionId!);
            seenByHandler = stored!.messages.map((m) => m.role);
            return null;
          },
        }),
      },
    });
    await run(agent, {
      store,
      sessionId: 'w1',
      message: 'go',
      llm: scriptedLlm([{ toolCalls: [{ id: 'p', name: 'probe', input: {} }] }, { text: 'ok' }]),
    });
    expect(seenByHandler).toEqual(['user', 'assistant']);
  });

  it('commits each tool result as soon as its handler settles, not when the whole step ends', async () => {
    const store = durableMemoryStore();
    let storedWhileSlowRan: string[] = [];
    let fastDone!: () => void;
    const fastFinished = new Promise<void>((resolve) => {
      fastDone = resolve;
    });
    const agent = defineAgent({
      name: 'parallel',
      instructions: '',
      tools: {
        fast: tool({
          description: 'fast',
          input: z.object({}),
          handler: async () => {
            fastDone();
            return 'fast';
          },
        }),
        slow: tool({
          description: 'slow',
          input: z.object({}),
          handler: async (_input, ctx) => {
            await fastFinished;
            // Give the fast result's append a moment to land.
            for (let i = 0; i < 20 && storedWhileSlowRan.length < 3; i++) {
              await new Promise((resolve) => setTimeout(resolve, 5));
              storedWhileSlowRan = (await store.load(ctx.sessionId!))!.messages.map(
                (m) => m.toolName ?? m.role,
              );
            }
            return 'slow';
          },
        }),
      },
    });
    const result = await run(agent, {
      store,
      sessionId: 'w2',
      message: 'go',
      llm: scriptedLlm([
        {
          toolCalls: [
            { id: 's', name: 'slow', input: {} },
            { id: 'f', name: 'fast', input: {} },
          ],
        },
        { text: 'ok' },
      ]),
    });
    expect(storedWhileSlowRan).toEqual(['user', 'assistant', 'fast']);
    expect(result.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('gives tool calls without provider ids ids fixed by their assistant message, unique across sessions', async () => {
    const first = await runWithoutIds('ids-1');
    const second = await runWithoutIds('ids-2');
    expect(first.ids).toEqual([`call_${first.assistantId}_0`, `call_${first.assistantId}_1`]);
    expect(new Set([...first.ids, ...second.ids]).size).toBe(4);
  });

  async function runWithoutIds(sessionId: string) {
    const store = durableMemoryStore();
    const agent = defineAgent({
      name: 'ids',
      instructions: '',
      tools: {
        echo: tool({ description: 'echo', input: z.object({ n: z.number() }), handler: ({ n }) => n }),
      },
    });
    const result = await run(agent, {
      store,
      sessionId,
      message: 'go',
      llm: scriptedLlm([
        {
          toolCalls: [
            { name: 'echo', input: { n: 1 } },
            { name: 'echo', input: { n: 2 } },
          ],
        },
        { text: 'ok' },
      ]),
    });
    const assistant = result.messages.find((m) => m.toolCalls)!;
    const resultIds = result.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
    expect(resultIds.sort()).toEqual(assistant.toolCalls!.map((c) => c.id).sort());
    return { ids: assistant.toolCalls!.map((c) => c.id), assistantId: assistant.id };
  }

  it('hands every handler its context: session, call id, idempotency key, attempt, signal, owner, tenant', async () => {
    const store = durableMemoryStore();
    const seen: unknown[] = [];
    const agent = defineAgent({
      name: 'ctx',
      instructions: '',
      tools: {
        look: tool({
          description: 'records ctx',
          input: z.object({}),
          handler: (_input, ctx) => {
            seen.push({ ...ctx, signal: ctx.signal instanceof AbortSignal });
            return null;
          },
        }),
      },
    });
    await run(agent, {
      store,
      sessionId: 'ctx-1',
      message: 'go',
      ownerId: 'u',
      tenantId: 't',
      llm: scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'look', input: {} }] }, { text: 'ok' }]),
    });
    expect(seen).toEqual([
      {
        sessionId: 'ctx-1',
        toolCallId: 'c1',
        // Scoped to this incarnation of the session id (see session-incarnations.test.ts).
        idempotencyKey: await idempotencyKeyFor(
          'ctx-1',
          'c1',
          (await store.load('ctx-1'))!.session.incarnationId,
        ),
        attempt: 1,
        signal: true,
        ownerId: 'u',
        tenantId: 't',
      },
    ]);
    expect(await idempotencyKeyFor('ctx-1', 'c1')).toMatch(/^agentstore_[0-9a-f]{64}$/);
    expect(await idempotencyKeyFor('ctx-2', 'c1')).not.toBe(await idempotencyKeyFor('ctx-1', 'c1'));
  });

  it('stores tool results as role "tool" messages whose content is the JSON of the result', async () => {
    const store = durableMemoryStore();
    const agent = defineAgent({
      name: 'json',
      instructions: '',
      tools: {
        data: tool({
          description: 'data',
          input: z.object({}),
          handler: () => ({ nested: { list: [1, 'two', null] } }),
        }),
      },
    });
    await run(agent, {
      store,
      sessionId: 'json-1',
      message: 'go',
      llm: scriptedLlm([{ toolCalls: [{ id: 'd', name: 'data', input: {} }] }, { text: 'ok' }]),
    });
    const { messages } = (await store.load('json-1'))!;
    const result = messages.find((m) => m.role === 'tool')!;
    expect(result).toMatchObject({ toolCallId: 'd', toolName: 'data', seq: 3 });
    expect(JSON.parse(result.content)).toEqual({ nested: { list: [1, 'two', null] } });
  });
});

describe('tool failures the model reasons about', () => {
  const agent = defineAgent({
    name: 'failing',
    instructions: '',
    tools: {
      strict: tool({
        description: 'validates input and output',
        input: z.object({ n: z.number().int() }),
        output: z.object({ ok: z.literal(true) }),
        handler: ({ n }) => (n > 0 ? { ok: true as const } : (JSON.parse('{"ok":false}') as { ok: true })),
      }),
      boom: tool({
        description: 'throws',
        input: z.object({}),
        handler: () => {
          throw new Error('upstream 503');
        },
      }),
    },
  });

  it('records invalid input, a thrown handler, an invalid output and an unknown tool as typed results', async () => {
    const store = durableMemoryStore();
    const result = await run(agent, {
      store,
      sessionId: 'fail-1',
      message: 'go',
      llm: scriptedLlm([
        {
          toolCalls: [
            { id: 'in', name: 'strict', input: { n: 'x' } },
            { id: 'th', name: 'boom', input: {} },
            { id: 'out', name: 'strict', input: { n: -1 } },
            { id: 'unk', name: 'nope', input: {} },
          ],
        },
        { text: 'handled' },
      ]),
    });
    const byCall = Object.fromEntries(
      result.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m]),
    );
    expect(byCall.in!.kind).toBe('tool-input-error');
    expect(byCall.th).toMatchObject({
      kind: 'tool-error',
      content: JSON.stringify({ error: 'upstream 503' }),
    });
    expect(byCall.out!.kind).toBe('tool-output-error');
    expect(byCall.unk!.kind).toBe('tool-error');
    expect(result.status).toBe('complete');
  });

  it('stops with status max-iterations when the model never finishes', async () => {
    const looping = defineAgent({
      name: 'loop',
      instructions: '',
      maxIterations: 2,
      tools: {
        noop: tool({ description: 'noop', input: z.object({}), safeToRetry: true, handler: () => null }),
      },
    });
    const store = durableMemoryStore();
    const step = { toolCalls: [{ name: 'noop', input: {} }] };
    const result = await run(looping, {
      store,
      sessionId: 'max',
      message: 'go',
      llm: scriptedLlm([step, step, step]),
    });
    expect(result.status).toBe('max-iterations');
    expect((await store.load('max'))!.session.lease).toBeNull();
  });

  it('stops when the caller aborts, releasing the lease', async () => {
    const controller = new AbortController();
    const store = durableMemoryStore();
    const slow = defineAgent({
      name: 'abortable',
      instructions: '',
      tools: {
        wait: tool({
          description: 'waits for abort',
          input: z.object({}),
          handler: (_input, ctx) =>
            new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
        }),
      },
    });
    const running = run(slow, {
      store,
      sessionId: 'abort',
      message: 'go',
      signal: controller.signal,
      llm: scriptedLlm([{ toolCalls: [{ id: 'w', name: 'wait', input: {} }] }]),
    });
    setTimeout(() => controller.abort(new Error('user cancelled')), 20);
    await expect(running).rejects.toThrow('user cancelled');
    const stored = (await store.load('abort'))!;
    expect(stored.session.lease).toBeNull();
    // The interrupted call is left unanswered for the next run to resolve, not recorded as an error.
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});
