import { describe, expect, it } from 'vitest';
import { onNextTurn } from '../src/loop/next-turn.ts';

describe('onNextTurn', () => {
  it('starts after the nextTick callbacks and microtasks queued before it', async () => {
    const order: string[] = [];
    const started = onNextTurn(async () => {
      order.push('task');
    });
    process.nextTick(() => order.push('nextTick'));
    queueMicrotask(() => order.push('microtask'));
    await started;
    // (Inside a microtask, as here and as in run(), Node runs the microtasks before the nextTicks.)
    expect(order).toEqual(['microtask', 'nextTick', 'task']);
  });

  it('starts once `settled` settles, fulfilled or rejected, when that comes before the next turn', async () => {
    for (const settled of [Promise.resolve(), Promise.reject(new Error('write #1 failed'))]) {
      const order: string[] = [];
      const started = onNextTurn(async () => {
        order.push('task');
      }, settled);
      setImmediate(() => order.push('next turn'));
      await started;
      expect(order).toEqual(['task']);
    }
  });

  it('rejects with what a task throws synchronously, instead of throwing inside a timer', async () => {
    await expect(
      onNextTurn(() => {
        throw new Error('thrown, not rejected');
      }),
    ).rejects.toThrow('thrown, not rejected');
  });
});
