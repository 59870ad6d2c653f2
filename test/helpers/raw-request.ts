/*
 * rawRequest now lives with the other raw-socket clients (raw-socket.ts); this name stays
 * importable for the tests that always took it from here.
 */
export { rawRequest, type RawResponse } from './raw-socket.js';
