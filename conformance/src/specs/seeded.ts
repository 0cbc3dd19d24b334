import type { SessionSnapshot } from '../assertions.ts';
import { snapshot } from '../assertions.ts';
import type { CheckContext } from '../check.ts';
import { freshId, seedSession } from '../fixtures.ts';

/** What a session that never existed looks like through every reader. */
export const nothing: SessionSnapshot = { loaded: null, rawSession: null, rawMessages: [] };

/** Seeds a session with two messages and returns what a rejected write must leave as it is. */
export async function seeded(
  ctx: CheckContext,
  label: string,
): Promise<{ id: string; before: SessionSnapshot }> {
  const id = freshId(label);
  await seedSession(ctx.store, id, 2);
  return { id, before: await snapshot(ctx, id) };
}
