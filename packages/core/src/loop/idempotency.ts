type NodeCrypto = {
  createHash(algorithm: string): { update(data: string): { digest(encoding: 'hex'): string } };
};

// node:crypto hashes synchronously in ~2 µs; Web Crypto (Workers) is async and ~15× slower here.
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;

/**
 * The key handed to a tool call's handler: SHA-256 of session and call id, so it is the same
 * on every re-invocation of that call, fits Stripe's 255-character limit whatever the session
 * id, and reveals neither.
 */
export async function idempotencyKeyFor(sessionId: string | null, toolCallId: string): Promise<string> {
  const text = `${sessionId ?? ''}\u0000${toolCallId}`;
  if (nodeCrypto) return `agentstore_${nodeCrypto.createHash('sha256').update(text).digest('hex')}`;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return `agentstore_${hex}`;
}
