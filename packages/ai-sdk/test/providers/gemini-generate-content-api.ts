import {
  EndpointRefusal,
  isBase64,
  jsonResponse,
  type ProviderEndpoint,
  type RecordedFile,
  type RecordedRequest,
  recordingFetch,
  sameJson,
} from './endpoint-kit.ts';

// A local stand-in for the Gemini API's `models/{model}:generateContent` (non-streaming) that
// enforces Gemini 3's thought-signature rule (see README.md in this folder): in the current turn,
// the first functionCall part of every model step must come back carrying the thoughtSignature
// this endpoint returned on it. A missing signature is refused with HTTP 400, as Gemini 3 does.
// The documented placeholder `skip_thought_signature_validator` is accepted the way the real API
// accepts it (the model silently degrades) but recorded as a violation; in strict mode it is
// refused too. A signature this endpoint never returned, or returned on another part, is refused.

export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

export type GeminiPart = Record<string, unknown>;

export const functionCall = (name: string, args: unknown, thoughtSignature?: string): GeminiPart => ({
  functionCall: { name, args },
  ...(thoughtSignature !== undefined && { thoughtSignature }),
});
export const thought = (text: string, thoughtSignature?: string): GeminiPart => ({
  text,
  thought: true,
  ...(thoughtSignature !== undefined && { thoughtSignature }),
});
export const text = (value: string, thoughtSignature?: string): GeminiPart => ({
  text: value,
  ...(thoughtSignature !== undefined && { thoughtSignature }),
});

export interface SignatureViolation {
  /** Index of the request in `requests`. */
  request: number;
  kind: 'missing' | 'placeholder';
  functionName: string;
  /** Where the part sat, e.g. `contents[1].parts[0]`. */
  path: string;
}

export interface GeminiEndpoint extends ProviderEndpoint {
  /** Function calls of the current turn sent back without their signature. */
  readonly violations: SignatureViolation[];
}

export interface GeminiEndpointOptions {
  /** Refuse the placeholder signature too (the real API accepts it and degrades). */
  strict?: boolean;
  /** The `usageMetadata` of every answer (`totalTokenCount` is added). */
  usage?: {
    promptTokenCount: number;
    candidatesTokenCount: number;
    thoughtsTokenCount?: number;
    cachedContentTokenCount?: number;
  };
}

// biome-ignore lint/suspicious/noExplicitAny: raw request JSON
type Json = any;

const refuse = (message: string, status = 400, code = 'INVALID_ARGUMENT'): never => {
  throw new EndpointRefusal(status, { error: { code: status, message, status: code } });
};

/** The real API's wording for a function call replayed without its signature. */
export const missingSignatureMessage = (name: string, position: number) =>
  'Function call is missing a thought_signature in functionCall parts. This is required for tools to work ' +
  'correctly, and missing thought_signature may lead to degraded model performance. Additional data, function ' +
  `call \`${name}\` , position ${position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;

const ROUTE = /^\/v1beta\/models\/([^/:]+):generateContent$/;
const isFunctionResponseOnly = (content: Json) =>
  content.role === 'user' && content.parts.every((part: Json) => part.functionResponse !== undefined);

/** `reply` picks the parts of each answer's candidate from the request body. */
export function startGeminiApi(
  reply: (body: Json) => GeminiPart[],
  options: GeminiEndpointOptions = {},
): GeminiEndpoint {
  const usage = options.usage ?? { promptTokenCount: 40, candidatesTokenCount: 8 };
  const requests: RecordedRequest[] = [];
  const files: RecordedFile[] = [];
  const violations: SignatureViolation[] = [];
  // Every signature returned -> the part it was returned on (without the signature).
  const issued = new Map<string, Json>();
  /** The part as it must come back: without its signature, and without the call id the AI SDK adds. */
  const unsigned = (part: Json) => {
    const { thoughtSignature: _, ...rest } = part;
    if (rest.functionCall === undefined) return rest;
    const { id: __, ...call } = rest.functionCall;
    return { ...rest, functionCall: call };
  };

  const checkFiles = (contents: Json[], request: number) => {
    contents.forEach((content, i) => {
      if (content.role !== 'user') return;
      content.parts.forEach((part: Json, j: number) => {
        const at = `contents[${i}].parts[${j}]`;
        if (part.inlineData !== undefined) {
          if (typeof part.inlineData.mimeType !== 'string')
            refuse(`* GenerateContentRequest.${at}.inline_data.mime_type: required`);
          if (!isBase64(part.inlineData.data))
            refuse(`Invalid value at '${at}.inline_data.data' (TYPE_BYTES), Base64 decoding failed`);
        } else if (part.fileData !== undefined) {
          if (typeof part.fileData.fileUri !== 'string' || part.fileData.fileUri === '')
            refuse(`* GenerateContentRequest.${at}.file_data.file_uri: required`);
        } else return;
        files.push({ request, path: at, part });
      });
    });
  };

  const checkSignatures = (contents: Json[], request: number) => {
    // Every signature sent back must be one returned on that very part.
    contents.forEach((content, i) => {
      if (content.role !== 'model') return;
      content.parts.forEach((part: Json, j: number) => {
        const signature = part.thoughtSignature;
        if (signature === undefined || signature === SKIP_THOUGHT_SIGNATURE) return;
        if (!issued.has(signature) || !sameJson(issued.get(signature), unsigned(part)))
          refuse(
            `Corrupted thought signature at contents[${i}].parts[${j}]: it was not returned on this part.`,
          );
      });
    });
    // The current turn starts at the last user content that is not only function responses.
    const turnStart = contents.findLastIndex(
      (content) => content.role === 'user' && !isFunctionResponseOnly(content),
    );
    for (let i = Math.max(turnStart, 0); i < contents.length; i++) {
      const content = contents[i];
      if (content.role !== 'model') continue;
      // Parallel calls: only the first functionCall of a step carries the signature.
      const j = content.parts.findIndex((part: Json) => part.functionCall !== undefined);
      if (j < 0) continue;
      const part = content.parts[j];
      const path = `contents[${i}].parts[${j}]`;
      const functionName = String(part.functionCall.name);
      if (part.thoughtSignature === undefined) {
        violations.push({ request, kind: 'missing', functionName, path });
        refuse(missingSignatureMessage(functionName, i));
      }
      if (part.thoughtSignature === SKIP_THOUGHT_SIGNATURE) {
        violations.push({ request, kind: 'placeholder', functionName, path });
        if (options.strict)
          refuse(
            `Function call \`${functionName}\` at ${path} carries the placeholder thought signature ` +
              `\`${SKIP_THOUGHT_SIGNATURE}\` instead of the one the model returned (strict mode of this local ` +
              'endpoint; the real API accepts it and the model degrades).',
          );
      }
    }
  };

  const fetch = recordingFetch(requests, (request, requestIndex) => {
    const route = request.method === 'POST' ? ROUTE.exec(request.path) : null;
    if (route === null) refuse(`No route for ${request.method} ${request.path}`, 404, 'NOT_FOUND');
    if (!request.headers['x-goog-api-key'])
      refuse(
        "Method doesn't allow unregistered callers. Please use API Key or other form of API consumer identity to call this API.",
        403,
        'PERMISSION_DENIED',
      );
    const body = request.body;
    if (!Array.isArray(body.contents) || body.contents.length === 0)
      refuse('* GenerateContentRequest.contents: contents is not specified');
    for (const [i, content] of body.contents.entries())
      if (!Array.isArray(content.parts) || content.parts.length === 0)
        refuse(`* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`);
    checkFiles(body.contents, requestIndex);
    checkSignatures(body.contents, requestIndex);

    const parts = reply(body);
    for (const part of parts)
      if (typeof part.thoughtSignature === 'string') issued.set(part.thoughtSignature, unsigned(part));
    return jsonResponse(200, {
      candidates: [{ content: { parts, role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        ...usage,
        totalTokenCount:
          usage.promptTokenCount + usage.candidatesTokenCount + (usage.thoughtsTokenCount ?? 0),
      },
      modelVersion: route![1],
      responseId: `resp_${requestIndex + 1}`,
    });
  });
  return { fetch, requests, files, violations };
}
