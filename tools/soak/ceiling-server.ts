// The soak's ceiling in a process of its own (tools/soak/ceiling.ts): the benchmarks' bare framing
// server (bench/server/load.ts, `bareServer`), answering every request frame with the bytes it is
// given. It tells the soak its port, its CPU time when asked, and exits when the soak goes.
import { bareServer } from '../../bench/server/load.js'
import type { CeilingMessage } from './ceiling.js'

const send = (m: CeilingMessage) => process.send?.(m)
process.once('message', async (answer: { base64: string }) => {
  const bare = await bareServer(Buffer.from(answer.base64, 'base64'))
  process.on('message', (m: 'cpu') => {
    if (m !== 'cpu') return
    const cpu = process.cpuUsage()
    send({ cpuMs: (cpu.user + cpu.system) / 1000 })
  })
  send({ port: bare.port })
})
process.on('disconnect', () => process.exit(0))
