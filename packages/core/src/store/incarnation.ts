/**
 * A new session's `incarnationId`: random, so no two creations of one session id share it. A store
 * draws one for every call that may create a session and keeps it only when the call does.
 */
export const newIncarnationId = (): string => crypto.randomUUID();
