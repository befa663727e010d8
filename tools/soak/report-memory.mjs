// Preloaded into the soak's server process (`node --import`): once a second it writes the process's
// memory (RSS, heap used and total, external) as one JSON object to the file named by
// SOAK_SERVER_MEMORY_FILE, so the soak reads the server's heap from outside. The timer is unref'd:
// it never keeps the process alive, and it costs one small synchronous write a second.
import { renameSync, writeFileSync } from 'node:fs'

const file = process.env.SOAK_SERVER_MEMORY_FILE
if (file !== undefined && file !== '') {
  const write = () => {
    const m = process.memoryUsage()
    const tmp = `${file}.tmp`
    writeFileSync(
      tmp,
      JSON.stringify({
        at: Date.now(),
        rss: m.rss,
        heapUsed: m.heapUsed,
        heapTotal: m.heapTotal,
        external: m.external,
      }),
    )
    renameSync(tmp, file)
  }
  setInterval(write, 1000).unref()
  write()
}
