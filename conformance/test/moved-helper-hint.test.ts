import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCheck } from '../src/check.ts';
import { appendLoadSpec, openTargetModule } from '../src/index.ts';

describe('a store that imports a helper from where it used to be', () => {
  it('fails with the TypeError and says the helper is in @agentstore/core/store', async () => {
    const target = await openTargetModule(join(import.meta.dirname, 'fixtures', 'old-import-store.ts'));
    const store = await target.createStore();
    const check = appendLoadSpec.checks.find((c) => c.name.startsWith('append returns the new headSeq'))!;
    const error = (await runCheck(check, { store, target, capabilities: {} }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(/validateAppendInput is not a function/);
    expect(error.message).toMatch(
      /validateAppendInput is a store-author helper exported by @agentstore\/core\/store: import \{ validateAppendInput \} from '@agentstore\/core\/store'.*"What changed for store authors"/,
    );
    await store.close();
  });
});
