import { assertFacts, expectStoreError } from '../assertions.ts';
import type { ConformanceCheck, ConformanceSpec } from '../check.ts';
import { freshId, seedSession } from '../fixtures.ts';

const corruptRecordChecks: ConformanceCheck[] = [
  {
    name: 'load of a session with an undecodable message throws CorruptRecordError naming the session and seq',
    requires: ['corrupt'],
    async run({ store, capabilities }) {
      for (const seq of [3, 1, 5]) {
        const id = freshId('corrupt');
        await seedSession(store, id, 5);
        await capabilities.corrupt!(id, seq);
        const error = await expectStoreError(
          store.load(id),
          'CORRUPT_RECORD',
          `load after corrupting seq ${seq}`,
        );
        assertFacts(error, { sessionId: id, seq }, 'CorruptRecordError');
        if (seq > 1) {
          const paged = await expectStoreError(
            store.load(id, { afterSeq: seq - 1 }),
            'CORRUPT_RECORD',
            `load({ afterSeq: ${seq - 1} }) after corrupting seq ${seq}`,
          );
          assertFacts(paged, { sessionId: id, seq }, 'CorruptRecordError');
        }
      }
    },
  },
];

export const corruptRecordSpec: ConformanceSpec = { title: 'corrupt records', checks: corruptRecordChecks };
