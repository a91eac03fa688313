/**
 * Kept for old command lines: `npx tsx src/facade/serve.ts ...` is
 * `hcs-testbed serve ...` (src/cli/serve.ts; see docs/demo.md).
 */
import { serveMain } from '../cli/serve.js';

void serveMain(process.argv.slice(2), (s) => process.stdout.write(s)).then((code) => process.exit(code));
