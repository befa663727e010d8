/** Helpers of the golden-byte tests: hand-written hex with comments, checked in both directions. */
import assert from 'node:assert/strict'

/** Hex text to bytes: `#` starts a comment to the end of the line; spaces and `|` are ignored. */
export function hex(s: string): Buffer {
  const clean = s
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .join('')
    .replace(/[\s|]/g, '')
  return Buffer.from(clean, 'hex')
}

/** decode(golden) deep-equals `obj`, and encode(obj) is byte-identical to golden. */
export function golden<T>(
  encode: (m: T, v: number) => Uint8Array,
  decode: (b: Uint8Array, v: number) => T,
  version: number,
  obj: T,
  bytes: string,
): void {
  const g = hex(bytes)
  assert.deepStrictEqual(decode(g, version), obj, `decode at v${version}`)
  assert.equal(Buffer.from(encode(obj, version)).toString('hex'), g.toString('hex'), `encode at v${version}`)
}
