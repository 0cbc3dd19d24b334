import { describe, expect, it } from 'vitest';
import type { AppendInput, NewMessage } from '../src/index.ts';
import { validateAppendInput } from '../src/store/index.ts';
import { durableMemoryStore } from '../src/testing/index.ts';

const init = { agentName: 'a', ownerId: 'o', tenantId: null, state: null };
let n = 0;
const message = (fields: Partial<NewMessage> = {}): NewMessage => ({
  id: `m${++n}`,
  role: 'user',
  content: 'hi',
  createdAt: '2026-01-01T00:00:00.000Z',
  ...fields,
});

describe('the store boundary (memory store, the reference)', () => {
  it('refuses every hostile append with the path, writes nothing, and the session stays usable', async () => {
    const store = durableMemoryStore();
    await store.append('s', { expectedSeq: 0, messages: [message()], session: { init }, lease: null });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const hostile: [string, Partial<AppendInput>][] = [
      ['messages[0]', { messages: [null as never] }],
      ['messages[0].seq', { messages: [{ ...message(), seq: 7 } as NewMessage] }],
      [
        'messages[0].toolCalls[0].input.when',
        {
          messages: [
            message({
              role: 'assistant',
              toolCalls: [{ id: 'c', name: 't', input: { when: new Date() as never } }],
            }),
          ],
        },
      ],
      [
        'messages[0].toolCalls[0].extra',
        {
          messages: [
            message({ role: 'assistant', toolCalls: [{ id: 'c', name: 't', input: 1, extra: 1 } as never] }),
          ],
        },
      ],
      ['messages[0].id', { messages: [message({ id: 'x\uD800' })] }],
      ['messages[0].content', { messages: [message({ content: 'x\uDBFF' })] }],
      ['messages[0].origin.via', { messages: [message({ origin: { via: 'magic' as never, attempt: 1 } })] }],
      ['session.state.f', { session: { state: { f: () => 1 } as never } }],
      ['session.state.self', { session: { state: cyclic as never } }],
      ['session.state.n', { session: { state: { n: 1n } as never } }],
      ['session.init.ownerId', { session: { init: { ...init, ownerId: 'user-\uD800' } } }],
      ['lease.holder', { lease: { holder: 'h\uDFFF', epoch: 1 } }],
      ['input.extra', { extra: true } as never],
    ];
    const sparse: NewMessage[] = [message()];
    sparse[2] = message();
    hostile.push(['messages[1]', { messages: sparse }]);
    for (const [argument, fields] of hostile) {
      const input = { expectedSeq: 1, messages: [message()], lease: null, ...fields } as AppendInput;
      await expect(store.append('s', input), argument).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        argument,
      });
    }
    const loaded = await store.load('s');
    expect(loaded?.session.headSeq).toBe(1);
    expect(await store.append('s', { expectedSeq: 1, messages: [message()], lease: null })).toEqual({
      headSeq: 2,
    });
  });

  it('refuses ill-formed ids, owners, tenants, holders and filters in every method', async () => {
    const store = durableMemoryStore();
    for (const bad of ['x\uD800', 'x\uDBFF', 'x\uDFFF']) {
      await expect(store.load(bad)).rejects.toMatchObject({ argument: 'sessionId' });
      await expect(store.deleteSession(bad)).rejects.toMatchObject({ argument: 'sessionId' });
      await expect(store.acquireLease('s', { holder: bad, ttlMs: 1000, init })).rejects.toMatchObject({
        argument: 'holder',
      });
      for (const key of ['ownerId', 'tenantId', 'agentName'] as const) {
        await expect(
          store.acquireLease('s', { holder: 'h', ttlMs: 1000, init: { ...init, [key]: bad } }),
        ).rejects.toMatchObject({
          argument: `init.${key}`,
        });
        await expect(store.listSessions({ [key]: bad, limit: 5 })).rejects.toMatchObject({ argument: key });
      }
      await expect(store.renewLease('s', { holder: bad, epoch: 1, ttlMs: 1000 })).rejects.toMatchObject({
        argument: 'input.holder',
      });
      await expect(store.releaseLease('s', { holder: bad, epoch: 1 })).rejects.toMatchObject({
        argument: 'input.holder',
      });
    }
    await expect(
      store.acquireLease('s', {
        holder: 'h',
        ttlMs: 1000,
        init: { ...init, state: { d: new Date() } as never },
      }),
    ).rejects.toMatchObject({
      argument: 'init.state.d',
    });
    expect(await store.load('s')).toBeNull();
    // The aliasing this prevents: U+FFFD itself is an ordinary, distinct character.
    await store.acquireLease('user-\uFFFD', {
      holder: 'h',
      ttlMs: 1000,
      init: { ...init, ownerId: 'o-\uFFFD' },
    });
    expect((await store.load('user-\uFFFD'))?.session.ownerId).toBe('o-\uFFFD');
  });

  it('stores a copy: mutating what was appended or loaded changes nothing stored', async () => {
    const store = durableMemoryStore();
    const state = { list: [1, 2] };
    const appended = message({ role: 'assistant', toolCalls: [{ id: 'c', name: 't', input: { v: [1] } }] });
    await store.append('copy', {
      expectedSeq: 0,
      messages: [appended],
      session: { init, state },
      lease: null,
    });
    state.list.push(3);
    (appended.toolCalls![0]!.input as { v: number[] }).v.push(2);
    const first = await store.load('copy');
    (first!.session.state as { list: number[] }).list.push(4);
    const again = await store.load('copy');
    expect(again?.session.state).toEqual({ list: [1, 2] });
    expect(again?.messages[0]?.toolCalls?.[0]?.input).toEqual({ v: [1] });
  });

  it('enforces maxAppendBytes with a PayloadTooLargeError in bytes', () => {
    const limits = { maxMessageBytes: 1000, maxMessagesPerAppend: 10, maxAppendBytes: 500 };
    const big = message({ content: 'x'.repeat(300) });
    const input = { expectedSeq: 0, messages: [big, message({ content: 'y'.repeat(300) })], lease: null };
    expect(() => validateAppendInput('s', input, limits)).toThrow(
      expect.objectContaining({ code: 'PAYLOAD_TOO_LARGE', subject: 'append', unit: 'bytes', limit: 500 }),
    );
    expect(() => validateAppendInput('s', { ...input, messages: [big] }, limits)).not.toThrow();
  });
});
