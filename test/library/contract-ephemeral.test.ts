/**
 * Negative test of the TPL-3 statement in the disk-reuse invariant (src/harness/scenario/disk-reuse.ts, issue 37):
 * an ephemeral path mounted on a persistent disk is an invariant violation, not something only an event count
 * happens to notice. The bug, planted in this test only: the provider's cloud-init points the dataVolumes mount
 * (/var/lib/kubelet) at the persistent disk's device instead of the data volume's.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';

const planted = vi.hoisted(() => ({ on: false }));

vi.mock('../../src/product/provider/cloudinit.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/product/provider/cloudinit.js')>();
  return {
    ...real,
    injectCloudInit: (...a: Parameters<typeof real.injectCloudInit>) => {
      const out = real.injectCloudInit(...a);
      const pd = a[1].persistentDisks[0];
      if (!planted.on || !pd || !a[1].dataVolumes.length) return out;
      const doc = real.parseCloudConfig(out);
      const persistentDevice = `/dev/disk/by-id/virtio-${pd.volumeId.slice(0, 20)}`;
      doc.mounts = (doc.mounts ?? []).map((m) => (m[1] === a[1].dataVolumes[0]!.mountPath ? [persistentDevice, ...m.slice(1)] : m));
      return real.renderCloudConfig(doc);
    },
  };
});

describe('an ephemeral path on a persistent disk (issue 37)', () => {
  it('TPL-3: a cloud-init that mounts the dataVolumes path on the persistent disk fails scale-out-workers while the nodes run', { timeout: 180_000 }, async () => {
    planted.on = true;
    try {
      const path = join(resolve('scenarios'), 'scale-out-workers.yaml');
      const r = await runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory({}));
      expect(r.ok).toBe(false);
      const v = r.violations.filter((x) => x.rule === 'TPL-3');
      expect(v.map((x) => x.message).join('\n')).toMatch(/^node demo-worker-\d mounts persistent volume \S+ \(\w+\) of hostname demo-worker-\d slot 0 at \/var\/lib\/kubelet, which is no persistent mountPath of pool demo-worker-pool entry demo-worker-\d \(\/var\/cpaas\): an ephemeral path \(root, dataVolumes\) is never on a persistent disk$/m);
      expect(r.steps.find((s) => !s.ok)!.title).not.toContain('invariants at rest');
    } finally {
      planted.on = false;
    }
  });
});
