import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LeaseLostError, SeqConflictError } from '../src/index.ts';
import {
  decideRunEnd,
  type RunEndAction,
  type RunEndFacts,
  releaseAfterWrites,
  releaseFailureGoesTo,
} from '../src/loop/run-end.ts';

// The end of a durable run as a table: each row is a case of test/background-errors.test.ts (or
// of the lease tests) reduced to its facts, and the action run() must take.

const base: RunEndFacts = {
  outcome: 'failed',
  lease: 'held',
  errorSaysLeaseLost: false,
  outcomeUnconfirmed: false,
  writesInFlight: false,
};

const ROWS: [string, Partial<RunEndFacts>, RunEndAction][] = [
  [
    'a finished run whose final append freed the lease',
    { outcome: 'succeeded', lease: 'released' },
    { release: 'none', why: 'freed-by-final-append' },
  ],
  [
    'a run ending at max-iterations or awaiting approval (no final append)',
    { outcome: 'succeeded' },
    { release: 'now' },
  ],
  [
    'a finished run whose lease expired locally after its last commit',
    { outcome: 'succeeded', lease: 'expired' },
    { release: 'now' },
  ],
  ['a failed run (model error, caller abort with nothing in flight)', {}, { release: 'now' }],
  [
    "a run failing with another run's LeaseLostError (not ours)",
    { errorSaysLeaseLost: false },
    { release: 'now' },
  ],
  ['a run whose lease the store refused as lost', { lease: 'lost' }, { release: 'none', why: 'lease-gone' }],
  [
    'a run that gave its lease up (deadline, unanswered call)',
    { lease: 'expired' },
    { release: 'none', why: 'lease-gone' },
  ],
  [
    'a run failing with its own LeaseLostError',
    { errorSaysLeaseLost: true },
    { release: 'none', why: 'lease-gone' },
  ],
  [
    'a dropped answer and a failed re-read: the append may still land',
    { outcomeUnconfirmed: true },
    { release: 'none', why: 'append-may-land' },
  ],
  [
    'the caller aborted while an append was unanswered',
    { writesInFlight: true },
    { release: 'after-writes' },
  ],
  [
    'the caller aborted while results were still to be sent',
    { writesInFlight: true, lease: 'releasing' },
    { release: 'after-writes' },
  ],
  [
    'an abandoned append that may land and a lost lease: lost wins',
    { writesInFlight: true, lease: 'lost' },
    { release: 'none', why: 'lease-gone' },
  ],
  [
    'an abandoned final append whose answer was dropped',
    { writesInFlight: true, outcomeUnconfirmed: true },
    { release: 'none', why: 'append-may-land' },
  ],
];

describe('the end-of-run decision', () => {
  for (const [what, facts, action] of ROWS) {
    it(what, () => {
      expect(decideRunEnd({ ...base, ...facts })).toEqual(action);
    });
  }
});

describe('the release after the writes a failed run left going', () => {
  const rows: [string, Parameters<typeof releaseAfterWrites>[0], boolean][] = [
    ['they settled under the lease: released', { lease: 'held', outcomeUnconfirmed: false }, true],
    [
      'they settled after the local deadline: still released (the store may hold it)',
      { lease: 'expired', outcomeUnconfirmed: false },
      true,
    ],
    [
      'the final append among them landed and freed the lease: no release sent',
      { lease: 'released', outcomeUnconfirmed: false },
      false,
    ],
    ['one was refused as a lost lease: not released', { lease: 'lost', outcomeUnconfirmed: false }, false],
    ['one may still land: left to lapse', { lease: 'held', outcomeUnconfirmed: true }, false],
  ];
  for (const [what, facts, release] of rows) {
    it(what, () => {
      expect(releaseAfterWrites(facts)).toBe(release);
    });
  }
});

describe('where a release that failed after the run failed is told', () => {
  const releaseError = new Error('connection reset during release');
  const ownError = () => new SeqConflictError({ sessionId: 's', expectedSeq: 1, actualSeq: 2 });
  const rows: [
    string,
    () => { error: unknown; callerReason?: unknown; releaseError?: unknown },
    'error' | 'background',
  ][] = [
    ["one of agentstore's own errors about this session", () => ({ error: ownError() }), 'error'],
    [
      'the caller abort reason (shared by runs)',
      () => {
        const reason = ownError();
        return { error: reason, callerReason: reason };
      },
      'background',
    ],
    ['a model error (not ours)', () => ({ error: new Error('model down') }), 'background'],
    ['a string', () => ({ error: 'nope' }), 'background'],
    [
      'an agentstore error about another session',
      () => ({ error: new SeqConflictError({ sessionId: 'other', expectedSeq: 1, actualSeq: 2 }) }),
      'background',
    ],
    [
      'an agentstore error without a session',
      () => ({ error: new InvalidArgumentError({ argument: 'x', reason: 'y' }) }),
      'background',
    ],
    [
      'one already carrying a release failure',
      () => ({ error: Object.assign(ownError(), { leaseReleaseError: 1 }) }),
      'background',
    ],
    [
      "the release's own error",
      () => {
        const error = new LeaseLostError({ sessionId: 's', holder: 'h', epoch: 1 });
        return { error, releaseError: error };
      },
      'background',
    ],
  ];
  for (const [what, make, goesTo] of rows) {
    it(what, () => {
      const facts = make();
      expect(
        releaseFailureGoesTo({
          error: facts.error,
          sessionId: 's',
          callerReason: facts.callerReason,
          releaseError: facts.releaseError ?? releaseError,
        }),
      ).toBe(goesTo);
    });
  }
});
