import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, foldSession, run, tool } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

/*
 * Attack on "a call that needs approval never runs without its recorded approval" (issue 15,
 * deliverable 3). `run()` checks `approvals`, then reads each decision's `approve` again to write
 * the decision record, again to decide whether to add the rejection result, and again to decide
 * whether to run the handler. A decision whose `approve` answers `false` for its first `flipAfter`
 * reads and `true` afterwards is checked and recorded as a rejection — and the handler runs.
 * The invariant is checked for every flip point, so it does not depend on how many reads run()
 * happens to make.
 */

function flippingDecision(flipAfter: number) {
  let reads = 0;
  return Object.defineProperty({ reason: 'no' }, 'approve', {
    enumerable: true,
    get: () => ++reads > flipAfter,
  }) as { approve: boolean; reason: string };
}

describe('an approval decision that changes between reads', () => {
  for (let flipAfter = 1; flipAfter <= 8; flipAfter++) {
    it(`approve flips to true after ${flipAfter} reads: the handler runs only if an approval is recorded, and each call has one result`, async () => {
      const ran: string[] = [];
      const agent = defineAgent({
        name: 'attack',
        instructions: 'x',
        tools: {
          wire: tool({
            description: 'wires money',
            input: z.object({}),
            needsApproval: true,
            handler: (_input, ctx) => {
              ran.push(ctx.toolCallId);
              return 'sent';
            },
          }),
        },
      });
      const store = durableMemoryStore();
      const asked = await run(agent, {
        store,
        sessionId: 's',
        message: 'go',
        llm: scriptedLlm([{ toolCalls: [{ name: 'wire', input: {} }] }]),
      });
      const callId = asked.pendingApprovals[0]!.toolCallId;
      try {
        await run(agent, {
          store,
          sessionId: 's',
          llm: scriptedLlm([{ text: 'done' }]),
          approvals: { [callId]: flippingDecision(flipAfter) },
        });
      } catch {
        // Refusing a decision that cannot make up its mind is fine; running behind a rejection is not.
      }
      const loaded = await store.load('s');
      const folded = foldSession(loaded!.messages);
      const recorded = folded.decisions.find((d) => d.toolCallId === callId);
      const results = loaded!.messages.filter((m) => m.role === 'tool' && m.toolCallId === callId);
      if (ran.length > 0) {
        expect(recorded?.approve, 'the handler ran although the recorded decision is not an approval').toBe(
          true,
        );
      }
      expect(results.length, 'results recorded for the one call').toBeLessThanOrEqual(1);
    });
  }
});
