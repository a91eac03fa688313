// A worker process of `hcs-testbed explore` and `hcs-testbed run --jobs N`:
// the TypeScript sources through tsx's loader (as bin/hcs-testbed.mjs), then the worker loop.
import { register } from 'tsx/esm/api';
register();
await import('./worker.ts');
