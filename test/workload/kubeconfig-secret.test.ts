/**
 * The <cluster>-kubeconfig Secret as Cluster API writes it (util/kubeconfig): type cluster.x-k8s.io/secret,
 * label cluster.x-k8s.io/cluster-name, data key `value`, owner the KubeadmControlPlane (controller) or, for a
 * Cluster without controlPlaneRef, the Cluster; it points at https://<controlPlaneEndpoint>, and at the
 * HTTP facade's URL for the cluster while the facade serves.
 */
import { X509Certificate } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Cluster, KubeadmControlPlane } from '../../src/product/api/capi.js';
import { secretValue, type Node, type Secret } from '../../src/product/api/core.js';
import { SECRET_TYPE_CLUSTER as CLUSTER_SECRET_TYPE, kubeconfigSecretName } from '../../src/product/api/capi.js';
import { KUBEADM_CONFIGMAP } from '../../src/world/capi/kubeadm-config.js';
import { startFacade } from '../../src/world/facade/index.js';
import { ClientNodeKube } from '../../src/core/kube/client-node.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { applyObject, loadManifestPath } from '../../src/harness/manifests/index.js';
import { createTestbed, type Testbed } from '../../src/harness/testbed/index.js';
import { bootWorkerCluster, NS } from './fixture.js';

const CLUSTER = fileURLToPath(new URL('../../scenarios/manifests/cluster', import.meta.url));

interface Kubeconfig {
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data'?: string; 'insecure-skip-tls-verify'?: boolean } }[];
  users: { name: string; user: { 'client-certificate-data': string; 'client-key-data': string } }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  'current-context': string;
}

function secret(tb: Testbed, cluster = 'demo'): Secret | undefined {
  return tb.env.mgmt.getSync<Secret>({ kind: 'Secret', namespace: NS, name: kubeconfigSecretName(cluster) });
}

function kubeconfigOf(s: Secret): Kubeconfig {
  return parse(secretValue(s, 'value')!) as Kubeconfig;
}

describe('OPS-1: <cluster>-kubeconfig of a worker-only Cluster (written by the Cluster controller)', () => {
  let tb: Testbed;
  beforeAll(async () => {
    tb = await bootWorkerCluster();
  });
  afterAll(async () => tb?.close());

  it('labelled and typed as Cluster API writes it, owned by the Cluster, pointing at the control plane endpoint', () => {
    const s = secret(tb)!;
    expect(s).toBeDefined();
    const cluster = tb.env.mgmt.getSync<Cluster>({ kind: 'Cluster', namespace: NS, name: 'demo' })!;
    expect(s.type).toBe(CLUSTER_SECRET_TYPE);
    expect(s.metadata.labels).toMatchObject({ 'cluster.x-k8s.io/cluster-name': 'demo' });
    expect(s.metadata.ownerReferences).toEqual([{ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', name: 'demo', uid: cluster.metadata.uid }]);
    const kc = kubeconfigOf(s);
    const ep = cluster.spec.controlPlaneEndpoint!;
    expect(kc.clusters[0]).toMatchObject({ name: 'demo', cluster: { server: `https://${ep.host}:${ep.port}` } });
    expect(kc['current-context']).toBe('demo-admin@demo');
    expect(kc.contexts[0]).toEqual({ name: 'demo-admin@demo', context: { cluster: 'demo', user: 'demo-admin' } });
    // The client certificate: CN=kubernetes-admin, O=system:masters, issued by the cluster CA.
    const cert = new X509Certificate(Buffer.from(kc.users[0]!.user['client-certificate-data'], 'base64'));
    expect(cert.subject).toContain('CN=kubernetes-admin');
    expect(cert.subject).toContain('O=system:masters');
    const ca = secretValue(tb.env.mgmt.getSync<Secret>({ kind: 'Secret', namespace: NS, name: 'demo-ca' })!, 'tls.crt')!;
    expect(cert.verify(new X509Certificate(ca).publicKey)).toBe(true);
    expect(Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data']!, 'base64').toString()).toBe(ca);
  });

  it('while the facade serves, the Secret points at the facade, and a client using it lists the workload Nodes', async () => {
    const facade = await startFacade({ mgmt: tb.env.mgmt, workloads: tb.env.workloads, logs: tb.env.logs, clock: tb.clock });
    try {
      const r = await tb.sim.runUntil(async () => kubeconfigOf(secret(tb)!).clusters[0]!.cluster.server === facade.clusterUrl(NS, 'demo'), 60_000);
      expect(r.ok).toBe(true);
      const kc = kubeconfigOf(secret(tb)!);
      // The facade's CA (it serves TLS) and its bearer token, beside the client certificate upstream puts there.
      expect(Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data']!, 'base64').toString()).toContain('BEGIN CERTIFICATE');
      expect((kc.users[0]!.user as { token?: string }).token).toBe(facade.token);
      const client = await clientFromText(secretValue(secret(tb)!, 'value')!);
      const nodes = await client.list<Node>('Node');
      expect(nodes.map((n) => n.metadata.name).sort()).toEqual(['demo-worker-1', 'demo-worker-2', 'demo-worker-3']);
    } finally {
      await facade.close();
    }
  });
});

async function clientFromText(text: string): Promise<ClientNodeKube> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromString(text);
  return new ClientNodeKube(kc);
}

describe('OPS-1: <cluster>-kubeconfig and kubeadm-config of a Cluster with a KubeadmControlPlane', () => {
  let tb: Testbed;
  beforeAll(async () => {
    tb = await createTestbed({ seed: 5 });
    for (const m of loadManifestPath(CLUSTER)) await applyObject(tb.env.mgmt, m.obj, NS);
    const ok = await tb.env.sim.runUntil(async () => !!secret(tb) && !!tb.env.workloads.store(NS, 'demo').getSync({ kind: 'ConfigMap', ...KUBEADM_CONFIGMAP }), 60 * 60_000);
    expect(ok.ok).toBe(true);
  }, 120_000);
  afterAll(async () => tb?.close());

  it('the KCP owns the Secret (controller reference), as controlplane/kubeadm reconcileKubeconfig creates it', () => {
    const kcp = tb.env.mgmt.listSync<KubeadmControlPlane>('KubeadmControlPlane', { namespace: NS })[0]!;
    const s = secret(tb)!;
    expect(s.type).toBe(CLUSTER_SECRET_TYPE);
    expect(s.metadata.ownerReferences).toEqual([{ apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1', kind: 'KubeadmControlPlane', name: kcp.metadata.name, uid: kcp.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  });

  it('kube-system/kubeadm-config holds the ClusterConfiguration kubeadm uploads (v1beta4 for v1.31)', () => {
    const kcp = tb.env.mgmt.listSync<KubeadmControlPlane>('KubeadmControlPlane', { namespace: NS })[0]!;
    const cm = tb.env.workloads.store(NS, 'demo').getSync<KubeObject & { data?: Record<string, string> }>({ kind: 'ConfigMap', ...KUBEADM_CONFIGMAP })!;
    const cc = parse(cm.data!.ClusterConfiguration!) as Record<string, unknown>;
    expect(cc).toMatchObject({ apiVersion: 'kubeadm.k8s.io/v1beta4', kind: 'ClusterConfiguration', clusterName: 'demo', kubernetesVersion: kcp.spec.version.startsWith('v') ? kcp.spec.version : `v${kcp.spec.version}`, certificatesDir: '/etc/kubernetes/pki' });
    const want = kcp.spec.kubeadmConfigSpec.clusterConfiguration;
    if (want?.dns?.imageTag) expect((cc.dns as { imageTag?: string }).imageTag).toBe(want.dns.imageTag);
    if (want?.etcd?.local?.imageTag) expect((cc.etcd as { local: { imageTag?: string } }).local.imageTag).toBe(want.etcd.local.imageTag);
  });
});
