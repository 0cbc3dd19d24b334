import type { AppendInput, NewMessage, SessionInit } from '@agentstore/core';
import { message } from './fixtures.ts';

/** Strings with a lone UTF-16 surrogate: UTF-8 drivers turn each into U+FFFD, so they would alias. */
export const LONE_SURROGATES: readonly string[] = ['x\uD800', 'x\uDBFF', 'x\uDFFF'];

/** What the lone surrogates would alias to on a UTF-8 backend: a valid, distinct id. */
export const REPLACEMENT_TWIN = 'x\uFFFD';

/** One hostile append: the field it attacks, the path the InvalidArgumentError must name, the input. */
export interface HostileAppend {
  what: string;
  argument: string;
  input: (expectedSeq: number) => AppendInput;
}

const cyclic = (): Record<string, unknown> => {
  const value: Record<string, unknown> = { a: 1 };
  value.self = value;
  return value;
};

const deep = (levels: number): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { d: value };
  return value;
};

/** Two slots (within any store's maxMessagesPerAppend), the second a hole. */
const sparse = (): NewMessage[] => {
  const list: NewMessage[] = [message(), message()];
  delete list[1];
  return list;
};

const holes = (): number[] => {
  const list = [1, 2, 3];
  delete list[1];
  return list;
};

const withCall = (input: unknown, fields: Record<string, unknown> = {}): NewMessage =>
  message({
    role: 'assistant',
    toolCalls: [{ id: 'call_1', name: 'tool', input: input as never, ...fields }],
  });

/** Values no store may accept, one per field of an append and per way of not being plain JSON. */
export function hostileAppends(): HostileAppend[] {
  const one = (what: string, argument: string, fields: Partial<AppendInput>): HostileAppend => ({
    what,
    argument,
    input: (expectedSeq) => ({ expectedSeq, messages: [message()], lease: null, ...fields }),
  });
  const msg = (what: string, argument: string, m: unknown) =>
    one(what, argument, { messages: [m as NewMessage] });
  const state = (what: string, argument: string, value: unknown) =>
    one(what, argument, { session: { state: value as never } });
  const init = (what: string, argument: string, fields: Partial<SessionInit>) =>
    one(what, argument, {
      session: { init: { agentName: 'a', ownerId: null, tenantId: null, state: null, ...fields } },
    });
  return [
    one('a sparse messages array', 'messages[1]', { messages: sparse() }),
    msg('a message with a seq field', 'messages[0].seq', { ...message(), seq: 99 }),
    msg('a message with an unknown field', 'messages[0].extra', { ...message(), extra: 'x' }),
    msg('a Date in a tool input', 'messages[0].toolCalls[0].input.when', withCall({ when: new Date(0) })),
    msg('a function in a tool input', 'messages[0].toolCalls[0].input.f', withCall({ f: () => 1 })),
    msg('a Symbol in a tool input', 'messages[0].toolCalls[0].input.s', withCall({ s: Symbol('s') })),
    msg('a BigInt in a tool input', 'messages[0].toolCalls[0].input.n', withCall({ n: 1n })),
    msg('NaN in a tool input', 'messages[0].toolCalls[0].input.n', withCall({ n: Number.NaN })),
    msg('a cycle in a tool input', 'messages[0].toolCalls[0].input.self', withCall(cyclic())),
    msg('a sparse array in a tool input', 'messages[0].toolCalls[0].input.list', withCall({ list: holes() })),
    msg('undefined in a tool input', 'messages[0].toolCalls[0].input.u', withCall({ u: undefined })),
    msg('a tool input nested 100,000 deep', 'messages[0].toolCalls[0].input', withCall(deep(100_000))),
    msg(
      'a lone surrogate in a tool input key',
      'messages[0].toolCalls[0].input["k\\ud800"]',
      withCall({ 'k\uD800': 1 }),
    ),
    msg('a tool call with an unknown field', 'messages[0].toolCalls[0].extra', withCall({}, { extra: 1 })),
    msg('a lone surrogate in a message id', 'messages[0].id', message({ id: 'm\uD800' })),
    msg('a lone surrogate in content', 'messages[0].content', message({ content: 'c\uDFFF' })),
    msg(
      'a lone surrogate in a tool-call id',
      'messages[0].toolCalls[0].id',
      message({ role: 'assistant', toolCalls: [{ id: 'c\uDBFF', name: 't', input: {} }] }),
    ),
    msg(
      'a lone surrogate in toolCallId',
      'messages[0].toolCallId',
      message({ role: 'tool', toolCallId: 'c\uD800' }),
    ),
    msg('a non-string kind', 'messages[0].kind', message({ kind: 7 as never })),
    msg(
      'an origin that is not one of the documented ones',
      'messages[0].origin.via',
      message({ origin: { via: 'x' as never, attempt: 1 } }),
    ),
    state('a function as state', 'session.state', () => 1),
    state('a Symbol in state', 'session.state.s', { s: Symbol('s') }),
    state('a BigInt in state', 'session.state.n', { n: 1n }),
    state('a Date in state', 'session.state.d', { d: new Date(0) }),
    state('a cycle in state', 'session.state.self', cyclic()),
    state('state nested 100,000 deep', 'session.state', deep(100_000)),
    state('a lone surrogate in a state key', 'session.state["k\\udfff"]', { 'k\uDFFF': 1 }),
    init('a lone surrogate in init.ownerId', 'session.init.ownerId', { ownerId: 'user-\uD800' }),
    init('a lone surrogate in init.tenantId', 'session.init.tenantId', { tenantId: 't\uDBFF' }),
    init('an empty init.agentName', 'session.init.agentName', { agentName: '' }),
    init('a Map as init.state', 'session.init.state', { state: new Map() as never }),
    one('a lone surrogate in the lease holder', 'lease.holder', { lease: { holder: 'h\uDFFF', epoch: 1 } }),
  ];
}

/**
 * An append whose input answers differently on each read (a getter, a Proxy) or serialises to
 * something else than its own data (a hidden `toJSON`). A store must read it once, validate that
 * copy and store that same copy (`snapshotInput` from `@agentstore/core/store`); one that
 * validates the live object and serialises it again stores what it never validated.
 */
export interface ShiftingAppend {
  what: string;
  input: (expectedSeq: number) => AppendInput;
  /** What the appended messages must be stored as: the valid answers they gave first. */
  stored: NewMessage[];
  /** What the session state must be stored as, when the append sets it. */
  storedState?: unknown;
}

/** A `get` that answers `first` once, then `later` on every read after. */
function firstThen<T>(first: T, later: T): () => T {
  let reads = 0;
  return () => (reads++ === 0 ? first : later);
}

/** `value` with a non-enumerable `toJSON`: invisible to a validator, used by `JSON.stringify`. */
function withHiddenToJson<T extends object>(value: T): T {
  Object.defineProperty(value, 'toJSON', { value: () => 'what toJSON returned', enumerable: false });
  return value;
}

/** A tool call and its result, so the session stays one `run()` can resume. */
function callAndResult(id: string, input: Record<string, unknown>): [NewMessage, NewMessage] {
  return [
    message({ role: 'assistant', toolCalls: [{ id, name: 'tool', input: input as never }] }),
    message({ role: 'tool', toolCallId: id, toolName: 'tool', content: 'done' }),
  ];
}

export function shiftingAppends(): ShiftingAppend[] {
  const appendOf = (what: string, live: NewMessage[], stored: NewMessage[]): ShiftingAppend => ({
    what,
    input: (expectedSeq) => ({ expectedSeq, messages: live, lease: null }),
    stored,
  });

  const text = message({ content: 'the content that was read first' });
  const getter = { ...text };
  Object.defineProperty(getter, 'content', {
    enumerable: true,
    get: firstThen(text.content, 'a lone surrogate read later \uD800'),
  });

  const [proxied, proxiedResult] = callAndResult('call_proxy', { n: 1 });
  const laterCalls = firstThen(proxied.toolCalls, [
    { id: 'call_proxy', name: 'tool', input: { when: new Date(0) as never } },
  ]);
  const proxy = new Proxy(proxied, {
    get: (target, key, receiver) => (key === 'toolCalls' ? laterCalls() : Reflect.get(target, key, receiver)),
  });

  const [called, calledResult] = callAndResult('call_tojson', { n: 1 });
  const hidden = {
    ...called,
    toolCalls: [{ id: 'call_tojson', name: 'tool', input: withHiddenToJson({ n: 1 }) }],
  };

  const stateMessage = message();
  return [
    appendOf('a content getter that answers a valid string once, then a lone surrogate', [getter], [text]),
    appendOf(
      'a Proxy whose tool calls gain a Date after the first read',
      [proxy, proxiedResult],
      [proxied, proxiedResult],
    ),
    appendOf('a tool input with a hidden toJSON', [hidden, calledResult], [called, calledResult]),
    {
      what: 'session state with a hidden toJSON',
      input: (expectedSeq) => ({
        expectedSeq,
        messages: [stateMessage],
        session: { state: withHiddenToJson({ step: 1 }) },
        lease: null,
      }),
      stored: [stateMessage],
      storedState: { step: 1 },
    },
  ];
}

/**
 * How a store compares ids (owner, tenant, agent name, lease holder) exactly, per backend: the
 * advice every loose-compare violation ends with.
 */
export const EXACT_COMPARE =
  'compare them exactly, as the values they are: a binary, no-pad collation (COLLATE "C" on Postgres, BINARY on SQLite, utf8mb4_nopad_bin or a VARBINARY column on MariaDB/MySQL, where utf8mb4_bin is PAD SPACE and still ignores trailing spaces); never trimmed, case-folded, accent-folded or normalized';

/** An identifier a loose comparison takes for another one, and the looseness it would reveal. */
export interface LooseVariant {
  value: string;
  /** How a store that matches it compared: "case-insensitively (upper case)", … */
  how: string;
}

/**
 * An owner, tenant or agent name with lower-case ASCII and a precomposed (NFC) "é", so each
 * looseness a collation can have has something to bite on: `alice-josé-<random>`.
 */
export const looseBase = (label: string): string =>
  `alice-jos\u00e9-${label}-${crypto.randomUUID().slice(0, 8)}`;

/**
 * Identifiers that differ from `base` (made by `looseBase`) only in what a loose collation
 * ignores: trailing spaces (MariaDB's PAD SPACE), case (`_ci`), accents (`_ai`, utf8mb4_general_ci)
 * and Unicode normalization (NFC vs NFD). Ids are compared exactly, so every one is a stranger.
 */
export function looseVariants(base: string): LooseVariant[] {
  return [
    { value: `${base} `, how: 'ignoring trailing spaces (a trailing space)' },
    { value: base.replace('alice', 'ALICE'), how: 'case-insensitively ("ALICE" for "alice")' },
    { value: base.replace('alice', 'alic\u00e9'), how: 'accent-insensitively ("alicé" for "alice")' },
    { value: base.replace('jos\u00e9', 'jose'), how: 'accent-insensitively ("jose" for "josé")' },
    { value: base.normalize('NFD'), how: 'as canonically equivalent (NFD "é" for NFC "é")' },
  ];
}
