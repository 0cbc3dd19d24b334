import type { JsonValue } from '@agentstore/core';

/**
 * A provider's JSON as it will be stored: keys holding `undefined` dropped, as storing and
 * sending JSON drops them anyway. Providers build their metadata as JS objects and may leave
 * such keys; the loop's boundary refuses anything that is not plain JSON.
 */
export function jsonCopy<T>(value: T): T extends undefined ? undefined : JsonValue {
  return (value === undefined ? undefined : JSON.parse(JSON.stringify(value))) as never;
}
