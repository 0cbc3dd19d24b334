import { rmSync } from 'node:fs';
import { launchD1, tempDir } from '@agentstore/servers';
import { afterAll, expect, it } from 'vitest';
import { d1Store, SCHEMA_VERSION } from '../src/index.ts';
import { message } from './launch.ts';

const dir = tempDir('d1-persist');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('an acknowledged append survives stopping and relaunching the D1 engine (launchD1 persist)', async () => {
  const init = { agentName: 'a', ownerId: null, tenantId: null, state: { step: 1 } };
  const first = await launchD1({ persist: dir });
  try {
    const store = d1Store({ binding: first.info.db });
    await store.migrate();
    await store.append('kept', {
      expectedSeq: 0,
      messages: [message('m1'), message('m2')],
      lease: null,
      session: { init },
    });
  } finally {
    await first.stop();
  }
  const second = await launchD1({ persist: dir });
  try {
    const store = d1Store({ binding: second.info.db });
    await expect(store.migrate()).resolves.toEqual({ version: SCHEMA_VERSION });
    const loaded = await store.load('kept');
    expect(loaded?.session).toMatchObject({ headSeq: 2, state: { step: 1 } });
    expect(loaded?.messages.map((m) => m.id)).toEqual(['m1', 'm2']);
  } finally {
    await second.stop();
  }
});
