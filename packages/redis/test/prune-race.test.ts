import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addToIndexes, type IndexContext, pruneStale } from '../src/index-ops.ts';
import { indexKeys } from '../src/indexes.ts';
import { indexMember, keySpace } from '../src/keys.ts';
import { scriptRunner } from '../src/script-runner.ts';
import { init, uniquePrefix } from './helpers.ts';

/*
 * The Cluster path of stale-entry pruning (index and session in different slots, so no atomic
 * check-and-remove), run on a standalone server with `isCluster: true` and the interleavings
 * forced by hooks on the client: a prune racing a creation must never leave a live session out
 * of an index.
 */
let server: LaunchedRedis;
let client: Redis;
beforeAll(async () => {
  server = await launchRedis();
  client = new Redis(server.info.url);
});
afterAll(async () => {
  await client?.quit();
  await server?.stop();
});

function context(prefix: string, hooks: { afterZrem?: () => Promise<void> } = {}): IndexContext {
  // A client whose ZREM runs a hook once it has answered: the other side's step lands there.
  const hooked = Object.create(client) as Redis;
  hooked.zrem = (async (...args: Parameters<Redis['zrem']>) => {
    const removed = await client.zrem(...args);
    await hooks.afterZrem?.();
    return removed;
  }) as Redis['zrem'];
  return {
    client: hooked,
    isCluster: true,
    inlineIndexStart: '',
    keys: keySpace(prefix),
    ix: indexKeys(prefix),
    scripts: scriptRunner(client),
    loadSession: async () => null,
  };
}

const fields = { agentName: 'agent', ownerId: 'o', tenantId: null };

describe('pruning stale index entries on a Cluster', () => {
  it('removes the entry of a session that is gone', async () => {
    const prefix = uniquePrefix('prune');
    const ctx = context(prefix);
    await addToIndexes(ctx, 'gone', fields, Date.now());
    const [key] = ctx.ix.memberships('gone', fields);
    await pruneStale(ctx, key!, 'gone');
    expect(await client.zscore(key!, indexMember('gone'))).toBeNull();
  });

  it('puts the entry back when the session is created between the check and the removal', async () => {
    const prefix = uniquePrefix('prune');
    const keys = keySpace(prefix).session('racing');
    // The creator finishes (session written) right after the pruner's ZREM: the pruner's second
    // look sees the session and restores the entry.
    const ctx = context(prefix, {
      afterZrem: async () => {
        await client.hset(keys.session, 'id', '"racing"', 'headSeq', '0');
      },
    });
    await addToIndexes(ctx, 'racing', fields, Date.now());
    const [key] = ctx.ix.memberships('racing', fields);
    await pruneStale(ctx, key!, 'racing');
    expect(await client.zscore(key!, indexMember('racing'))).toBe('0');
  });

  it('a prune between a creation adding its entries and creating the session puts the entry back (the creation marker)', async () => {
    const prefix = uniquePrefix('prune');
    const ctx = context(prefix);
    const member = indexMember('late');
    // Creator: marker (the creating script's 'ask'), then its entries; pruner: sees no session.
    await client.set(keySpace(prefix).session('late').creating, '1', 'PX', 60_000);
    await addToIndexes(ctx, 'late', fields, Date.now());
    for (const k of ctx.ix.memberships('late', fields)) await pruneStale(ctx, k, 'late');
    for (const k of ctx.ix.memberships('late', fields)) expect(await client.zscore(k, member)).toBe('0');
  });

  it('a session with owner and tenant joins eight lex indexes (all, and every combination of owner, tenant, agent)', async () => {
    const prefix = uniquePrefix('prune');
    const ctx = context(prefix);
    await addToIndexes(ctx, 's', { ...init({ ownerId: 'o', tenantId: 't' }) }, Date.now());
    expect(ctx.ix.memberships('s', { agentName: 'agent', ownerId: 'o', tenantId: 't' })).toHaveLength(8);
    for (const k of ctx.ix.memberships('s', { agentName: 'agent', ownerId: 'o', tenantId: 't' })) {
      expect(await client.zscore(k, indexMember('s'))).toBe('0');
    }
  });
});
