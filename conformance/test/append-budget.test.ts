import { describe, expect, it } from 'vitest';
import { type ConformanceCheck, ConformanceViolation, limitSpec } from '../src/index.ts';
import { contextOf, MIB, packetLimitedStore, storeWithLimits } from './support/limited-stores.ts';

const budget = (): ConformanceCheck => {
  const found = limitSpec.checks.find((c) => c.name.startsWith('an append as large as the limits promise'));
  if (!found) throw new Error('no append-budget check');
  return found;
};

describe('the append budget a store’s limits promise', () => {
  it('a declared maxAppendBytes that is an exact multiple of maxMessageBytes passes, and one byte over is refused as the append', {
    timeout: 60_000,
  }, async () => {
    // Core's own validator refuses a message over maxMessageBytes first, so the kit must build
    // its over-budget append from messages that are each within it.
    for (const multiple of [2, 6]) {
      const store = storeWithLimits({
        maxMessageBytes: 256 * 1024,
        maxMessagesPerAppend: 10,
        maxAppendBytes: multiple * 256 * 1024,
      });
      await budget().run(contextOf(store));
    }
  });

  it('a store with no maxAppendBytes whose backend takes 16 MiB per write fails, named for the undeclared budget', {
    timeout: 60_000,
  }, async () => {
    // 100 messages of 1 MiB are promised; MariaDB's default max_allowed_packet takes 16 MiB.
    const store = packetLimitedStore({ maxMessageBytes: MIB, maxMessagesPerAppend: 100 }, 16 * MIB);
    const error = await budget()
      .run(contextOf(store))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConformanceViolation);
    expect((error as Error).message).toMatch(
      /an append of 33554432 bytes in 32 messages .* no maxAppendBytes is declared, so maxMessagesPerAppend \(100\) messages of maxMessageBytes each \(104857600 bytes\) must commit in one append: it failed with Error \(code ER_NET_PACKET_TOO_LARGE\).*max_allowed_packet.* — declare as maxAppendBytes the most one atomic write of this backend takes/,
    );
  });

  it('the same store passes once it declares the budget its backend takes', { timeout: 60_000 }, async () => {
    const store = packetLimitedStore(
      { maxMessageBytes: MIB, maxMessagesPerAppend: 100, maxAppendBytes: 16 * MIB },
      16 * MIB,
    );
    await budget().run(contextOf(store));
  });
});
