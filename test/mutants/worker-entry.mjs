// A worker process of the mutant runner (test/mutants/runner.ts): the explore/run worker
// (src/harness/explore/worker.ts) through tsx, with the mutant's source patches applied at load time by hook.mjs.
// The runner writes a one-line module per mutant that calls startWorker with its patches.
import { register } from 'node:module';

export async function startWorker(patches) {
  // Registered before tsx: hooks run last-registered first, so tsx's loader gets the patched text from this one.
  register('./hook.mjs', import.meta.url, { data: { patches } });
  const { register: tsx } = await import('tsx/esm/api');
  tsx();
  await import('../../src/harness/explore/worker.ts');
}
