import { CorruptRecordError, type JsonValue, type Lease, type SessionRecord } from '@agentstore/core';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { A } from './attributes.ts';
import { INCARNATION_ID_PREFIX } from './context.ts';

export type Item = Record<string, AttributeValue>;

/** A string-or-null field as stored: S, or the NULL type. */
export const nullableString = (value: string | null): AttributeValue =>
  value === null ? { NULL: true } : { S: value };

function readNullable(item: Item, name: string): string | null {
  const value = item[name];
  if (value?.S !== undefined) return value.S;
  if (value?.NULL) return null;
  throw new Error(`${name} is neither a string nor NULL`);
}

function readString(item: Item, name: string): string {
  const value = item[name]?.S;
  if (value === undefined) throw new Error(`${name} is missing or not a string`);
  return value;
}

function readInteger(item: Item, name: string): number {
  const value = Number(item[name]?.N);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} is missing or not an integer`);
  return value;
}

/** Head seq of a session item as returned by ReturnValuesOnConditionCheckFailure; 0 when absent. */
export function storedHeadSeq(item: Item | undefined): number | null {
  if (!item) return 0;
  const value = Number(item[A.headSeq]?.N);
  return Number.isSafeInteger(value) ? value : null;
}

/** The lease of a session item as returned by ReturnValuesOnConditionCheckFailure; null when free. */
export function storedLease(sessionId: string, item: Item): Lease | null {
  if (item[A.leaseHolder]?.S === undefined) return null;
  return decodeSession(sessionId, item).lease;
}

/** The session's `incarnationId`: its `incarnation`, when drawn with the prefix (see context.ts). */
function incarnationIdOf(item: Item): { incarnationId?: string } {
  const incarnation = item[A.incarnation]?.S;
  return incarnation?.startsWith(INCARNATION_ID_PREFIX) ? { incarnationId: incarnation } : {};
}

export function decodeSession(sessionId: string, item: Item): SessionRecord {
  try {
    const holder = item[A.leaseHolder]?.S;
    return {
      id: sessionId,
      agentName: readString(item, A.agentName),
      ownerId: readNullable(item, A.ownerId),
      tenantId: readNullable(item, A.tenantId),
      state: JSON.parse(readString(item, A.state)) as JsonValue,
      headSeq: readInteger(item, A.headSeq),
      lease:
        holder === undefined
          ? null
          : { holder, epoch: readInteger(item, A.leaseEpoch), expiresAt: readString(item, A.leaseExpiresAt) },
      createdAt: readString(item, A.createdAt),
      updatedAt: readString(item, A.updatedAt),
      ...incarnationIdOf(item),
    };
  } catch (error) {
    throw new CorruptRecordError(
      { sessionId, seq: null, reason: error instanceof Error ? error.message : String(error) },
      { cause: error },
    );
  }
}
