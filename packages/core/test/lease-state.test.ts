import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '../src/index.ts';
import {
  isGone,
  isUsable,
  type LeaseEvent,
  type LeaseState,
  leaseMachine,
  nextLeaseState,
} from '../src/loop/lease-state.ts';

const refusedError = new LeaseLostError({ sessionId: 's', holder: 'h', epoch: 1 });
const deadlineError = new LeaseLostError(
  { sessionId: 's', holder: 'h', epoch: 1 },
  { cause: new Error('deadline') },
);

const S = {
  acquiring: { phase: 'acquiring' },
  held: { phase: 'held' },
  releasingByAppend: { phase: 'releasing', via: 'final-append' },
  releasingByCall: { phase: 'releasing', via: 'release-call' },
  releasedByAppend: { phase: 'released', via: 'final-append' },
  releasedByCall: { phase: 'released', via: 'release-call' },
  lost: { phase: 'lost', error: refusedError },
  expired: { phase: 'expired', error: deadlineError },
} satisfies Record<string, LeaseState>;

const E = {
  granted: { type: 'granted' },
  sendFinalAppend: { type: 'release-sent', via: 'final-append' },
  sendReleaseCall: { type: 'release-sent', via: 'release-call' },
  landed: { type: 'release-landed' },
  failed: { type: 'release-failed' },
  renewalRefused: { type: 'refused', by: 'renewal', error: refusedError },
  appendRefused: { type: 'refused', by: 'append', error: refusedError },
  deadline: { type: 'deadline-passed', error: deadlineError },
} satisfies Record<string, LeaseEvent>;

// Every state × every event: what the lease becomes. Unlisted pairs leave the state unchanged.
const TRANSITIONS: [keyof typeof S, keyof typeof E, LeaseState][] = [
  ['acquiring', 'granted', S.held],
  ['held', 'sendFinalAppend', S.releasingByAppend],
  ['held', 'sendReleaseCall', S.releasingByCall],
  ['held', 'renewalRefused', S.lost],
  ['held', 'appendRefused', S.lost],
  ['held', 'deadline', S.expired],
  ['releasingByAppend', 'landed', S.releasedByAppend],
  ['releasingByCall', 'landed', S.releasedByCall],
  ['releasingByAppend', 'failed', S.held],
  ['releasingByCall', 'failed', S.held],
  // A renewal refused while releasing may be that release having landed first: not a loss.
  ['releasingByAppend', 'renewalRefused', S.releasingByAppend],
  ['releasingByCall', 'renewalRefused', S.releasingByCall],
  ['releasingByAppend', 'appendRefused', S.lost],
  ['releasingByCall', 'appendRefused', S.lost],
  ['releasingByAppend', 'deadline', S.expired],
  ['releasingByCall', 'deadline', S.expired],
];

describe('the lease state machine', () => {
  for (const [from, event, to] of TRANSITIONS) {
    it(`${from} + ${event} → ${to.phase}`, () => {
      expect(nextLeaseState(S[from], E[event])).toEqual(to);
    });
  }

  it('every other pair leaves the state as it is (final states never move)', () => {
    const listed = new Set(TRANSITIONS.map(([from, event]) => `${from}/${event}`));
    for (const from of Object.keys(S) as (keyof typeof S)[]) {
      for (const event of Object.keys(E) as (keyof typeof E)[]) {
        if (listed.has(`${from}/${event}`)) continue;
        expect(nextLeaseState(S[from], E[event]), `${from} + ${event}`).toBe(S[from]);
      }
    }
  });

  it('usable while held or releasing; gone once lost or expired', () => {
    expect(
      Object.values(S)
        .filter(isUsable)
        .map((s) => s.phase),
    ).toEqual(['held', 'releasing', 'releasing']);
    expect(
      Object.values(S)
        .filter(isGone)
        .map((s) => s.phase),
    ).toEqual(['lost', 'expired']);
  });

  it('calls onGone once, with the error, on the move into a gone state', () => {
    const gone: unknown[] = [];
    const machine = leaseMachine((error) => gone.push(error));
    machine.dispatch(E.sendFinalAppend);
    machine.dispatch(E.renewalRefused);
    expect(gone).toEqual([]);
    machine.dispatch(E.failed);
    machine.dispatch(E.renewalRefused);
    machine.dispatch(E.deadline);
    expect(gone).toEqual([refusedError]);
    expect(machine.state).toEqual(S.lost);
  });
});
