import {
  type AcquireLeaseInput,
  InvalidArgumentError,
  LeaseLostError,
  type LeaseToken,
  SessionAccessDeniedError,
  SessionBusyError,
  type SessionRecord,
} from '@agentstore/core';
import { expiryIso, ownerMatches } from '@agentstore/core/store';
import { type AttributeValue, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { checkFieldSize, stateJson } from './append-transaction.ts';
import { A, namesIn, SESSION_KIND } from './attributes.ts';
import { errorName, leaseTtlValue, newIncarnation, type StoreContext } from './context.ts';
import { indexSets } from './index-keys.ts';
import { SESSION_SK } from './keys.ts';
import { type LeaseObservations, leaseObservations } from './lease-observations.ts';
import { type LeaseSighting, leaseSighting, newLeaseVersion, sightingTtlMs } from './lease-record.ts';
import { decodeSession, type Item, nullableString } from './session-item.ts';

const sessionKey = (sessionId: string) => ({ [A.pk]: { S: sessionId }, [A.sk]: { S: SESSION_SK } });

function validateHolder(holder: unknown): asserts holder is string {
  if (typeof holder !== 'string')
    throw new InvalidArgumentError({ argument: 'holder', reason: 'must be a string' });
  checkFieldSize(holder, 'holder');
}

/** A token no stored lease can match (the memory store answers these with "not held", too). */
const isToken = (holder: unknown, epoch: unknown) =>
  typeof holder === 'string' && Number.isSafeInteger(epoch);

const isConditionFailure = (error: unknown) => errorName(error) === 'ConditionalCheckFailedException';
const oldItem = (error: unknown) => (error as { Item?: Item }).Item;

/** Owner and tenant must match as stored: a string equals, null is the NULL type. */
function ownershipCondition(name: '#ownerId' | '#tenantId', placeholder: string, value: string | null) {
  return value === null ? `attribute_type(${name}, :nullType)` : `${name} = ${placeholder}`;
}

/** Conflicting acquires of one free session can both lose a race; this many tries settle it. */
const ACQUIRE_ATTEMPTS = 3;

/**
 * Each store's lease watches, kept beside its context (one per store instance) so that the
 * polls of a waiting run, and every run through the store, share them.
 */
const watches = new WeakMap<StoreContext, LeaseObservations>();
function watchesOf(context: StoreContext): LeaseObservations {
  const found = watches.get(context);
  if (found) return found;
  const made = leaseObservations();
  watches.set(context, made);
  return made;
}

/**
 * How long a taker must watch a lease record unchanged: the TTL it was granted or renewed with.
 * A lease last written by an earlier version of this package names no TTL; it is judged by the
 * rule it was written under, watched until its expiry plus `maxClockSkewMs` by this clock (so
 * one a crashed worker left long ago is taken at once, as before), and any renewal restarts it.
 */
function watchMs(context: StoreContext, seen: LeaseSighting, takerTtlMs: number): number {
  const ttlMs = sightingTtlMs(seen);
  if (ttlMs !== null) return ttlMs;
  const byClockMs = Date.parse(seen.expiresAt) + context.maxClockSkewMs - Date.now();
  // An expiry that is not a date cannot end a watch early (NaN would end it at once).
  return Number.isFinite(byClockMs) ? Math.max(0, byClockMs) : takerTtlMs;
}

/** The take of a watched record: only while it is still exactly what was watched. */
function unchangedCondition(seen: LeaseSighting, values: Record<string, AttributeValue>): string {
  values[':seenHolder'] = { S: seen.holder };
  values[':seenEpoch'] = { N: String(seen.epoch) };
  values[':seenExpires'] = { S: seen.expiresAt };
  if (seen.version !== null) values[':seenVersion'] = { S: seen.version };
  const version =
    seen.version === null ? 'attribute_not_exists(#leaseVersion)' : '#leaseVersion = :seenVersion';
  return `(#leaseHolder = :seenHolder AND #leaseEpoch = :seenEpoch AND #leaseExpiresAt = :seenExpires AND ${version})`;
}

/**
 * One conditional UpdateItem: creates the session from `init` if absent, else requires the same
 * owner and tenant and a lease that is free, this holder's, or held by another but watched by
 * this store unchanged for a full TTL (DynamoDB has no server clock, and client clocks may be
 * off by any amount: the AWS DynamoDB Lock Client's rule). Bumps the epoch, which survives
 * release, and writes a new record version. On failure the ALL_OLD item tells denied from busy
 * and starts or continues the watch; `retryAfterMs` is what is left of it.
 */
export async function acquireLease(
  context: StoreContext,
  sessionId: string,
  { holder, ttlMs, init }: AcquireLeaseInput,
): Promise<{ epoch: number; session: SessionRecord }> {
  validateHolder(holder);
  if (typeof init !== 'object' || init === null) {
    throw new InvalidArgumentError({ argument: 'init', reason: 'must be an object' });
  }
  checkFieldSize(init.agentName, 'init.agentName');
  checkFieldSize(init.ownerId, 'init.ownerId');
  checkFieldSize(init.tenantId, 'init.tenantId');
  const initState = stateJson(init.state, 'init.state');
  const observations = watchesOf(context);
  for (let attempt = 1; ; attempt++) {
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    const expiresAt = expiryIso(nowMs, ttlMs);
    const values: Record<string, AttributeValue> = {
      ':holder': { S: holder },
      ':expires': { S: expiresAt },
      ':version': { S: newLeaseVersion(ttlMs, expiresAt) },
      ':now': { S: now },
      ':zero': { N: '0' },
      ':one': { N: '1' },
      ':kind': { S: SESSION_KIND },
      ':agent': { S: init.agentName },
      ':owner': nullableString(init.ownerId),
      ':tenant': nullableString(init.tenantId),
      ':state': { S: initState },
      ':incarnation': { S: newIncarnation() },
    };
    if (init.ownerId === null || init.tenantId === null) values[':nullType'] = { S: 'NULL' };
    const ttl = leaseTtlValue(context, nowMs + ttlMs);
    if (ttl !== null) values[':ttl'] = { N: String(ttl) };
    const update =
      'SET #leaseHolder = :holder, #leaseExpiresAt = :expires, #leaseVersion = :version, ' +
      '#leaseEpoch = if_not_exists(#leaseEpoch, :zero) + :one, #kind = :kind, ' +
      '#agentName = if_not_exists(#agentName, :agent), #ownerId = if_not_exists(#ownerId, :owner), ' +
      '#tenantId = if_not_exists(#tenantId, :tenant), #state = if_not_exists(#state, :state), ' +
      '#headSeq = if_not_exists(#headSeq, :zero), #createdAt = if_not_exists(#createdAt, :now), ' +
      '#incarnation = if_not_exists(#incarnation, :incarnation), ' +
      `#updatedAt = if_not_exists(#updatedAt, :now)${ttl === null ? '' : ', #ttl = :ttl'}, ` +
      indexSets(sessionId, init, nowMs, values).join(', ');
    const ripe = observations.ripe(sessionId);
    const condition =
      `attribute_not_exists(#pk) OR (${ownershipCondition('#ownerId', ':owner', init.ownerId)} AND ` +
      `${ownershipCondition('#tenantId', ':tenant', init.tenantId)} AND ` +
      '(attribute_not_exists(#leaseHolder) OR #leaseHolder = :holder' +
      `${ripe ? ` OR ${unchangedCondition(ripe, values)}` : ''}))`;
    try {
      const { Attributes } = await context.client.send(
        new UpdateItemCommand({
          TableName: context.tableName,
          Key: sessionKey(sessionId),
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: namesIn(update, condition),
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const session = decodeSession(sessionId, Attributes ?? {});
      observations.wrote(sessionId, leaseSighting(Attributes ?? {})!, ttlMs);
      return { epoch: session.lease!.epoch, session };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const item = oldItem(error);
      if (item) {
        const stored = decodeSession(sessionId, item);
        if (!ownerMatches(stored, init)) throw new SessionAccessDeniedError({ sessionId });
        const seen = leaseSighting(item);
        if (seen !== null && seen.holder !== holder) {
          const left = observations.watch(sessionId, seen, watchMs(context, seen, ttlMs));
          // Watched long enough (it ended after this attempt was sent): the next one takes it.
          if (left > 0 || attempt >= ACQUIRE_ATTEMPTS) {
            throw new SessionBusyError({ sessionId, retryAfterMs: Math.max(1, left) });
          }
          continue;
        }
      }
      // The item changed between the condition and this check (or vanished): try again.
      if (attempt >= ACQUIRE_ATTEMPTS) throw error;
    }
  }
}

/** Extends the lease if this holder and epoch still hold it (expired but not taken over is fine). */
export async function renewLease(
  context: StoreContext,
  sessionId: string,
  { holder, epoch, ttlMs }: LeaseToken & { ttlMs: number },
): Promise<{ expiresAt: string }> {
  if (!isToken(holder, epoch)) throw new LeaseLostError({ sessionId, holder, epoch });
  const nowMs = Date.now();
  const expiresAt = expiryIso(nowMs, ttlMs);
  const version = newLeaseVersion(ttlMs, expiresAt);
  const ttl = leaseTtlValue(context, nowMs + ttlMs);
  // A new version with every renewal: a taker watching the record starts over.
  const update = `SET #leaseExpiresAt = :expires, #leaseVersion = :version${ttl === null ? '' : ', #ttl = :ttl'}`;
  const values = {
    ':expires': { S: expiresAt },
    ':version': { S: version },
    ...(ttl === null ? {} : { ':ttl': { N: String(ttl) } }),
  };
  if (!(await updateHeldLease(context, sessionId, { holder, epoch }, update, values))) {
    throw new LeaseLostError({ sessionId, holder, epoch });
  }
  watchesOf(context).wrote(sessionId, { holder, epoch, expiresAt, version }, ttlMs);
  return { expiresAt };
}

/**
 * Applies `update` to the session item only while `token` holds its lease (one conditional
 * UpdateItem); false when the holder or epoch no longer match.
 */
async function updateHeldLease(
  context: StoreContext,
  sessionId: string,
  { holder, epoch }: LeaseToken,
  update: string,
  values: Record<string, AttributeValue>,
): Promise<boolean> {
  const condition = '#leaseHolder = :holder AND #leaseEpoch = :epoch';
  try {
    await context.client.send(
      new UpdateItemCommand({
        TableName: context.tableName,
        Key: sessionKey(sessionId),
        UpdateExpression: update,
        ConditionExpression: condition,
        ExpressionAttributeNames: namesIn(update, condition),
        ExpressionAttributeValues: { ...values, ':holder': { S: holder }, ':epoch': { N: String(epoch) } },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Clears the lease if this holder and epoch hold it; the epoch counter stays. */
export async function releaseLease(
  context: StoreContext,
  sessionId: string,
  { holder, epoch }: LeaseToken,
): Promise<{ released: boolean }> {
  if (!isToken(holder, epoch)) return { released: false };
  const released = await updateHeldLease(
    context,
    sessionId,
    { holder, epoch },
    'REMOVE #leaseHolder, #leaseExpiresAt',
    {},
  );
  if (released) watchesOf(context).forget(sessionId);
  return { released };
}
