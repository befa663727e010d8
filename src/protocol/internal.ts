/** Helpers the generated code calls. Not part of the public surface. */
import { EncodeError } from './errors-codec.js'

/** Structural equality over codec values (numbers, bigints, strings, booleans, null, Uint8Array, arrays, structs). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b)
  }
  if (a instanceof Uint8Array) {
    if (!(b instanceof Uint8Array) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
    return true
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false
    return true
  }
  const ao = a as Record<string, unknown>
  const bo = b as Record<string, unknown>
  // Every key of either side, without building their union (encoders call this per entry).
  for (const k in ao) if (Object.hasOwn(ao, k) && !fieldEqual(k, ao[k], bo[k])) return false
  for (const k in bo)
    if (Object.hasOwn(bo, k) && !Object.hasOwn(ao, k) && !fieldEqual(k, undefined, bo[k])) return false
  return true
}

function fieldEqual(k: string, x: unknown, y: unknown): boolean {
  if (k === 'unknownTaggedFields') {
    // absent and empty mean the same
    if (Array.isArray(x) && x.length === 0) x = undefined
    if (Array.isArray(y) && y.length === 0) y = undefined
  }
  return deepEqual(x, y)
}

/** Copies the defined properties of `init` onto `target`. */
export function assignDefined<T extends object>(target: T, init: Partial<T>): T {
  for (const k of Object.keys(init) as (keyof T)[]) {
    const v = init[k]
    if (v !== undefined) target[k] = v as T[keyof T]
  }
  return target
}

export function nullError(messageName: string, field: string, version: number): EncodeError {
  return new EncodeError('NULL_NOT_ALLOWED', `${messageName}.${field} cannot be null at version ${version}`)
}
