import { InvalidArgumentError } from './errors.ts';

/**
 * What "plain JSON" means everywhere a value reaches a store: `null`, booleans, finite numbers,
 * well-formed UTF-16 strings, arrays without holes and plain objects (prototype `Object.prototype`
 * or `null`) with well-formed string keys, nested at most `MAX_JSON_DEPTH` containers deep and at
 * most `MAX_JSON_NODES` values in all. `toJSON` is never honoured: a `Date`, `Map`, `Buffer`, class
 * instance, function, Symbol, BigInt, `undefined`, NaN/Infinity or a cycle is refused with its
 * path, because `JSON.stringify` would silently change it (or throw) and the stored value would
 * no longer be what the caller handed over.
 */
export const MAX_JSON_DEPTH = 64;
export const MAX_JSON_NODES = 1_000_000;

interface Frame {
  value: unknown;
  key: string | number | null;
  parent: Frame | null;
  depth: number;
  /** Set on the marker pushed after a container's children: leaving it ends the cycle check. */
  leaving?: object;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const nativeWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/**
 * True when `text` holds no lone UTF-16 surrogate. Drivers that encode to UTF-8 replace lone
 * surrogates with U+FFFD, so two distinct ids would become one: they are refused instead.
 */
export function isWellFormedText(text: string): boolean {
  if (nativeWellFormed) return nativeWellFormed.call(text);
  return !LONE_SURROGATE.test(text);
}

/** `base.a[0]["odd key"]`: the path the error names. */
function pathOf(frame: Frame, base: string): string {
  const parts: string[] = [];
  for (let f: Frame | null = frame; f && f.key !== null; f = f.parent) {
    const key = f.key;
    parts.push(
      typeof key === 'number' ? `[${key}]` : IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`,
    );
  }
  return base + parts.reverse().join('');
}

function kindOf(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return 'BigInt';
  if (typeof value === 'symbol') return 'Symbol';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'number') return String(value);
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name ? name : 'an object with a custom prototype';
}

/**
 * Throws `InvalidArgumentError` naming the first value under `path` that is not plain JSON
 * (e.g. `messages[2].toolCalls[0].input.when: Date is not JSON`). Iterative, so a value nested
 * 100,000 deep is refused, never a stack overflow.
 */
export function assertPlainJson(value: unknown, path: string): void {
  const fail = (frame: Frame, reason: string): never => {
    throw new InvalidArgumentError({ argument: pathOf(frame, path), reason });
  };
  const onPath = new Set<object>();
  const stack: Frame[] = [{ value, key: null, parent: null, depth: 0 }];
  let nodes = 0;
  while (stack.length) {
    const frame = stack.pop()!;
    if (frame.leaving) {
      onPath.delete(frame.leaving);
      continue;
    }
    if (++nodes > MAX_JSON_NODES) fail(frame, `holds more than ${MAX_JSON_NODES} JSON values`);
    const v = frame.value;
    switch (typeof v) {
      case 'string':
        if (!isWellFormedText(v)) fail(frame, 'is not well-formed UTF-16 (it holds a lone surrogate)');
        continue;
      case 'boolean':
        continue;
      case 'number':
        if (!Number.isFinite(v)) fail(frame, `${v} is not JSON (numbers must be finite)`);
        continue;
      case 'object':
        break;
      default:
        fail(frame, `${kindOf(v)} is not JSON`);
    }
    if (v === null) continue;
    const object = v as object;
    if (onPath.has(object)) fail(frame, 'is a cycle (it contains itself)');
    if (frame.depth >= MAX_JSON_DEPTH) fail(frame, `nests deeper than ${MAX_JSON_DEPTH} levels`);
    const depth = frame.depth + 1;
    onPath.add(object);
    stack.push({ value: null, key: null, parent: null, depth: 0, leaving: object });
    if (Array.isArray(object)) {
      if (Object.getPrototypeOf(object) !== Array.prototype) fail(frame, `${kindOf(object)} is not JSON`);
      const keys = Object.keys(object);
      for (let i = object.length - 1; i >= 0; i--) {
        if (!Object.hasOwn(object, i)) fail(frame, `has a hole at index ${i} (a sparse array is not JSON)`);
        stack.push({ value: object[i], key: i, parent: frame, depth });
      }
      if (keys.length !== object.length) fail(frame, 'has properties besides its elements');
      continue;
    }
    const proto = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) fail(frame, `${kindOf(object)} is not JSON`);
    if (Object.getOwnPropertySymbols(object).length) fail(frame, 'has Symbol keys, which are not JSON');
    const keys = Object.keys(object);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const child: Frame = { value: (object as Record<string, unknown>)[key], key, parent: frame, depth };
      if (!isWellFormedText(key))
        fail(child, 'is a key that is not well-formed UTF-16 (it holds a lone surrogate)');
      stack.push(child);
    }
  }
}

/** True when `assertPlainJson` accepts `value`. */
export function isPlainJson(value: unknown): boolean {
  try {
    assertPlainJson(value, 'value');
    return true;
  } catch {
    return false;
  }
}
