// examples/src/docs/screenshot-tool.ts
import { tool } from '@agentstore/core';
import { z } from 'zod';

export const screenshotTool = (capture: (url: string) => Promise<string>) =>
  tool({
    description: 'Screenshot of the page',
    input: z.object({ url: z.string() }),
    safeToRetry: true,
    // The JSON output is the stored result (what reconcile and people read)…
    handler: async ({ url }) => ({ url, png: await capture(url) }), // base64 PNG
    // …and the model sees it as text and an image.
    toModelOutput: ({ url, png }) => [
      { type: 'text', text: `The page at ${url}:` },
      { type: 'file', mediaType: 'image/png', data: png },
    ],
  });
