// The entry of the soak's clock tick thread (tools/soak/clock-watch.ts); it registers tsx itself,
// as tools/soak/load-worker.mjs does.
import { register } from 'tsx/esm/api'

register()
await import('./clock-worker.ts')
