export * from './group.js'
export * from './manager.js'
export * from './records.js'
export * from './types.js'
