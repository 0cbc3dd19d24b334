/**
 * `agentstore studio`: a local web app over any store, to see durable runs — sessions, their
 * status and lease, every message with its parts, every result with its origin and idempotency key.
 * @module @agentstore/studio
 */
export { openInBrowser } from './server/open-browser.ts';
export type { StudioScope } from './server/scope.ts';
export { SESSION_STATUSES, type SessionStatus } from './server/session-status.ts';
export { type Studio, type StudioOptions, startStudio } from './server/studio-server.ts';
