type NodeCrypto = {
  createHash(algorithm: string): { update(data: string): { digest(encoding: 'hex'): string } };
};

// node:crypto hashes synchronously in ~2 µs; Web Crypto (Workers) is async and ~15× slower here.
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;

/**
 * The key handed to a tool call's handler: SHA-256 of session id, the session's incarnation and
 * call id, so it is the same on every re-invocation of that call, differs for a call of a later
 * session created under a deleted session's id (provider call ids like `call_0` repeat), fits
 * Stripe's 255-character limit whatever the session id, and reveals none of them. A session
 * created before stores recorded incarnations has none: its calls keep the formula they were
 * first run with (session and call id), so an upgrade never changes the key of a stored call.
 */
export async function idempotencyKeyFor(
  sessionId: string | null,
  toolCallId: string,
  incarnationId: string | null = null,
): Promise<string> {
  // Session ids hold no NUL, so the first NUL ends the session id in both formulas.
  const text =
    incarnationId === null
      ? `${sessionId ?? ''}\u0000${toolCallId}`
      : `${sessionId ?? ''}\u0000${incarnationId}\u0000${toolCallId}`;
  if (nodeCrypto) return `agentstore_${nodeCrypto.createHash('sha256').update(text).digest('hex')}`;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return `agentstore_${hex}`;
}
