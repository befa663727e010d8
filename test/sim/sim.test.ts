// The deterministic simulation of the coordinator (test/sim/sim.ts, RELIABILITY.md "Deterministic
// simulation") in the unit tier: a few hundred seeds of short runs, every invariant after every
// slice of simulated time; the regressions it found, by step list; and a check that it does see a
// broken plugin backend, shrunk to a short list.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { formatStep, generate, parseSteps, runSteps, shrink } from './sim.js'

/** SIM_SEEDS / SIM_STEPS widen the run (npm run sim runs campaigns). */
const SEEDS = Number(process.env.SIM_SEEDS ?? 200)
const STEPS = Number(process.env.SIM_STEPS ?? 40)

describe('deterministic simulation of the coordinator', () => {
  it(`${SEEDS} seeds of ${STEPS} steps keep every invariant`, async () => {
    const failures: string[] = []
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = await runSteps(seed, generate(seed, STEPS))
      if (r.violation !== undefined) {
        failures.push(`seed ${seed} step ${r.stepIndex}: ${r.violation.message.split('\n')[0]}`)
      }
    }
    assert.deepEqual(failures, [])
  })

  it('a seed gives the same steps and the same outcome every time', async () => {
    const a = generate(4242, 80)
    assert.deepEqual(generate(4242, 80), a)
    assert.deepEqual(parseSteps(a.map(formatStep).join('; ')), a)
    const first = await runSteps(4242, a)
    const second = await runSteps(4242, a)
    assert.deepEqual(second.stats, first.stats)
    assert.ok((first.stats['req:streams-heartbeat'] ?? 0) > 0, 'streams members heartbeated')
  })

  it('sees a plugin backend that acknowledges deletes without deleting, and shrinks it', async () => {
    const broken = (w: { plugin: { dropDeletes: boolean } }) => {
      w.plugin.dropDeletes = true
    }
    // Seed 6 pushes a description and later deletes its group (found by running seeds 1…20).
    const seed = 6
    const steps = generate(seed, 120)
    const r = await runSteps(seed, steps, broken)
    const found =
      r.violation === undefined
        ? undefined
        : { seed, steps: steps.slice(0, r.stepIndex + 1), kind: r.violation.kind }
    assert.ok(found !== undefined, 'a leak was found')
    assert.equal(found.kind, 'kip1331-leak')
    const shortest = await shrink(found.seed, found.steps, found.kind, 100, broken)
    assert.ok(shortest.length <= 8, `shrunk to ${shortest.map(formatStep).join('; ')}`)
    assert.equal((await runSteps(found.seed, shortest, broken)).violation?.kind, 'kip1331-leak')
    assert.equal((await runSteps(found.seed, shortest)).violation, undefined, 'a working backend passes')
  })

  it('regression: a group deleted and created again between two looks keeps its epochs apart', async () => {
    // The group's member vanishes, its expiry append stalls, the empty group is cleaned up and a
    // new member creates it again: the new group starts at epoch 1 again, which is no regression.
    const steps = parseSteps(
      'sjoin 397 305; svanish 474 162; sstall 213 706; tick 366 275; tick 769 313; sjoin 532 327',
    )
    assert.equal((await runSteps(102, steps)).violation, undefined)
  })

  it('regression: a restart while a transaction is prepared compares the state loading rebuilt', async () => {
    const steps = parseSteps(
      'tinit 52 622; tbegin 258 662; toffsets 590 841; sstall 209 659; classic 988 205; tick 252 803; tick 710 670; tick 410 677; restart 859 191',
    )
    assert.equal((await runSteps(607, steps)).violation, undefined)
  })

  it('regression: reads queued behind stalled appends are answered (DescribeGroups, a push)', async () => {
    // Seed 5069: appends stall one after another; a streams describe waited behind them with no
    // deadline for over a minute. Seed 5084: a push's reads did the same.
    const describe = parseSteps(
      'sstall 735 704; commit 276 727; tick 22 31; tick 199 451; commit 136 808; tinit 565 324; classic 771 975; push 766 307; tinit 444 285; describe 115 182; describe 810 520; tick 299 229; sstall 407 502; cleave 391 123; sfail 913 437; tick 913 3; cjoin 414 834; tick 999 954',
    )
    assert.equal((await runSteps(5069, describe)).violation, undefined)
    const push = parseSteps(
      'sjoin 692 869; sstall 903 25; sjoin 476 445; plugin 769 959; sleave 253 106; push 414 835; cjoin 886 311; sstall 37 70; tend 482 621; tick 581 799; tend 491 987; tick 414 933; svanish 670 320; svanish 706 844; tick 886 308',
    )
    assert.equal((await runSteps(5084, push)).violation, undefined)
  })
})
