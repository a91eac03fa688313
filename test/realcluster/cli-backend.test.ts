/**
 * `hcs-testbed run --backend kubeconfig` end to end against a real
 * kube-apiserver (the way a kind user runs it): the CLI prepares the
 * cluster, serves the admission webhook, empties the cluster before the
 * scenario and reports as on the embedded backend.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/harness/cli/main.js';
import { ClientNodeKube } from '../../src/core/kube/client-node.js';
import { realCluster, skipReason, suiteSuffix } from './env.js';

describe.skipIf(!!skipReason)(`hcs-testbed run --backend kubeconfig${suiteSuffix}`, () => {
  it('runs a scenario on the cluster of a kubeconfig, leftovers of an earlier run removed first', async () => {
    const cp = await realCluster(['cpaas-system']);
    // A leftover from an interrupted earlier run, with a finalizer nobody will remove.
    const c = ClientNodeKube.fromKubeconfig(cp.kubeconfigPath);
    await c.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'leftover', namespace: 'cpaas-system', finalizers: ['hcs.io/never'] }, data: {} } as never);
    let out = '';
    // The kubeconfig's current context points nowhere; --context names the real one (the real kubectl step must use it too).
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    const real = kc.getCurrentContext();
    kc.addCluster({ name: 'nowhere', server: 'https://127.0.0.1:1', skipTLSVerify: true });
    kc.addContext({ name: 'nowhere', cluster: 'nowhere', user: kc.getCurrentUser()!.name });
    kc.setCurrentContext('nowhere');
    const file = join(mkdtempSync(join(tmpdir(), 'hcs-testbed-ctx-')), 'kubeconfig');
    writeFileSync(file, kc.exportConfig());
    const code = await main(['run', 'scenarios/scale-out-workers.yaml', '--backend', 'kubeconfig', '--kubeconfig', file, '--context', real, '--webhook-host', '127.0.0.1', '--no-color'], (s) => (out += s));
    expect(out).toContain(`backend: management cluster from ${file} (context ${real})`);
    expect(out).toContain('admission webhook at https://127.0.0.1:');
    expect(code, out).toBe(0);
    expect(out).toMatch(/PASS/);
    expect(await c.get({ kind: 'ConfigMap', namespace: 'cpaas-system', name: 'leftover' })).toBeUndefined();
    c.close();
  }, 300_000);
});
