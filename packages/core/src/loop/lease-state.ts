import type { AgentStoreError } from '../errors.ts';

/*
 * The run's lease as one state machine: the single source of truth for "may this run still work
 * under its lease, and is it (being) freed". The keeper, the durable commit and the end of the
 * run dispatch events here and read the state; every transition is in `nextLeaseState`.
 *
 *   acquiring ──granted──▶ held ──release-sent──▶ releasing ──release-landed──▶ released
 *                           ▲  │                     │  │
 *                           │  └────refused────┐     │  └──release-failed──▶ held
 *                           │                  ▼     ▼
 *                           │                 lost ◀─refused by an append (not by a renewal)
 *                           └ deadline-passed (held or releasing) ──▶ expired
 *
 * `lost`, `expired` and `released` are final: the lease is no longer this run's to use or free.
 */

/** How a release is carried: the run's final append frees the lease itself, or a release call. */
export type ReleaseVia = 'final-append' | 'release-call';

export type LeaseState =
  | { readonly phase: 'acquiring' }
  | { readonly phase: 'held' }
  | { readonly phase: 'releasing'; readonly via: ReleaseVia }
  | { readonly phase: 'released'; readonly via: ReleaseVia }
  /** The store refused one of this holder's calls as a lost lease. */
  | { readonly phase: 'lost'; readonly error: AgentStoreError }
  /** The local deadline passed, or a call went unanswered for the safe window: given up. */
  | { readonly phase: 'expired'; readonly error: AgentStoreError };

export type LeasePhase = LeaseState['phase'];

export type LeaseEvent =
  | { readonly type: 'granted' }
  | { readonly type: 'release-sent'; readonly via: ReleaseVia }
  | { readonly type: 'release-landed' }
  | { readonly type: 'release-failed' }
  | { readonly type: 'refused'; readonly by: 'renewal' | 'append'; readonly error: AgentStoreError }
  | { readonly type: 'deadline-passed'; readonly error: AgentStoreError };

/** Every transition of the lease. An event that does not apply to a state leaves it unchanged. */
export function nextLeaseState(state: LeaseState, event: LeaseEvent): LeaseState {
  switch (state.phase) {
    case 'acquiring':
      return event.type === 'granted' ? { phase: 'held' } : state;
    case 'held':
      if (event.type === 'release-sent') return { phase: 'releasing', via: event.via };
      if (event.type === 'refused') return { phase: 'lost', error: event.error };
      if (event.type === 'deadline-passed') return { phase: 'expired', error: event.error };
      return state;
    case 'releasing':
      if (event.type === 'release-landed') return { phase: 'released', via: state.via };
      if (event.type === 'release-failed') return { phase: 'held' };
      // A renewal refused while releasing may be that release having landed first: the
      // releasing call learns itself whether the lease was lost.
      if (event.type === 'refused' && event.by === 'append') return { phase: 'lost', error: event.error };
      if (event.type === 'deadline-passed') return { phase: 'expired', error: event.error };
      return state;
    case 'released':
    case 'lost':
    case 'expired':
      return state;
  }
}

/** Whether the run may still start work under the lease (a handler, a reconcile, an append). */
export const isUsable = (state: LeaseState): boolean => state.phase === 'held' || state.phase === 'releasing';

/** Whether the lease is gone for this run without being freed by it (lost or given up). */
export const isGone = (state: LeaseState): state is Extract<LeaseState, { error: AgentStoreError }> =>
  state.phase === 'lost' || state.phase === 'expired';

export interface LeaseMachine {
  readonly state: LeaseState;
  dispatch(event: LeaseEvent): LeaseState;
}

/**
 * Holds the state; `onGone` is called once, on the transition into `lost` or `expired` (the run
 * aborts its signal there).
 */
export function leaseMachine(
  onGone: (error: AgentStoreError) => void,
  initial: LeaseState = { phase: 'held' },
): LeaseMachine {
  // The one mutable fact about the lease; changed only by dispatch.
  let state: LeaseState = initial;
  return {
    get state() {
      return state;
    },
    dispatch(event) {
      const before = state;
      state = nextLeaseState(state, event);
      if (state !== before && isGone(state)) onGone(state.error);
      return state;
    },
  };
}
