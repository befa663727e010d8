// The entry of a soak load thread (tools/soak/load-thread.ts). Node 20 does not run a worker's
// entry module through the loader hooks that `--import tsx` registered on the main thread, so the
// worker registers tsx itself before it loads the TypeScript.
import { register } from 'tsx/esm/api'

register()
await import('./load-worker.ts')
