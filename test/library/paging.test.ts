/**
 * Lists longer than one page (issue 37): the provider's client with a page size of 2 (HcsClientOptions.pageSize,
 * the testbed's providerPageSize) takes every paging loop — ECS ListServersDetails by page number, EVS ListVolumes
 * by offset — with the library's small pools, and the flows pass as with one page. A client that reads only the
 * first page of a volume list (planted in this test) misses the persistent disks past it and fails.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HcsClient } from '../../src/product/cloud/index.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory, type TestbedOptions } from '../../src/harness/testbed/index.js';

const TIMEOUT = 180_000;

async function runFile(file: string, opts: Omit<TestbedOptions, 'seed'> = {}): Promise<ScenarioResult> {
  const path = join(resolve('scenarios'), file);
  return runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory(opts));
}

/** The bug: the volume list stops after its first page (the client ignores `count` and the page after). */
function firstPageOnly<T>(fn: () => Promise<T>): Promise<T> {
  const proto = HcsClient.prototype as unknown as { listVolumes(q?: unknown): Promise<unknown[]> };
  const real = proto.listVolumes;
  proto.listVolumes = async function (this: { opts?: { pageSize?: number } }, q) {
    const all = await real.call(this, q);
    const size = (this as unknown as { opts: { pageSize?: number } }).opts.pageSize;
    return size ? all.slice(0, size) : all;
  };
  return fn().finally(() => {
    proto.listVolumes = real;
  });
}

describe('lists longer than one page (issue 37)', () => {
  it('with pages of 2, scale-out-workers and lost-create pass as with one page', { timeout: TIMEOUT }, async () => {
    for (const f of ['scale-out-workers.yaml', 'lost-create.yaml']) {
      const r = await runFile(f, { providerPageSize: 2 });
      expect(r.steps.filter((s) => !s.ok).map((s) => `${f} ${s.title}: ${s.error}`)).toEqual([]);
    }
  });

  it('a client that reads only the first page of a volume list fails scale-out-workers', { timeout: TIMEOUT }, async () => {
    const r = await firstPageOnly(() => runFile('scale-out-workers.yaml', { providerPageSize: 2 }));
    expect(r.ok).toBe(false);
    // The pool refresh lists the cluster's persistent volumes: those past the first page never reach its status (POOL-5).
    expect(`${r.steps.find((s) => !s.ok)!.error}`).toMatch(/invariant violated: POOL-5: pool cpaas-system\/demo-worker-pool entry demo-worker-\d slot 0: status\.entries\[demo-worker-\d\]\.persistentDisks\[slot 0\]\.\w+ is .* \(for \d+s\)/);
  });
});
