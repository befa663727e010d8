export * from './config.js'
export * from './errors.js'
export * from './group-coordinator-service.js'
