import { InvalidArgumentError } from './errors.ts';
import type { AgentStore, LoadResult } from './store.ts';

/**
 * The session as it was when its head was `seq`: time travel over the append-only log. The
 * session record's `headSeq` is set to `seq`; other session fields are today's.
 */
export async function loadSessionAt(
  store: AgentStore,
  sessionId: string,
  seq: number,
): Promise<LoadResult | null> {
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new InvalidArgumentError({ argument: 'seq', reason: 'must be a non-negative integer' });
  }
  const loaded = await store.load(sessionId);
  if (!loaded) return null;
  const headSeq = Math.min(seq, loaded.session.headSeq);
  return {
    session: { ...loaded.session, headSeq },
    messages: loaded.messages.filter((m) => m.seq <= headSeq),
  };
}
