/**
 * The key handed to a tool call's handler: SHA-256 of session and call id, so it is the same
 * on every re-invocation of that call, fits Stripe's 255-character limit whatever the session
 * id, and reveals neither. Uses Web Crypto, present in Node ≥ 22 and in Workers.
 */
export async function idempotencyKeyFor(sessionId: string | null, toolCallId: string): Promise<string> {
  const data = new TextEncoder().encode(`${sessionId ?? ''}\u0000${toolCallId}`);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', data));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return `agentstore_${hex}`;
}
