import * as storeApi from '@agentstore/core/store';

/** "validateAppendInput is not a function", "(0 , core.validateAppendInput) is not a function". */
const NOT_A_FUNCTION = /([A-Za-z_$][\w$]*)\)? is not a function/;
/** Node's ESM linker: "The requested module '@agentstore/core' does not provide an export named 'X'". */
const NO_EXPORT = /does not provide an export named '([A-Za-z_$][\w$]*)'/;

/**
 * Where a store-author helper went, when an error says a store called one that is not where it
 * imported it from (an import from `@agentstore/core` written before the helpers moved to
 * `@agentstore/core/store`). Null for any other error.
 */
export function movedHelperHint(error: unknown): string | null {
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  const name = NOT_A_FUNCTION.exec(message)?.[1] ?? NO_EXPORT.exec(message)?.[1];
  if (!name || !Object.hasOwn(storeApi, name)) return null;
  return `${name} is a store-author helper exported by @agentstore/core/store: import { ${name} } from '@agentstore/core/store'. The store-author helpers (validators, lease rules, record codecs) moved there from @agentstore/core; docs/custom-store.md, "What changed for store authors", lists what moved and what is new in the contract`;
}

/** The error, with the hint appended when it is one; the original is kept as its `cause`. */
export function withMovedHelperHint(error: unknown): unknown {
  const hint = movedHelperHint(error);
  if (!hint || !(error instanceof Error)) return error;
  const hinted = new Error(`${error.message}\n— ${hint}`, { cause: error });
  hinted.name = error.name;
  if (error.stack)
    hinted.stack = `${error.name}: ${hinted.message}\n${error.stack.split('\n').slice(1).join('\n')}`;
  return hinted;
}
