import { join } from 'node:path';
import { type AgentStore, type AppendInput, isAgentStoreError, type NewMessage } from '@agentstore/core';
import { durableMemoryStore, openToolTarget } from '@agentstore/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/*
 * Every store validates and stores one read of the caller's input. Without that,
 * `validateAppendInput` checks the caller's live objects, then every adapter serialises them again (`JSON.stringify(input.messages)` and the
 * like). Anything that answers differently on the second read — a getter, a Proxy, a
 * non-enumerable `toJSON` that the boundary never looks at but `JSON.stringify` honours — gets a
 * different value stored than the one validated. When that value is not a decodable message,
 * every later `load` throws CORRUPT_RECORD: the session is bricked by one accepted append.
 *
 * Each case asserts what the contract demands: the append is refused with a typed error and nothing
 * is written, or what was validated is what is stored; either way the session still loads and
 * takes an append at its head.
 */

const now = () => new Date().toISOString();
const init = { agentName: 'read-once', ownerId: null, tenantId: null, state: null };
const plain = (id: string): NewMessage => ({ id, role: 'user', content: 'fine', createdAt: now() });

interface Case {
  name: string;
  /** The hostile append after the seed message (expectedSeq 1), and the message it claims to hold. */
  make(): { input: AppendInput; validated: NewMessage };
}

const CASES: Case[] = [
  {
    name: 'a message whose getter answers differently on a later read',
    make() {
      let reads = 0;
      const validated = plain('m1');
      const message = { id: 'm1', role: 'user', createdAt: validated.createdAt } as NewMessage;
      Object.defineProperty(message, 'content', {
        enumerable: true,
        get: () => (++reads <= 1 ? validated.content : undefined),
      });
      return { input: { expectedSeq: 1, messages: [message], lease: null }, validated };
    },
  },
  {
    name: 'a Proxy message whose role changes after validation',
    make() {
      let reads = 0;
      const validated = plain('m1');
      const message = new Proxy(
        { ...validated },
        {
          get: (target, key) =>
            key === 'role' ? (++reads <= 1 ? 'user' : 'nobody') : Reflect.get(target, key),
        },
      );
      return { input: { expectedSeq: 1, messages: [message], lease: null }, validated };
    },
  },
  {
    name: 'a message with a non-enumerable toJSON (the boundary never sees it; JSON.stringify honours it)',
    make() {
      const validated = plain('m1');
      const message = { ...validated };
      Object.defineProperty(message, 'toJSON', { value: () => ({ ...validated, seq: 99 }) });
      return { input: { expectedSeq: 1, messages: [message], lease: null }, validated };
    },
  },
  {
    name: 'a messages array with a non-enumerable toJSON',
    make() {
      const validated = plain('m1');
      const messages = [{ ...validated }];
      Object.defineProperty(messages, 'toJSON', { value: () => [{ ...validated, seq: 7 }] });
      return { input: { expectedSeq: 1, messages, lease: null }, validated };
    },
  },
  {
    name: 'toolCalls[0].input with a non-enumerable toJSON returning undefined',
    make() {
      const input = { amount: 1 };
      Object.defineProperty(input, 'toJSON', { value: () => undefined });
      const createdAt = now();
      const fields = { id: 'm1', role: 'assistant' as const, content: '', createdAt };
      const validated: NewMessage = {
        ...fields,
        toolCalls: [{ id: 'c1', name: 'pay', input: { amount: 1 } }],
      };
      const message: NewMessage = { ...fields, toolCalls: [{ id: 'c1', name: 'pay', input }] };
      return { input: { expectedSeq: 1, messages: [message], lease: null }, validated };
    },
  },
  ...[1, 2, 3, 4].map(
    (flipAfter): Case => ({
      name: `session.state behind a getter that turns into a function after ${flipAfter} reads`,
      make() {
        let reads = 0;
        const validated = plain('m1');
        const session = Object.defineProperty({}, 'state', {
          enumerable: true,
          get: () => (++reads <= flipAfter ? { step: 1 } : () => 'not JSON'),
        }) as { state: { step: number } };
        return { input: { expectedSeq: 1, messages: [validated], session, lease: null }, validated };
      },
    }),
  ),
];

async function appendShifting(store: AgentStore, sessionId: string, c: Case) {
  await store.append(sessionId, {
    expectedSeq: 0,
    messages: [plain('seed')],
    session: { init },
    lease: null,
  });
  const { input, validated } = c.make();
  let refused: unknown = null;
  try {
    await store.append(sessionId, input);
  } catch (error) {
    refused = error;
  }
  return { refused, validated };
}

/** Each store through its adapter's `./testing` target module (a throwaway server), as the CLI opens it. */
const adapterModule = (name: string) =>
  join(import.meta.dirname, `../../packages/${name}/src/testing/index.ts`);
const STORES: [string, () => Promise<{ store: AgentStore; close: () => Promise<void> }>][] = [
  ['memory', async () => ({ store: durableMemoryStore(), close: async () => {} })],
  ...['sqlite', 'postgres', 'redis', 'dynamodb', 'd1'].map(
    (name): [string, () => Promise<{ store: AgentStore; close: () => Promise<void> }>] => [
      name,
      async () => {
        const target = await openToolTarget(adapterModule(name));
        const store = await target.createStore();
        return {
          store,
          close: async () => {
            await store.close();
            await target.close();
          },
        };
      },
    ],
  ),
];

for (const [name, open] of STORES) {
  describe(`${name} stores the input it validated, read once`, () => {
    let opened: { store: AgentStore; close: () => Promise<void> } | undefined;
    let store: AgentStore;
    beforeAll(async () => {
      opened = await open();
      store = opened.store;
    }, 180_000);
    afterAll(async () => {
      await opened?.close();
    }, 60_000);

    for (const flipAfter of [1, 2, 3, 4]) {
      it(`acquireLease with init.state behind a getter that turns into a function after ${flipAfter} reads: refused or stored as validated; the session loads`, async () => {
        const sessionId = `toctou-init-${flipAfter}-${Math.random().toString(36).slice(2)}`;
        let reads = 0;
        const init = Object.defineProperty(
          { agentName: 'read-once', ownerId: null, tenantId: null },
          'state',
          {
            enumerable: true,
            get: () => (++reads <= flipAfter ? { step: 1 } : () => 'not JSON'),
          },
        ) as { agentName: string; ownerId: null; tenantId: null; state: { step: number } };
        let refused: unknown = null;
        try {
          await store.acquireLease(sessionId, { holder: 'h', ttlMs: 60_000, init });
        } catch (error) {
          refused = error;
        }
        if (refused !== null) {
          expect(isAgentStoreError(refused, 'INVALID_ARGUMENT'), `refusal is typed: ${String(refused)}`).toBe(
            true,
          );
        }
        const loaded = await store.load(sessionId);
        if (loaded)
          expect(loaded.session.state, 'the stored state is the validated one').toEqual({ step: 1 });
      });
    }

    for (const [i, c] of CASES.entries()) {
      it(`${c.name}: refused with a typed error or stored as validated; the session still loads and appends`, async () => {
        const sessionId = `toctou-${i}-${Math.random().toString(36).slice(2)}`;
        const { refused, validated } = await appendShifting(store, sessionId, c);
        if (refused !== null) {
          expect(isAgentStoreError(refused, 'INVALID_ARGUMENT'), `refusal is typed: ${String(refused)}`).toBe(
            true,
          );
        }
        // The guarantee under attack: the session is still loadable...
        const loaded = await store.load(sessionId);
        const head = loaded!.session.headSeq;
        expect(JSON.parse(JSON.stringify(loaded!.session.state)), 'the stored state is JSON').toEqual(
          loaded!.session.state,
        );
        expect([null, { step: 1 }], 'the state is the seed or the validated one').toContainEqual(
          loaded!.session.state,
        );
        if (refused === null) {
          // ...and what was accepted is what was validated.
          const { seq: _seq, ...stored } = loaded!.messages.at(-1)!;
          expect(stored, 'the stored message is the validated one').toEqual(validated);
        } else {
          expect(head, 'a refused append wrote nothing').toBe(1);
        }
        // ...and appendable at its head.
        await store.append(sessionId, { expectedSeq: head, messages: [plain('after')], lease: null });
        expect((await store.load(sessionId))!.messages.at(-1)!.id).toBe('after');
      });
    }
  });
}
