import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { API_TYPES_FILE, generateApiTypes, sessionModeDocument } from '../helpers/api-types.js';

// `npm run api:types`: regenerates the demo page's API types from today's document. Run it after
// any change to a route or an answer schema; test/static/api-types.test.ts fails until then.
mkdirSync(dirname(API_TYPES_FILE), { recursive: true });
writeFileSync(API_TYPES_FILE, await generateApiTypes(sessionModeDocument()));
process.stdout.write(`wrote ${relative(process.cwd(), API_TYPES_FILE)}\n`);
