import { type AgentStore, defineAgent, type RunOptions, run, SessionBusyError, tool } from '@agentstore/core';
import { crashAfterToolResults, durableMemoryStore, isSimulatedCrash } from '@agentstore/core/testing';
import { createOpenAI } from '@ai-sdk/openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromAiSdk } from '../src/index.ts';
import {
  assistantText,
  type FakeResponsesApi,
  functionCall,
  startFakeResponsesApi,
} from './fake-responses-api.ts';

// `@ai-sdk/openai` against a local server speaking the Responses API, driven by a durable run().

let api: FakeResponsesApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** First request: call the tool. Once a tool result is in the input: answer. */
// biome-ignore lint/suspicious/noExplicitAny: raw Responses API request body
const toolThenAnswer = (callId: string, name: string, args: unknown, answer: string) => (body: any) =>
  body.input.some((item: { type?: string }) => item.type === 'function_call_output')
    ? [assistantText(answer)]
    : [functionCall(callId, name, args)];

const modelFor = (server: FakeResponsesApi) =>
  fromAiSdk(createOpenAI({ baseURL: server.baseURL, apiKey: 'test' })('gpt-4o-mini'));

/** Resumes after a simulated crash, waiting out the dead run's lease. */
async function resume(agent: Parameters<typeof run>[0], options: RunOptions & { store: AgentStore }) {
  for (;;) {
    try {
      return await run(agent, options);
    } catch (error) {
      if (!(error instanceof SessionBusyError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, error.retryAfterMs + 5));
    }
  }
}

describe('@ai-sdk/openai (Responses API) end to end', () => {
  it('completes a durable run: tool call, tool result back in the provider format, final answer', async () => {
    const server = await startFakeResponsesApi(
      toolThenAnswer('call_weather_1', 'getWeather', { city: 'Paris' }, 'It is 21°C in Paris.'),
      { input_tokens: 40, output_tokens: 8 },
    );
    api = server;
    const handled: unknown[] = [];
    const agent = defineAgent({
      name: 'weather',
      instructions: 'You report the weather.',
      tools: {
        getWeather: tool({
          description: 'Current weather for a city',
          input: z.object({ city: z.string() }),
          handler: async (input) => {
            handled.push(input);
            return { city: input.city, tempC: 21 };
          },
        }),
      },
    });
    const store = durableMemoryStore();

    const result = await run(agent, {
      store,
      sessionId: 'e2e-weather',
      message: 'Weather in Paris?',
      llm: modelFor(server),
    });

    expect(result.status).toBe('complete');
    expect(result.response).toBe('It is 21°C in Paris.');
    expect(result.usage).toEqual({ inputTokens: 80, outputTokens: 16 });
    expect(handled).toEqual([{ city: 'Paris' }]);
    const stored = (await store.load('e2e-weather'))!.messages;
    expect(
      stored.map(({ role, content, toolCalls, toolCallId, toolName }) => ({
        role,
        content,
        toolCalls,
        toolCallId,
        toolName,
      })),
    ).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_weather_1', name: 'getWeather', input: { city: 'Paris' } }],
      },
      {
        role: 'tool',
        content: '{"city":"Paris","tempC":21}',
        toolCallId: 'call_weather_1',
        toolName: 'getWeather',
      },
      { role: 'assistant', content: 'It is 21°C in Paris.' },
    ]);

    // What went over the wire.
    expect(server.requests).toHaveLength(2);
    for (const request of server.requests) {
      expect(request).toMatchObject({ method: 'POST', path: '/v1/responses', authorization: 'Bearer test' });
    }
    const [first, second] = server.requests.map((r) => r.body);
    expect(first.model).toBe('gpt-4o-mini');
    expect(first.input).toEqual([
      { role: 'system', content: 'You report the weather.' },
      { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
    ]);
    expect(first.tools).toEqual([
      expect.objectContaining({
        type: 'function',
        name: 'getWeather',
        description: 'Current weather for a city',
        parameters: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
          additionalProperties: false,
        },
      }),
    ]);
    // The call, then its result, in the Responses API's own items.
    expect(second.input.slice(2)).toEqual([
      { type: 'function_call', call_id: 'call_weather_1', name: 'getWeather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_weather_1', output: '{"city":"Paris","tempC":21}' },
    ]);
  });

  it('after a crash, sends the durability error back as the call output instead of re-sending mail', async () => {
    const server = await startFakeResponsesApi(
      toolThenAnswer('call_mail_1', 'sendEmail', { to: 'ops@example.com' }, 'I could not confirm the mail.'),
    );
    api = server;
    let sent = 0;
    const agent = defineAgent({
      name: 'mailer',
      instructions: 'You send mail.',
      tools: {
        sendEmail: tool({
          description: 'Sends an email',
          input: z.object({ to: z.string() }),
          handler: async () => {
            sent += 1;
            return { delivered: true };
          },
        }),
      },
    });
    const store = durableMemoryStore();
    const llm = modelFor(server);

    // The process dies after the mail went out, before its result was stored.
    await expect(
      run(agent, {
        store: crashAfterToolResults(store, 2),
        sessionId: 'e2e-mail',
        message: 'Mail ops',
        llm,
        leaseTtlMs: 300,
      }),
    ).rejects.toSatisfy(isSimulatedCrash);
    expect(sent).toBe(1);

    const resumed = await resume(agent, { store, sessionId: 'e2e-mail', llm, leaseTtlMs: 300 });
    expect(resumed.status).toBe('complete');
    expect(resumed.response).toBe('I could not confirm the mail.');
    expect(sent).toBe(1);
    const stored = resumed.messages.find((m) => m.role === 'tool');
    expect(stored?.kind).toBe('tool-durability-error');

    expect(server.requests).toHaveLength(2);
    const outputs = server.requests[1]!.body.input.filter(
      (item: { type?: string }) => item.type === 'function_call_output',
    );
    expect(outputs).toHaveLength(1);
    expect(outputs[0].call_id).toBe('call_mail_1');
    // An error output: the provider wraps it as { error: … }, facts intact for the model.
    expect(JSON.parse(outputs[0].output)).toEqual({
      error: expect.objectContaining({
        code: 'TOOL_DURABILITY',
        toolName: 'sendEmail',
        toolCallId: 'call_mail_1',
      }),
    });
  });
});
