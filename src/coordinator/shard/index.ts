export * from './group-coordinator-shard.js'
export * from './offsets/offset-metadata-manager.js'
export * from './result.js'
export * from './api-error.js'
