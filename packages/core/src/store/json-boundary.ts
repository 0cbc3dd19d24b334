import { InvalidArgumentError } from '../errors.ts';

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

/** `text` with every lone surrogate replaced by U+FFFD, as a UTF-8 encoder would store it. */
export function toWellFormedText(text: string): string {
  return isWellFormedText(text) ? text : text.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');
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
  // Values visited plus values waiting on the stack: checked before a container's children are
  // pushed, so a 30-million-element array is refused without reading (or allocating) its elements.
  let pending = 1;
  const tooMany = (frame: Frame, children: number) => {
    if (nodes + pending + children > MAX_JSON_NODES)
      fail(frame, `holds more than ${MAX_JSON_NODES} JSON values`);
  };
  while (stack.length) {
    const frame = stack.pop()!;
    if (frame.leaving) {
      onPath.delete(frame.leaving);
      continue;
    }
    pending--;
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
    if (v instanceof Uncopied) fail(frame, v.reason);
    const object = v as object;
    if (onPath.has(object)) fail(frame, 'is a cycle (it contains itself)');
    if (frame.depth >= MAX_JSON_DEPTH) fail(frame, `nests deeper than ${MAX_JSON_DEPTH} levels`);
    const depth = frame.depth + 1;
    onPath.add(object);
    stack.push({ value: null, key: null, parent: null, depth: 0, leaving: object });
    if (Array.isArray(object)) {
      if (Object.getPrototypeOf(object) !== Array.prototype) fail(frame, `${kindOf(object)} is not JSON`);
      tooMany(frame, object.length);
      pending += object.length;
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
    tooMany(frame, keys.length);
    pending += keys.length;
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

/** Stands in for what `snapshotInput` would not copy; `assertPlainJson` refuses it with `reason`. */
class Uncopied {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

/** Values one snapshot copies at most: several roots of up to `MAX_JSON_NODES` each. */
const MAX_SNAPSHOT_NODES = 4 * MAX_JSON_NODES;

/**
 * A copy of a store method's input that reads every property exactly once, made before it is
 * validated: stores validate the copy and serialise the copy, so a getter, a Proxy or a hidden
 * `toJSON` cannot answer one way to the checks and another way to `JSON.stringify`.
 * Plain objects and arrays are copied (own enumerable string keys, holes and extra array
 * properties kept, Symbol keys kept as markers, cycles kept); everything else (primitives,
 * functions, Dates, Maps, class instances) is kept as it is, for the validator to refuse.
 * Containers wider or deeper than any valid value become markers the validator refuses.
 */
export function snapshotInput<T>(value: T): T {
  const copies = new Map<object, unknown>();
  const work: { source: object; target: Record<string | symbol, unknown>; depth: number }[] = [];
  let nodes = 0;
  const take = (v: unknown, depth: number): unknown => {
    if (++nodes > MAX_SNAPSHOT_NODES) return new Uncopied(`holds more than ${MAX_JSON_NODES} JSON values`);
    if (typeof v !== 'object' || v === null) return v;
    const seen = copies.get(v);
    if (seen !== undefined) return seen;
    if (depth > MAX_JSON_DEPTH + 16) return new Uncopied(`nests deeper than ${MAX_JSON_DEPTH} levels`);
    const proto = Object.getPrototypeOf(v);
    const array = Array.isArray(v) && proto === Array.prototype;
    if (!array && proto !== Object.prototype && proto !== null) return v;
    let target: Record<string | symbol, unknown>;
    if (array) {
      const length = (v as unknown[]).length;
      if (length > MAX_JSON_NODES) return new Uncopied(`holds more than ${MAX_JSON_NODES} JSON values`);
      target = new Array(length) as unknown as Record<string, unknown>;
    } else target = {};
    copies.set(v, target);
    work.push({ source: v, target, depth });
    return target;
  };
  try {
    const root = take(value, 0);
    while (work.length) {
      const { source, target, depth } = work.pop()!;
      for (const key of Object.keys(source)) {
        const copy = take((source as Record<string, unknown>)[key], depth + 1);
        // `__proto__` as an own key (JSON.parse makes those) must stay a key, not become a prototype.
        if (key === '__proto__') {
          Object.defineProperty(target, key, {
            value: copy,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        } else target[key] = copy;
      }
      for (const symbol of Object.getOwnPropertySymbols(source)) target[symbol] = null;
    }
    return root as T;
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw error;
    const why = error instanceof Error ? error.message : String(error);
    throw new InvalidArgumentError({ argument: 'input', reason: `could not be read (${why})` });
  }
}
