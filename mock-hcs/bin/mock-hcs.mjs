#!/usr/bin/env node
// Launcher usable from any directory without npm/npx: node mock-hcs/bin/mock-hcs.mjs --help
// Registers the repository's tsx loader, then runs mock-hcs/src/server.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/server.ts');
process.exit(await main(process.argv.slice(2)));
