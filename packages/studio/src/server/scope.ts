import type { SessionRecord } from '@agentstore/core';

/** What a studio may see: `--tenant` / `--owner`. Every listing and load goes through it. */
export interface StudioScope {
  tenantId?: string;
  ownerId?: string;
}

export function inScope(scope: StudioScope, session: Pick<SessionRecord, 'tenantId' | 'ownerId'>): boolean {
  return (
    (scope.tenantId === undefined || session.tenantId === scope.tenantId) &&
    (scope.ownerId === undefined || session.ownerId === scope.ownerId)
  );
}

/**
 * A listing filter narrowed by the scope. `null` when the filter asks for something outside it
 * (another tenant or owner): the answer is then empty without asking the store.
 */
export function scopedFilter(
  scope: StudioScope,
  filter: { tenantId?: string; ownerId?: string },
): { tenantId?: string; ownerId?: string } | null {
  const out: { tenantId?: string; ownerId?: string } = {};
  for (const key of ['tenantId', 'ownerId'] as const) {
    const fixed = scope[key];
    const asked = filter[key];
    if (fixed !== undefined && asked !== undefined && asked !== fixed) return null;
    const value = fixed ?? asked;
    if (value !== undefined) out[key] = value;
  }
  return out;
}
