export * from './admission-attributes.js';
export * from './admission-module.js';
export * from './admission-chain.js';
export * from './admission-error.js';
export * from './modules/namespace-lifecycle.module.js';
