// What the data-plane benchmarks report of the kernel's state during a latency run
// (bench/data/kernel-state.ts): the page cache's dirty pages against the kernel's throttling
// thresholds, the disks' writes, iowait and steal. The benchmark's conclusions rest on these
// readings, so they are checked against texts laid out as Linux lays out its /proc files.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  describePageReporting,
  parseCounters,
  parseMeminfo,
  parsePageReporting,
  since,
  throttledFromMb,
} from '../../bench/data/kernel-state.js'

const MEMINFO = `MemTotal:       24683548 kB
MemFree:        21863132 kB
MemAvailable:   23671236 kB
Dirty:              3284 kB
Writeback:          1024 kB
AnonPages:        443488 kB
`

const vmstat = (dirtied: number, written: number) => `nr_free_pages 5465783
nr_dirty 825
nr_writeback 0
nr_dirtied ${dirtied}
nr_written ${written}
nr_dirty_threshold 1177449
nr_dirty_background_threshold 588006
`

// Fields: major minor name, reads (4), writes: completed, merged, sectors, ms, …
const diskstats = (sectors: number, ms: number) => `   7       0 loop0 10 0 20 1 0 0 0 0 0 4 1 0 0 0 0 0 0
 254       0 vda 482404 39153 24138058 649372 11432648 1095183 ${sectors} ${ms} 0 2782628 28686957 2822431 21715 1377291976 1154849 2483031 1049321
 254       1 vda1 10 0 20 1 5 0 999 7 0 4 1 0 0 0 0 0 0
`

const stat = (iowait: number, steal: number) => `cpu  1000 0 500 8000 ${iowait} 0 0 ${steal} 0 0
cpu0 500 0 250 4000 0 0 0 0 0 0
`

const pressure = (some: number, full: number) => `some avg10=0.00 avg60=0.15 avg300=1.52 total=${some}
full avg10=0.00 avg60=0.08 avg300=0.68 total=${full}
`

test('meminfo: Dirty, Writeback and MemFree in MB; a missing field is NaN', () => {
  assert.deepEqual(parseMeminfo(MEMINFO), { dirty: 3284 / 1024, writeback: 1, free: 21863132 / 1024 })
  assert.ok(Number.isNaN(parseMeminfo('MemFree: 1 kB\n').dirty))
})

test('counters: vmstat pages, whole disks only, /proc/stat iowait and steal, I/O pressure', () => {
  const c = parseCounters(vmstat(100, 50), diskstats(2048, 30), stat(40, 7), pressure(1500, 700))
  assert.equal(c.nrDirtied, 100)
  assert.equal(c.nrWritten, 50)
  assert.equal(c.dirtyThreshold, 1177449)
  assert.equal(c.backgroundThreshold, 588006)
  // vda counts, its partition vda1 and the loop device do not.
  assert.equal(c.sectorsWritten, 2048)
  assert.equal(c.msWriting, 30)
  assert.equal(c.iowait, 40)
  assert.equal(c.steal, 7)
  assert.equal(c.jiffies, 1000 + 500 + 8000 + 40 + 7)
  assert.equal(c.ioSome, 1500)
  assert.equal(c.ioFull, 700)
})

test('the kernel throttles writers from half way between the background threshold and the limit', () => {
  const c = parseCounters(vmstat(0, 0), '', '', '')
  assert.equal(throttledFromMb(c), ((588006 + 1177449) / 2) * (4096 / 2 ** 20))
})

test('since: what grew between two readings, per second for the disks', () => {
  const a = parseCounters(vmstat(0, 0), diskstats(0, 0), stat(0, 0), pressure(0, 0))
  // 256 pages (1 MB) dirtied, 512 written, 40 MiB written by the disk in 2 s, 10 % iowait.
  const b = parseCounters(
    vmstat(256, 512),
    diskstats(40 * 2048, 10),
    'cpu  1000 0 500 8900 100 0 0 0 0 0\n',
    pressure(3000, 1000),
  )
  const line = since(a, b, 2)
  assert.match(line, /pages dirtied 1 MB, written 2 MB/)
  assert.match(line, /disks wrote 20\.0 MB\/s/)
  assert.match(line, /CPU iowait 10\.0 %, steal 0\.0 %/)
  assert.match(line, /I\/O pressure some 3 ms, full 1 ms/)
  assert.match(line, /throttling from 3448 MB/)
})

const BUDDYINFO = `Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3
Node 0, zone    DMA32      1      2      2      2      1      2      0      3      3      1    753
`

test('free page reporting: on below the largest free block, off above it, MiB handed back', () => {
  const a = parsePageReporting('9\n', '0\n', '1048576\n', BUDDYINFO)
  const b = parsePageReporting('9\n', '0\n', '1572864\n', BUDDYINFO)
  assert.deepEqual(a, { order: 9, largestOrder: 10, minFreeMs: 0, reportedKib: 1048576 })
  assert.equal(
    describePageReporting(a, b),
    'free page reporting on (blocks of order 9, free 0 ms before), 512 MiB handed to the host',
  )
  const off = parsePageReporting('11\n', '', '1572864\n', BUDDYINFO)
  assert.equal(
    describePageReporting(b, off),
    "free page reporting off (order 11, above the largest free block's 10), 0 MiB handed to the host",
  )
})

test('free page reporting: a kernel without it says so', () => {
  assert.equal(parsePageReporting('', '', '', BUDDYINFO), null)
  assert.equal(describePageReporting(null, null), 'free page reporting: none')
})
