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
