// One process of the reasoning-model scenario:
// argv <target { module, options } JSON> <endpoint origins JSON> <effects file> crash <provider> <message JSON>
//   or <target JSON> <origins JSON> <effects file> resume
// The tool's effect is a line in the effects file, written before the handler returns; `crash`
// SIGKILLs the process right after the effect, inside the handler (write #1 landed, the result did
// not). `resume` runs every provider's session again, at once, without a message.

import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { fromAiSdk } from '@agentstore/ai-sdk';
import { openToolTarget } from '@agentstore/conformance';
import { defineAgent, run, tool } from '@agentstore/core';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';

type Provider = 'anthropic' | 'google' | 'openai';
const [handle, originsJson, effectsPath, mode, crashing, message] = process.argv.slice(2) as [
  string,
  string,
  string,
  'crash' | 'resume',
  Provider | undefined,
  string | undefined,
];
const origins = JSON.parse(originsJson) as Record<Provider, string>;

const models = (provider: Provider, origin = origins[provider]) => ({
  anthropic: () =>
    fromAiSdk(createAnthropic({ apiKey: 'test', baseURL: `${origin}/v1` })('claude-sonnet-4-5'), {
      settings: {
        maxOutputTokens: 4096,
        providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 2048 } } },
      },
    }),
  google: () =>
    fromAiSdk(
      createGoogleGenerativeAI({ apiKey: 'test', baseURL: `${origin}/v1beta` })('gemini-3-pro-preview'),
    ),
  openai: () =>
    fromAiSdk(createOpenAI({ apiKey: 'test', baseURL: `${origin}/v1` })('gpt-5'), {
      settings: { providerOptions: { openai: { store: false, include: ['reasoning.encrypted_content'] } } },
    }),
});

const effects = (): string[] =>
  existsSync(effectsPath) ? readFileSync(effectsPath, 'utf8').split('\n').filter(Boolean) : [];
const agent = defineAgent({
  name: 'orders',
  instructions: 'You look up orders.',
  tools: {
    lookup: tool({
      description: 'Look an order up',
      input: z.object({ id: z.number() }),
      handler: ({ id }, ctx) => {
        appendFileSync(effectsPath, `${ctx.idempotencyKey}\n`);
        if (mode === 'crash') process.kill(process.pid, 'SIGKILL');
        return { id, status: 'shipped' };
      },
      // Asks the outside world (the effects file) whether the effect happened.
      reconcile: ({ id }, ctx) =>
        effects().includes(ctx.idempotencyKey)
          ? { happened: true, output: { id, status: 'shipped' } }
          : { happened: false },
    }),
  },
});

const { module, options } = JSON.parse(handle) as { module: string; options?: Record<string, string> };
const target = await openToolTarget(module, options);
const store = await target.createStore();
const session = (provider: Provider, firstMessage?: string) =>
  run(agent, {
    store,
    sessionId: `reasoning-${provider}`,
    ...(firstMessage !== undefined ? { message: JSON.parse(firstMessage) } : {}),
    llm: models(provider)[provider](),
    // Long enough for a loaded machine; the resume waits out the killed holder's lease.
    leaseTtlMs: 5_000,
    leaseWaitMs: 60_000,
  });
try {
  const providers = mode === 'crash' ? [crashing!] : (Object.keys(origins) as Provider[]);
  const results = await Promise.all(providers.map((p) => session(p, mode === 'crash' ? message : undefined)));
  const outcome = results.map(({ status, response }) => ({ status, response }));
  process.stdout.write(JSON.stringify({ outcome, effects: effects().length }));
} finally {
  await store.close();
  await target.close();
}
