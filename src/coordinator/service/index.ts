export * from './config.js'
export * from './errors.js'
export * from './group-coordinator-service.js'
export * from './extension.js'
