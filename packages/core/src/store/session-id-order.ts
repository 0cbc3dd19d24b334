/**
 * The order `listSessions` returns sessions in: by session id, in Unicode code point order. That
 * is the byte order of the ids' UTF-8 (what a binary collation, `COLLATE "C"`, SQLite's `BINARY`,
 * DynamoDB or a Redis lex index of UTF-8 bytes gives), so every store can deliver it natively.
 * JavaScript's `<` compares UTF-16 code units instead, which differs for ids mixing U+E000–U+FFFF
 * with characters above U+FFFF (`'\uE000' < '😀'` is false in JavaScript, true here).
 * Returns a negative number, 0 or a positive number, as `Array.prototype.sort` expects.
 */
export function compareSessionIds(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Only where both units are U+D800 or above can UTF-16 order differ from code point order:
    // surrogates (D800–DFFF, a character above U+FFFF) go after E000–FFFF.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}
