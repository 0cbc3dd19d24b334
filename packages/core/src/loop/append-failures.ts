import { isAgentStoreError } from '../errors.ts';

/** Errors that prove an append did not commit; anything else leaves the outcome unknown. */
export function isDefiniteAppendFailure(error: unknown): boolean {
  return isAgentStoreError(
    error,
    'SEQ_CONFLICT',
    'LEASE_LOST',
    'PAYLOAD_TOO_LARGE',
    'INVALID_ARGUMENT',
    'SESSION_ACCESS_DENIED',
    'SESSION_NOT_FOUND',
  );
}
