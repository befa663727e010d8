// The row's load-side cost: the load threads' CPU per heartbeat they sent, members' and ceiling
// members' together (every send of the minute, whatever its place in its millisecond).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadCpuPerSend } from '../../tools/soak/soak.js'

test('load CPU per heartbeat sent, from the minute counts', () => {
  const row = { loadCpuMs: 600, sendsMs1: 4000, sendsMs2: 3000, sendsMs3: 2000, sendsMs4Plus: 1000 }
  assert.equal(loadCpuPerSend(row), '60')
  assert.equal(loadCpuPerSend({ ...row, loadCpuMs: 455, sendsMs4Plus: 0 }), '51')
})

test('a minute without sends or without a load-side CPU reading shows no figure', () => {
  const none = { loadCpuMs: 0, sendsMs1: 0, sendsMs2: 0, sendsMs3: 0, sendsMs4Plus: 0 }
  assert.equal(loadCpuPerSend(none), '—')
  assert.equal(loadCpuPerSend({ ...none, loadCpuMs: Number.NaN, sendsMs1: 10 }), '—')
})
