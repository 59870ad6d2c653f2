// The types of the module the gateway serves at /vendor/openapi-fetch.mjs (static-site.ts):
// openapi-fetch's own, from the installed package whose ESM file that is.
export * from 'openapi-fetch';
export { default } from 'openapi-fetch';
