import type { AgentStore, StoreLimits } from '@agentstore/core';
import { messageByteLength, snapshotInput, validateAppendInput } from '@agentstore/core/store';
import { durableMemoryStore } from '@agentstore/core/testing';
import type { CheckContext } from '../../src/index.ts';

export const MIB = 1024 * 1024;

/** A correct store (core's reference store, core's validator) declaring exactly these limits. */
export function storeWithLimits(limits: StoreLimits): AgentStore {
  return durableMemoryStore({ limits });
}

/**
 * A store on a backend that takes at most `packetBytes` in one write, as a MariaDB statement takes
 * at most max_allowed_packet (16 MiB by default): a larger append fails with the driver's error.
 * It declares whatever `limits` says, truthfully or not.
 */
export function packetLimitedStore(limits: StoreLimits, packetBytes: number): AgentStore {
  const inner = durableMemoryStore({ limits });
  return {
    ...inner,
    async append(sessionId, given) {
      // Core's boundary first, as every store does; then the backend's own write limit.
      const input = snapshotInput(given);
      validateAppendInput(sessionId, input, limits);
      const bytes = input.messages.reduce((sum, m) => sum + messageByteLength(m), 0);
      if (bytes > packetBytes) {
        throw Object.assign(new Error("Got a packet bigger than 'max_allowed_packet' bytes"), {
          code: 'ER_NET_PACKET_TOO_LARGE',
          errno: 1153,
        });
      }
      return inner.append(sessionId, input);
    },
  };
}

export const contextOf = (store: AgentStore): CheckContext => ({
  store,
  target: { name: 'limited', createStore: () => store },
  capabilities: {},
});
