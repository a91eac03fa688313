/**
 * The kube-apiserver pods' serving port behind pods/kube-apiserver-<node>/portforward
 * (src/world/facade/portforward/apiserver-forward.ts), as Cluster API's KubeadmControlPlane v1.10
 * reconcileCertificateExpiries reads it (controlplane/kubeadm/internal/workload_cluster.go
 * GetAPIServerCertificateExpiry; KCP-1 control plane lifecycle): an outside Go client
 * (test/facade/etcd-go/apiserver-cert: client-go's transport/spdy dial as in
 * controlplane/kubeadm/internal/proxy/dial.go, then crypto/tls without verification, as KCP)
 * reads the serving certificate: CN kube-apiserver, kubeadm's SANs, signed by the cluster
 * CA, NotAfter = the Node's creation + 8760 h (kubeadm issues it at `kubeadm join`); the
 * endpoint then answers HTTP with the workload cluster's API. Refusals (a missing pod, a
 * pod of another Node, another port, no cluster CA) end the TLS handshake with EOF, which
 * is what KCP logged before this endpoint existed.
 * The Go part skips when Go or the modules of tools/capi are missing; the app-level part
 * (a minimal SPDY client, test/facade/spdy-client.ts) always runs.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { EventLog } from '../../src/core/events.js';
import { SeededRng } from '../../src/core/rng.js';
import { startFacade, type Facade } from '../../src/world/facade/index.js';
import { apiServerCertificatePlan, firstServiceIp, parseGoDuration } from '../../src/world/workload/kubeadm-apiserver-cert.js';
import { EmbeddedStore } from '../../src/core/kube/embedded-store.js';
import { generateCASync, type CertKeyPair } from '../../src/core/pki/index.js';
import { EmbeddedWorkloadClusters } from '../../src/world/embedded.js';
import type { Node } from '../../src/product/api/core.js';
import type { Pod } from '../../src/world/workload/pods.js';
import { forward } from './spdy-client.js';
import { buildGoClient, goProblem, runGoClient } from './go-clients.js';

const skip = goProblem(['k8s.io/client-go@v0.32.3']);
const NODES = ['demo-cp-1', 'demo-cp-2'];
const YEAR_MS = 8760 * 3_600_000;

interface Out {
  subject?: string;
  issuer?: string;
  notBefore?: string;
  notAfter?: string;
  dnsNames?: string[];
  ips?: string[];
  peerCertificates?: number;
  verifyError?: string | null;
  getStatus?: number;
  getBody?: string;
  error?: { stage: string; message: string };
}

let clock: VirtualClock;
let workloads: EmbeddedWorkloadClusters;
let ca: CertKeyPair;
let facade: Facade;
let dir: string;
const created = new Map<string, number>();

async function setUp(): Promise<void> {
  clock = new VirtualClock(Date.parse('2026-01-01T00:00:00Z'));
  const rng = new SeededRng(11);
  workloads = new EmbeddedWorkloadClusters(clock, rng.fork('wl'), new EventLog(clock));
  const store = workloads.store('cpaas-system', 'demo');
  // What kubeadm uploaded (src/world/capi/kubeadm-config.ts): a non-default service subnet, the control plane endpoint.
  await store.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: 'kube-system', name: 'kubeadm-config' },
    data: { ClusterConfiguration: 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\ncertificateValidityPeriod: 8760h0m0s\ncontrolPlaneEndpoint: 192.168.1.100:6443\nnetworking:\n  dnsDomain: cluster.local\n  serviceSubnet: 10.128.0.0/16\n' },
  });
  for (const [i, name] of NODES.entries()) {
    await store.create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'node-role.kubernetes.io/control-plane': '' } } });
    const n = store.getSync<Node>({ kind: 'Node', name })!;
    created.set(name, Date.parse(n.metadata.creationTimestamp!));
    await store.updateStatus({ ...n, status: { addresses: [{ type: 'InternalIP', address: `192.168.1.${11 + i}` }], conditions: [{ type: 'Ready', status: 'True' }] } });
    await store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `kube-apiserver-${name}`, namespace: 'kube-system', annotations: { 'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint': `192.168.1.${11 + i}:6443` } },
      spec: { nodeName: name, containers: [{ name: 'kube-apiserver', image: 'registry.k8s.io/kube-apiserver:v1.33.13' }] },
    });
    clock.advanceBy(3_600_000);
  }
  // A kube-apiserver pod name that is not its Node's (bound elsewhere): not served.
  await store.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'kube-apiserver-demo-cp-9', namespace: 'kube-system' }, spec: { nodeName: 'demo-cp-1', containers: [{ name: 'kube-apiserver', image: 'registry.k8s.io/kube-apiserver:v1.33.13' }] } });
  // A second cluster without a CA Secret.
  const other = workloads.store('cpaas-system', 'noca');
  await other.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'noca-cp-1' } });
  await other.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'kube-apiserver-noca-cp-1', namespace: 'kube-system' }, spec: { nodeName: 'noca-cp-1', containers: [{ name: 'kube-apiserver', image: 'registry.k8s.io/kube-apiserver:v1.33.13' }] } });
  ca = generateCASync(rng.fork('ca'), clock.now() - 86_400_000, 'kubernetes');
  facade = await startFacade({
    mgmt: new EmbeddedStore({ clock, rng: rng.fork('facade'), clusterName: 'unused' }),
    workloads,
    clock,
    clusterCa: async (ns, cluster) => (ns === 'cpaas-system' && cluster === 'demo' ? ca : undefined),
  });
  dir = mkdtempSync(join(tmpdir(), 'apiserver-cert-'));
}

describe('apiserver certificate plan (kubeadm apiserver.crt)', () => {
  it('parses kubeadm durations and finds the service IP', () => {
    expect(parseGoDuration('8760h0m0s')).toBe(YEAR_MS);
    expect(parseGoDuration('1h30m')).toBe(5_400_000);
    expect(parseGoDuration('soon')).toBeUndefined();
    expect(firstServiceIp('10.96.0.0/12')).toBe('10.96.0.1');
    expect(firstServiceIp('10.128.7.0/16,fd00::/108')).toBe('10.128.0.1');
    expect(firstServiceIp('fd00:10:96::/112')).toBe('fd00:10:96:0:0:0:0:1');
    expect(firstServiceIp('nonsense')).toBeUndefined();
  });

  it("kubeadm's defaults without a ClusterConfiguration; certSANs and a DNS endpoint added once", () => {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', creationTimestamp: '2026-03-01T10:00:00Z' }, spec: {}, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.5' }] } } as Node;
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'kube-apiserver-n1', namespace: 'kube-system' }, spec: { nodeName: 'n1', containers: [] } } as Pod;
    const p = apiServerCertificatePlan(node, pod, {})!;
    expect(p.request.commonName).toBe('kube-apiserver');
    expect(p.request.dnsNames).toEqual(['n1', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']);
    expect(p.request.ips).toEqual(['10.96.0.1', '10.0.0.5']);
    expect(new Date(p.notAfter).toISOString()).toBe('2027-03-01T10:00:00.000Z');
    expect(new Date(p.notBefore).toISOString()).toBe('2026-03-01T09:55:00.000Z');
    const q = apiServerCertificatePlan(node, pod, { controlPlaneEndpoint: 'api.demo.example:6443', apiServer: { certSANs: ['api.demo.example', '10.0.0.99', 'kubernetes'] }, certificateValidityPeriod: '720h' })!;
    expect(q.request.dnsNames).toEqual(['n1', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', 'api.demo.example']);
    expect(q.request.ips).toEqual(['10.96.0.1', '10.0.0.5', '10.0.0.99']);
    expect(q.notAfter - q.issuedAt).toBe(720 * 3_600_000);
  });
});

beforeAll(setUp, 60_000);
afterAll(async () => {
  await facade?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('pods/kube-apiserver-<node>/portforward: app level', () => {
  it('serves the certificate on 6443; refuses another port, a pod not named after its Node, a missing pod, a cluster without CA', async () => {
    const demo = facade.clusterUrl('cpaas-system', 'demo');
    const ok = await forward(demo, facade, 'kube-apiserver-demo-cp-2', 6443);
    expect(ok.refused).toBeUndefined();
    const cert = new X509Certificate(ok.certificatePem!);
    expect(cert.subject).toBe('CN=kube-apiserver');
    expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(new Date(cert.validTo).getTime()).toBe(created.get('demo-cp-2')! + YEAR_MS);
    expect(cert.subjectAltName).toBe('DNS:demo-cp-2, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local, IP Address:10.128.0.1, IP Address:192.168.1.12, IP Address:192.168.1.100');
    const port = await forward(demo, facade, 'kube-apiserver-demo-cp-1', 6444);
    expect(port.refused).toBe(`error forwarding port 6444 to pod kube-apiserver-demo-cp-1, uid ${podUid('demo', 'kube-apiserver-demo-cp-1')}: failed to connect to localhost:6444: connection refused`);
    const stray = await forward(demo, facade, 'kube-apiserver-demo-cp-9', 6443);
    expect(stray.refused).toContain('failed to connect to localhost:6443: connection refused');
    expect(await forward(demo, facade, 'kube-apiserver-demo-cp-7', 6443)).toEqual({ status: 404 });
    const noca = await forward(facade.clusterUrl('cpaas-system', 'noca'), facade, 'kube-apiserver-noca-cp-1', 6443);
    expect(noca.refused).toContain('(the testbed has no cluster CA: Secret cpaas-system/noca-ca)');
  }, 60_000);
});

function podUid(cluster: string, name: string): string {
  return workloads.store('cpaas-system', cluster).getSync<Pod>({ kind: 'Pod', namespace: 'kube-system', name })!.metadata.uid!;
}

describe.skipIf(!!skip)(`KCP: the apiserver certificate through pods/kube-apiserver-<node>/portforward, with client-go and crypto/tls${skip ? ` [skipped: ${skip}]` : ''}`, () => {
  let bin: string;
  let caFile: string;
  const client = async (args: string[], cluster = 'demo'): Promise<Out> => {
    const kc = facade.kubeconfigPaths.workloads[`cpaas-system/${cluster}`]!;
    return runGoClient<Out>(bin, ['-kubeconfig', kc, ...args]);
  };

  beforeAll(async () => {
    bin = join(dir, 'apiserver-cert');
    caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, ca.certPem);
    await buildGoClient('./apiserver-cert', bin, 'apiserver-cert (client-go + crypto/tls)');
  }, 600_000);

  it("reads kubeadm's apiserver certificate as KCP does: CN kube-apiserver, NotAfter = the Node's creation + 1 year, SANs, signed by the cluster CA", async () => {
    for (const node of NODES) {
      const out = await client(['-pod', `kube-apiserver-${node}`, '-ca', caFile, '-verify-name', 'kubernetes.default.svc']);
      expect(out.error).toBeUndefined();
      expect(out.peerCertificates).toBe(1); // kubeadm's apiserver.crt holds the leaf only
      expect(out.subject).toBe('kube-apiserver');
      expect(out.issuer).toBe('kubernetes');
      expect(out.notAfter).toBe(new Date(created.get(node)! + YEAR_MS).toISOString().replace('.000Z', 'Z'));
      expect(out.notBefore).toBe(new Date(created.get(node)! - 5 * 60_000).toISOString().replace('.000Z', 'Z'));
      expect(out.dnsNames).toEqual([node, 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']);
      expect(out.ips).toEqual(['10.128.0.1', `192.168.1.${11 + NODES.indexOf(node)}`, '192.168.1.100']);
      expect(out.verifyError).toBeNull();
    }
    // Verified for the node name too; not for a name it does not carry.
    expect((await client(['-pod', 'kube-apiserver-demo-cp-1', '-ca', caFile, '-verify-name', 'demo-cp-1'])).verifyError).toBeNull();
    expect((await client(['-pod', 'kube-apiserver-demo-cp-1', '-ca', caFile, '-verify-name', 'demo-cp-2'])).verifyError).toContain('certificate is valid for');
  }, 120_000);

  it('answers HTTP after the handshake: the workload cluster API with the kubeconfig token', async () => {
    const out = await client(['-pod', 'kube-apiserver-demo-cp-1', '-get', '/api/v1/nodes/demo-cp-2']);
    expect(out.error).toBeUndefined();
    expect(out.getStatus).toBe(200);
    expect((JSON.parse(out.getBody!) as Node).metadata.name).toBe('demo-cp-2');
  }, 60_000);

  it('refusals end the TLS handshake with EOF (what KCP logged before: "TLS handshake with the kube-apiserver failed: EOF"); a missing pod fails the upgrade', async () => {
    for (const [args, cluster] of [
      [['-pod', 'kube-apiserver-demo-cp-1', '-port', '6444'], 'demo'],
      [['-pod', 'kube-apiserver-demo-cp-9'], 'demo'],
      [['-pod', 'kube-apiserver-noca-cp-1'], 'noca'],
    ] as const) {
      const out = await client([...args], cluster);
      expect(out.error).toEqual({ stage: 'handshake', message: 'TLS handshake with the kube-apiserver failed: EOF' });
    }
    const missing = await client(['-pod', 'kube-apiserver-demo-cp-7']);
    expect(missing.error?.stage).toBe('dial');
    expect(missing.error?.message).toContain('error upgrading connection');
  }, 120_000);
});
