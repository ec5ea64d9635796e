export type { RequestSpec } from './request.js';
export { serializeRequest } from './request.js';
