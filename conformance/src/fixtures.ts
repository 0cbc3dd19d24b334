import type { AgentStore, JsonValue, MessageRecord, NewMessage, SessionInit } from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';

/** A fresh random id, so specs never meet each other's data in a shared database. */
export const freshId = (label: string): string => `conformance-${label}-${crypto.randomUUID()}`;

/** Alphanumeric only, so every backend's collation orders these ids the same way as JS does. */
export const plainId = (): string => crypto.randomUUID().replaceAll('-', '');

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let counter = 0;

/** A message with a fresh id; `fields` override anything. */
export function message(fields: Partial<NewMessage> = {}): NewMessage {
  counter += 1;
  return {
    id: `msg-${counter}-${crypto.randomUUID()}`,
    role: 'user',
    content: `message ${counter}`,
    createdAt: new Date().toISOString(),
    ...fields,
  };
}

/** A tool result of exactly `bytes` bytes as `messageByteLength` measures it. */
export function messageOfBytes(bytes: number, fields: Partial<NewMessage> = {}): NewMessage {
  const base = message({ role: 'tool', toolCallId: 'call_big', toolName: 'fetch', content: '', ...fields });
  const empty = messageByteLength(base);
  if (bytes < empty) throw new Error(`cannot build a ${bytes}-byte message: the empty one is ${empty} bytes`);
  // Three-byte characters up front, so a store measuring characters instead of UTF-8 bytes is caught.
  const padding = bytes - empty;
  const wide = Math.floor(Math.min(padding, 3000) / 3);
  const content = '€'.repeat(wide) + 'x'.repeat(padding - wide * 3);
  const built = { ...base, content };
  const measured = messageByteLength(built);
  if (measured !== bytes) throw new Error(`built a ${measured}-byte message instead of ${bytes}`);
  return built;
}

export const messages = (count: number, fields: Partial<NewMessage> = {}): NewMessage[] =>
  Array.from({ length: count }, () => message(fields));

export function sessionInit(fields: Partial<SessionInit> = {}): SessionInit {
  return { agentName: 'conformance-agent', ownerId: null, tenantId: null, state: null, ...fields };
}

/** What `load` must return for `appended` when the first of them got `firstSeq`. */
export const asRecords = (appended: NewMessage[], firstSeq: number): MessageRecord[] =>
  appended.map((m, i) => ({ ...m, seq: firstSeq + i }));

/** Creates a session with `count` messages (lease-less), in appends the store's limits allow. */
export async function seedSession(
  store: AgentStore,
  sessionId: string,
  count: number,
  init: SessionInit = sessionInit(),
): Promise<NewMessage[]> {
  const seeded = messages(count);
  await appendInChunks(store, sessionId, seeded, { init });
  return seeded;
}

/** Appends `all` after `expectedSeq` in chunks of at most `chunkSize` (default: the store's limit). */
export async function appendInChunks(
  store: AgentStore,
  sessionId: string,
  all: NewMessage[],
  options: { expectedSeq?: number; init?: SessionInit; chunkSize?: number; state?: JsonValue } = {},
): Promise<number> {
  const chunkSize = Math.min(
    options.chunkSize ?? Number.POSITIVE_INFINITY,
    store.limits.maxMessagesPerAppend,
  );
  let headSeq = options.expectedSeq ?? 0;
  for (let start = 0; start < all.length; start += chunkSize) {
    const chunk = all.slice(start, start + chunkSize);
    const result = await store.append(sessionId, {
      expectedSeq: headSeq,
      messages: chunk,
      session: {
        ...(options.init ? { init: options.init } : {}),
        ...(options.state !== undefined ? { state: options.state } : {}),
      },
      lease: null,
    });
    headSeq = result.headSeq;
  }
  return headSeq;
}

/** A Standard Schema that accepts any JSON input (the kit depends on no schema library). */
export const jsonInput = {
  '~standard': {
    version: 1 as const,
    vendor: 'agentstore-conformance',
    validate: (value: unknown) => ({ value: value as Record<string, JsonValue> }),
    types: undefined as { input: Record<string, JsonValue>; output: Record<string, JsonValue> } | undefined,
  },
};
