import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, type LanguageModel, type UserContent } from 'ai';
import { describe, expect, it } from 'vitest';
import { text as anthropicText, startAnthropicMessagesApi } from './anthropic-messages-api.ts';
import type { ProviderEndpoint } from './endpoint-kit.ts';
import { readJson } from './endpoint-kit.ts';
import { text as geminiText, startGeminiApi } from './gemini-generate-content-api.ts';
import { message, startOpenAIResponsesApi } from './openai-responses-api.ts';

// An image and a PDF in the user's message reach each local endpoint in that provider's own
// format (inline bytes as base64, or a URL passed through), and the endpoint records them.

// A 1×1 transparent PNG and a minimal PDF: real bytes, not placeholders.
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const PDF =
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n';
const png = Buffer.from(PNG_BASE64, 'base64');
const pdf = Buffer.from(PDF, 'latin1');
const PDF_BASE64 = pdf.toString('base64');

const inlineFiles: UserContent = [
  { type: 'text', text: 'What do these show?' },
  { type: 'file', mediaType: 'image/png', data: new Uint8Array(png) },
  { type: 'file', mediaType: 'application/pdf', data: new Uint8Array(pdf), filename: 'report.pdf' },
];

/** Sends one user message; refuses to download anything the provider cannot take by URL. */
async function send(model: LanguageModel, content: UserContent) {
  return generateText({
    model,
    messages: [{ role: 'user', content }],
    maxRetries: 0,
    experimental_download: async (requested) =>
      requested.map(({ url, isUrlSupportedByModel }) => {
        if (!isUrlSupportedByModel) throw new Error(`nothing may download here: ${url}`);
        return null;
      }),
  });
}

const filesOf = (endpoint: ProviderEndpoint) =>
  endpoint.files.map(({ request, path, part }) => ({ request, path, part }));

describe('an image and a PDF in the user message', () => {
  it('reach the Anthropic Messages API as image and document blocks', async () => {
    const api = startAnthropicMessagesApi(() => [anthropicText('A pixel and an empty report.')]);
    const model = createAnthropic({ apiKey: 'test', fetch: api.fetch })('claude-sonnet-4-5');

    await send(model, inlineFiles);
    await send(model, [
      { type: 'text', text: 'And these?' },
      { type: 'file', mediaType: 'image/png', data: new URL('https://example.com/chart.png') },
      { type: 'file', mediaType: 'application/pdf', data: new URL('https://example.com/report.pdf') },
    ]);

    expect(filesOf(api)).toEqual([
      {
        request: 0,
        path: 'messages[0].content[1]',
        part: { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
      },
      {
        request: 0,
        path: 'messages[0].content[2]',
        part: expect.objectContaining({
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 },
          title: 'report.pdf',
        }),
      },
      {
        request: 1,
        path: 'messages[0].content[1]',
        part: { type: 'image', source: { type: 'url', url: 'https://example.com/chart.png' } },
      },
      {
        request: 1,
        path: 'messages[0].content[2]',
        part: expect.objectContaining({
          type: 'document',
          source: { type: 'url', url: 'https://example.com/report.pdf' },
        }),
      },
    ]);
  });

  it('reach Gemini generateContent as inlineData and fileData parts', async () => {
    const api = startGeminiApi(() => [geminiText('A pixel and an empty report.')]);
    const model = createGoogleGenerativeAI({ apiKey: 'test', fetch: api.fetch })('gemini-3-pro-preview');
    const uploaded = 'https://generativelanguage.googleapis.com/v1beta/files/report-123';

    await send(model, inlineFiles);
    await send(model, [
      { type: 'text', text: 'And this?' },
      { type: 'file', mediaType: 'application/pdf', data: new URL(uploaded) },
    ]);

    expect(filesOf(api)).toEqual([
      {
        request: 0,
        path: 'contents[0].parts[1]',
        part: { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
      },
      {
        request: 0,
        path: 'contents[0].parts[2]',
        part: { inlineData: { mimeType: 'application/pdf', data: PDF_BASE64 } },
      },
      {
        request: 1,
        path: 'contents[0].parts[1]',
        part: { fileData: { mimeType: 'application/pdf', fileUri: uploaded } },
      },
    ]);
  });

  it('reach the OpenAI Responses API as input_image and input_file', async () => {
    const api = startOpenAIResponsesApi(() => [message('A pixel and an empty report.')]);
    const model = createOpenAI({ apiKey: 'test', fetch: api.fetch })('gpt-5');

    await send(model, inlineFiles);
    await send(model, [
      { type: 'text', text: 'And these?' },
      { type: 'file', mediaType: 'image/png', data: new URL('https://example.com/chart.png') },
      { type: 'file', mediaType: 'application/pdf', data: new URL('https://example.com/report.pdf') },
    ]);

    expect(filesOf(api)).toEqual([
      {
        request: 0,
        path: 'input[0].content[1]',
        part: { type: 'input_image', image_url: `data:image/png;base64,${PNG_BASE64}` },
      },
      {
        request: 0,
        path: 'input[0].content[2]',
        part: {
          type: 'input_file',
          filename: 'report.pdf',
          file_data: `data:application/pdf;base64,${PDF_BASE64}`,
        },
      },
      {
        request: 1,
        path: 'input[0].content[1]',
        part: { type: 'input_image', image_url: 'https://example.com/chart.png' },
      },
      {
        request: 1,
        path: 'input[0].content[2]',
        part: { type: 'input_file', file_url: 'https://example.com/report.pdf' },
      },
    ]);
  });

  it('are refused, in each provider format, when the base64 is not base64', async () => {
    const post = (endpoint: ProviderEndpoint, url: string, headers: Record<string, string>, body: unknown) =>
      endpoint.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const broken = 'not base64!';

    const anthropic = startAnthropicMessagesApi(() => []);
    const anthropicAnswer = await post(
      anthropic,
      'https://api.anthropic.com/v1/messages',
      { 'x-api-key': 'test', 'anthropic-version': '2023-06-01' },
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        messages: [
          {
            role: 'user',
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: broken } }],
          },
        ],
      },
    );
    const gemini = startGeminiApi(() => []);
    const geminiAnswer = await post(
      gemini,
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro-preview:generateContent',
      { 'x-goog-api-key': 'test' },
      {
        contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'application/pdf', data: broken } }] }],
      },
    );
    const openai = startOpenAIResponsesApi(() => []);
    const openaiAnswer = await post(
      openai,
      'https://api.openai.com/v1/responses',
      { authorization: 'Bearer test' },
      {
        model: 'gpt-5',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_file', filename: 'a.pdf', file_data: `data:application/pdf;base64,${broken}` },
            ],
          },
        ],
      },
    );

    expect([anthropicAnswer.status, geminiAnswer.status, openaiAnswer.status]).toEqual([400, 400, 400]);
    expect((await readJson(anthropicAnswer)).error.message).toBe(
      'messages.0.content.0.source.data: The image data is not valid base64',
    );
    expect((await readJson(geminiAnswer)).error.message).toContain('Base64 decoding failed');
    expect((await readJson(openaiAnswer)).error.code).toBe('invalid_value');
    expect([anthropic.files, gemini.files, openai.files]).toEqual([[], [], []]);
  });
});
