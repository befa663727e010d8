// The soak's machine probes: the memory walk is slower over a buffer larger than the caches than
// over one inside them, the clock probe measures something, and the CPU time, refault and context
// switch counts read Linux's files as they are written (the loopback probe is in
// machine.e2e.test.ts).
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import {
  clockProbeNs,
  memoryProbeNs,
  fileRefaults,
  machineCpuMs,
  parseContextSwitches,
  parseCpuTicks,
  parseFileRefaults,
  SwitchCounter,
  syscallProbeNs,
} from '../../tools/soak/machine.js'

test('memoryProbeNs: a walk over 64 MB takes longer a step than one over 16 KB', () => {
  memoryProbeNs(1, 4096)
  const cached = Math.min(...Array.from({ length: 5 }, () => memoryProbeNs(200_000, 4096)))
  memoryProbeNs(1)
  const uncached = Math.min(...Array.from({ length: 3 }, () => memoryProbeNs(200_000)))
  assert.ok(cached > 0, `${cached} ns`)
  assert.ok(uncached > 3 * cached, `${uncached} ns a step over 64 MB against ${cached} over 16 KB`)
})

test('clockProbeNs: a clock read takes time', () => {
  const ns = clockProbeNs()
  assert.ok(ns > 0 && ns < 100_000, `${ns} ns`)
})

test('syscallProbeNs: a system call takes longer than a clock read through the vDSO', () => {
  const syscall = Math.min(...Array.from({ length: 3 }, () => syscallProbeNs()))
  const clock = Math.min(...Array.from({ length: 3 }, () => clockProbeNs()))
  assert.ok(syscall > 0 && syscall < 1_000_000, `${syscall} ns`)
  if (process.platform === 'linux')
    assert.ok(syscall > clock, `${syscall} ns a system call, ${clock} ns a clock read`)
})

test('parseCpuTicks: busy is user, nice, system, irq and softirq; softirq and steal apart', () => {
  const stat =
    'cpu  2601677 16418 1101269 8492021 51580 17 152250 734 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1\n'
  assert.deepEqual(parseCpuTicks(stat), {
    busy: 2601677 + 16418 + 1101269 + 17 + 152250,
    softirq: 152250,
    steal: 734,
  })
  assert.equal(parseCpuTicks('cpu  1 2 3 4\n'), undefined)
  assert.equal(parseCpuTicks('cpu  1 2 3 4 5 6 x 8\n'), undefined)
  assert.equal(parseCpuTicks('intr 1\n'), undefined)
  if (existsSync('/proc/stat')) {
    const m = machineCpuMs()
    assert.ok(m !== undefined && m.busyMs > 0 && m.softirqMs >= 0 && m.stealMs >= 0, JSON.stringify(m))
    assert.ok(m.busyMs >= m.softirqMs)
  }
})

test('parseFileRefaults: the workingset_refault_file line, not its neighbours', () => {
  const vmstat = 'workingset_refault_anon 7\nworkingset_refault_file 644454\nworkingset_refault_file_x 1\n'
  assert.equal(parseFileRefaults(vmstat), 644454)
  assert.equal(parseFileRefaults('workingset_refault_anon 7\n'), undefined)
  if (existsSync('/proc/vmstat')) assert.ok((fileRefaults() as number) >= 0)
})

test('parseContextSwitches: both counts of a status file', () => {
  const status = 'Name:\tnode\nvoluntary_ctxt_switches:\t123\nnonvoluntary_ctxt_switches:\t45\n'
  assert.deepEqual(parseContextSwitches(status), { voluntary: 123, nonvoluntary: 45 })
  assert.equal(parseContextSwitches('Name:\tnode\n'), undefined)
})

test('SwitchCounter: a thread that sleeps switches voluntarily, and a gone process reads NaN', (t) => {
  if (!existsSync(`/proc/${process.pid}/task`)) {
    t.skip('no /proc here')
    return
  }
  const counter = new SwitchCounter(process.pid)
  // A futex wait with a timeout always blocks, so each is a voluntary switch. A timer does not do
  // as well on a busy machine: a thread kept off a core past the timer's due time finds it expired
  // and never sleeps in epoll_wait.
  const cell = new Int32Array(new SharedArrayBuffer(4))
  for (let i = 0; i < 5; i++) Atomics.wait(cell, 0, 0, 5)
  const d = counter.take()
  assert.ok(d.voluntary >= 5, `${d.voluntary} voluntary switches`)
  assert.ok(d.nonvoluntary >= 0)
  counter.follow(2 ** 22 + 1) // above the largest pid Linux hands out
  assert.ok(Number.isNaN(counter.take().voluntary))
})
