/** Attribute names of the table layout, in one place for the store, the docs and raw readers. */
export const A = {
  pk: 'pk',
  sk: 'sk',
  /** 'session' on session items only: the partition key of the sparse `sessions` index. */
  kind: 'kind',
  agentName: 'agentName',
  /** A string, or the DynamoDB NULL type for a session without an owner. Never changes. */
  ownerId: 'ownerId',
  tenantId: 'tenantId',
  /** The session state as JSON text. */
  state: 'state',
  headSeq: 'headSeq',
  /** The last epoch granted; kept after release so epochs never go back. */
  leaseEpoch: 'leaseEpoch',
  /** Present only while a lease is held. */
  leaseHolder: 'leaseHolder',
  /** ISO-8601, from the client's clock; present only while a lease is held. */
  leaseExpiresAt: 'leaseExpiresAt',
  /** The lease record's version: new at every grant and renewal (see lease-record.ts). */
  leaseVersion: 'leaseVersion',
  createdAt: 'createdAt',
  updatedAt: 'updatedAt',
  /** A message's JSON text, or one piece of it. */
  body: 'body',
  /** On a message item whose JSON did not fit one item: how many chunk items follow it. */
  parts: 'parts',
  /**
   * On every item of a chunked message (the message item and its chunks): a digest of the whole
   * JSON, so a chunk left by an earlier session under the same id is never joined to this message.
   */
  digest: 'digest',
  /**
   * A random nonce on the session item, written once when the session is created (never by an
   * append): a session deleted and created again under the same id has another one, which is how
   * `load` tells that its reads spanned two sessions.
   */
  incarnation: 'incarnation',
  /**
   * Epoch seconds for DynamoDB TTL, on session items only (written only when the store has
   * `ttlSeconds`): expiry removes the session item, and with it the whole session. Never before
   * the end of a lease the item holds (see `leaseTtlValue`).
   */
  ttl: 'ttl',
  /** Index partition attributes of session items, written at creation (see index-keys.ts). */
  gA: 'gA',
  gO: 'gO',
  gT: 'gT',
  gG: 'gG',
  gOT: 'gOT',
  gOG: 'gOG',
  gTG: 'gTG',
  gOTG: 'gOTG',
  gI: 'gI',
  /** Retention index sort key: ms of creation, moved up to the last append by retention sweeps. */
  idleAt: 'idleAt',
} as const;

export const SESSION_KIND = 'session';
export const SESSIONS_INDEX = 'sessions';

/**
 * `#name` placeholders for every attribute, so no expression ever trips over a DynamoDB reserved
 * word (`state`, `ttl`, …).
 */
export const NAMES: Record<string, string> = Object.fromEntries(
  Object.values(A).map((name) => [`#${name}`, name]),
);

/** Only the placeholders an expression uses (DynamoDB rejects unused ones). */
export function namesIn(...expressions: (string | undefined)[]): Record<string, string> {
  const text = expressions.join(' ');
  const used: Record<string, string> = {};
  for (const match of text.matchAll(/#\w+/g)) used[match[0]] = NAMES[match[0]]!;
  return used;
}
