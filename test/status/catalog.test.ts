/**
 * `hcs-testbed catalog` (src/harness/cli/catalog.ts) and the lite entry of `time` /
 * `status` (src/harness/cli/lite.ts).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Catalog } from '../../mock-hcs/src/index.js';
import { catalogText, catalogValues, defaultCatalog } from '../../src/harness/cli/catalog.js';
import { readManifest } from '../../src/harness/bundle/build.js';
import { ensureLiteBundle } from '../../src/harness/cli/cli-bundle.js';
import { defaultOsSupportMatrix } from '../../src/product/matrix/matrix.js';
import { REPO } from '../facade/fixture.js';

describe('hcs-testbed catalog', () => {
  it('lists the flavors, images with their Kubernetes versions, zones, subnets and the matrix rows; every matrix image is in the cloud (UPG-4, HCS-4)', async () => {
    const v = await defaultCatalog();
    expect(v.availabilityZones.length).toBeGreaterThan(0);
    expect(v.subnets.map((s) => s.name)).toEqual(expect.arrayContaining(['cp-subnet', 'worker-subnet']));
    for (const r of v.matrix) expect(v.images).toContainEqual(expect.objectContaining({ name: r.alaudaOSImage, kubernetesVersion: r.kubernetesVersion }));
    const text = catalogText(v);
    expect(text).toMatch(/^ {2}s6\.xlarge\.2\s+4\s+8 GiB\s+az1, az2$/m);
    expect(text).toMatch(/^ {2}alauda-os-v4\.2-k8s-v1\.32\.3\s+v1\.32\.3\s+active$/m);
    expect(text).toMatch(/^ {2}worker-subnet\s+192\.168\.10\.0\/24\s+192\.168\.10\.1/m);
    expect(text).toMatch(/^ {2}v4\.2\s+alauda-os-v4\.2-k8s-v1\.32\.3\s+v1\.32\.3\s+v1\.11\.3\s+3\.5\.16-0\s+v4\.2\.4$/m);
  }, 30_000);

  it('negative: a zone where the flavor is not sold (abandon) is not offered', () => {
    const c = { availabilityZones: ['az1', 'az2'], flavors: [{ id: 'f', name: 'f1', vcpus: 1, ramMiB: 1024, availabilityZones: [{ name: 'az1', soldOut: false, status: 'normal' }, { name: 'az2', soldOut: false, status: 'abandon' }] }], images: [], subnets: [] } as unknown as Catalog;
    expect(catalogValues(c, defaultOsSupportMatrix().rows).flavors).toEqual([{ name: 'f1', vcpus: 1, ramMiB: 1024, zones: ['az1'] }]);
  });
});

describe('time and status from the lite bundle (not the full CLI)', () => {
  it('the lite bundle holds the two commands and the kubeconfig reader only: no testbed, controllers or HTTP server', async () => {
    expect(await ensureLiteBundle()).toBeDefined();
    const inputs = Object.keys(readManifest('lite')!.inputs as Record<string, unknown>);
    expect(inputs).toContain('src/harness/cli/time.ts');
    expect(inputs).toContain('src/harness/cli/status.ts');
    expect(inputs.filter((f) => /^src\/(testbed|capi|provider|facade|dashboard|kube)\/|fastify|@kubernetes/.test(f))).toEqual([]);
    expect(inputs.length).toBeLessThan(150);
  }, 60_000);

  it('bin/hcs-testbed.mjs runs `time` and `status` from it: an unreachable server is reported, exit 1', () => {
    for (const cmd of ['time', 'status']) {
      const r = spawnSync(process.execPath, [join(REPO, 'bin/hcs-testbed.mjs'), cmd, '--server', 'http://127.0.0.1:9'], { encoding: 'utf8', timeout: 30_000 });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stdout).toMatch(/^error: http:\/\/127\.0\.0\.1:9: .*ECONNREFUSED/);
    }
  }, 60_000);
});
