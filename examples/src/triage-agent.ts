import { appendFileSync, closeSync, existsSync, fsyncSync, openSync, readFileSync } from 'node:fs';
import { defineAgent, tool } from '@agentstore/core';
import { z } from 'zod';

/**
 * A stand-in for Slack: every post is a line in a file, fsynced, keyed by the idempotency key.
 * It is the outside world, so it survives the crash that kills the agent.
 */
export function fakeSlack(ledgerPath: string) {
  const posts = (): { key: string; channel: string; text: string }[] =>
    existsSync(ledgerPath)
      ? readFileSync(ledgerPath, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
      : [];
  return {
    posts,
    post(post: { key: string; channel: string; text: string }) {
      appendFileSync(ledgerPath, `${JSON.stringify(post)}\n`);
      const fd = openSync(ledgerPath, 'r');
      fsyncSync(fd);
      closeSync(fd);
    },
  };
}

export interface TriageHooks {
  /** Called right after the Slack post went out, before its result is committed. */
  afterPost?: () => void;
  log: (line: string) => void;
}

export function triageAgent(slack: ReturnType<typeof fakeSlack>, hooks: TriageHooks) {
  return defineAgent({
    name: 'triage',
    instructions: 'Triage the incident: look the customer up, then alert on-call in Slack.',
    tools: {
      lookupCustomer: tool({
        description: 'Reads the customer record (no side effect)',
        input: z.object({ customer: z.string() }),
        safeToRetry: true,
        handler: ({ customer }, ctx) => {
          hooks.log(`lookupCustomer(${customer}) ran, attempt ${ctx.attempt}`);
          return { customer, plan: 'enterprise', region: 'eu-west' };
        },
      }),
      postSlack: tool({
        description: 'Posts to a Slack channel (side effect)',
        input: z.object({ channel: z.string(), text: z.string() }),
        handler: ({ channel, text }, ctx) => {
          slack.post({ key: ctx.idempotencyKey, channel, text });
          hooks.log(`postSlack(${channel}) POSTED, attempt ${ctx.attempt}`);
          hooks.afterPost?.();
          return { ok: true, channel };
        },
        // Asks the outside world whether the post happened, so a crash never posts twice.
        reconcile: ({ channel }, ctx) => {
          const found = slack.posts().some((p) => p.key === ctx.idempotencyKey);
          hooks.log(`postSlack reconcile: the post ${found ? 'is already in Slack' : 'never happened'}`);
          return found ? { happened: true, output: { ok: true, channel } } : { happened: false };
        },
      }),
    },
  });
}

/** What a model would answer at each step; a real provider can stand in when configured. */
export const triageScript = [
  { text: 'Looking up the customer.', toolCalls: [{ name: 'lookupCustomer', input: { customer: 'acme' } }] },
  {
    text: 'Alerting on-call.',
    toolCalls: [
      { name: 'postSlack', input: { channel: '#oncall', text: 'Acme (enterprise, eu-west): checkout down' } },
    ],
  },
  { text: 'On-call has been alerted in #oncall about the Acme checkout outage.' },
];
