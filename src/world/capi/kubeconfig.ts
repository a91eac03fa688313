/**
 * The `<cluster>-kubeconfig` Secret, as Cluster API writes it
 * (kubernetes-sigs/cluster-api util/kubeconfig/kubeconfig.go, read, not
 * copied): type `cluster.x-k8s.io/secret` (clusterv1.ClusterSecretType),
 * label `cluster.x-k8s.io/cluster-name: <cluster>`, data key `value` holding a
 * kubeconfig with cluster `<cluster>`, user `<cluster>-admin` authenticated by a
 * client certificate CN=kubernetes-admin, O=system:masters signed by the
 * cluster CA (`<cluster>-ca`), context `<cluster>-admin@<cluster>`.
 *
 * Writers, as upstream: the KubeadmControlPlane controller (controller
 * ownerReference to the KCP; controlplane/kubeadm/internal/controllers
 * reconcileKubeconfig, which also adopts a Secret the Cluster owned) once the
 * Cluster has a control plane endpoint, and, for a Cluster without
 * controlPlaneRef, the Cluster controller (ownerReference to the Cluster;
 * internal/controllers/cluster/cluster_controller_phases.go
 * reconcileKubeconfig).
 *
 * The server: `https://<spec.controlPlaneEndpoint>` as upstream, unless the
 * workload cluster is served (WorkloadClusters.endpoint: the HTTP facade),
 * then the facade's URL for that cluster, its CA (or
 * insecure-skip-tls-verify) and token. When the served endpoint changes the
 * Secret is rewritten (the testbed's API server moved; upstream only rotates
 * the client certificate).
 */
import { createHash } from 'node:crypto';
import { stringify, parse } from 'yaml';
import { KUBECONFIG_DATA_KEY, LABEL_CLUSTER_NAME, SECRET_TYPE_CLUSTER, kubeconfigSecretName } from '../../product/api/capi.js';
import type { Cluster } from '../../product/api/capi.js';
import { secretValue, tlsPairOf, type Secret } from '../../product/api/core.js';
import type { Rng } from '../../core/rng.js';
import type { KubeClient } from '../../core/kube/client.js';
import type { OwnerReference } from '../../core/kube/types.js';
import { issueCertificateSync } from '../../core/pki/index.js';
import type { WorkloadClusters, WorkloadEndpoint } from '../../core/runtime/context.js';

export { KUBECONFIG_DATA_KEY, kubeconfigSecretName } from '../../product/api/capi.js';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

export interface KubeconfigInput {
  clusterName: string;
  server: string;
  /** PEM; omitted when insecureSkipTlsVerify. */
  caPem?: string;
  insecureSkipTlsVerify?: boolean;
  clientCertPem: string;
  clientKeyPem: string;
  token?: string;
}

/** The kubeconfig YAML (the layout clientcmd.Write gives: keys sorted, preferences {}). */
export function renderKubeconfig(k: KubeconfigInput): string {
  const user = `${k.clusterName}-admin`;
  const context = `${user}@${k.clusterName}`;
  return stringify({
    apiVersion: 'v1',
    clusters: [
      {
        cluster: {
          ...(k.insecureSkipTlsVerify ? { 'insecure-skip-tls-verify': true } : k.caPem ? { 'certificate-authority-data': b64(k.caPem) } : {}),
          server: k.server,
        },
        name: k.clusterName,
      },
    ],
    contexts: [{ context: { cluster: k.clusterName, user }, name: context }],
    'current-context': context,
    kind: 'Config',
    preferences: {},
    users: [{ name: user, user: { 'client-certificate-data': b64(k.clientCertPem), 'client-key-data': b64(k.clientKeyPem), ...(k.token ? { token: k.token } : {}) } }],
  });
}

interface Parsed {
  server?: string;
  ca?: string;
  insecure?: boolean;
  token?: string;
  cert?: string;
  key?: string;
}

function parseKubeconfig(text: string | undefined): Parsed {
  if (!text) return {};
  try {
    const o = parse(text) as { clusters?: { cluster?: Record<string, unknown> }[]; users?: { user?: Record<string, unknown> }[] };
    const c = o.clusters?.[0]?.cluster ?? {};
    const u = o.users?.[0]?.user ?? {};
    const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    const dec = (v: unknown): string | undefined => (typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : undefined);
    return { server: str(c.server), ca: dec(c['certificate-authority-data']), insecure: c['insecure-skip-tls-verify'] === true, token: str(u.token), cert: dec(u['client-certificate-data']), key: dec(u['client-key-data']) };
  } catch {
    return {};
  }
}

/** Parsed kubeconfigs by Secret uid + resourceVersion (a reconcile that changes nothing parses no YAML). */
const parsedCache = new Map<string, Parsed>();
function parsedOf(s: Secret): Parsed {
  const k = `${s.metadata.uid ?? ''}/${s.metadata.resourceVersion ?? ''}`;
  let p = parsedCache.get(k);
  if (!p) {
    p = parseKubeconfig(secretValue(s, KUBECONFIG_DATA_KEY));
    if (parsedCache.size >= 256) parsedCache.delete(parsedCache.keys().next().value!);
    parsedCache.set(k, p);
  }
  return p;
}

/** Where the kubeconfig points: the served endpoint, else https://<controlPlaneEndpoint>. */
export function kubeconfigEndpoint(workloads: WorkloadClusters, cluster: Cluster): WorkloadEndpoint | undefined {
  const ns = cluster.metadata.namespace ?? 'default';
  const served = workloads.endpoint?.(ns, cluster.metadata.name);
  if (served) return served;
  const ep = cluster.spec.controlPlaneEndpoint;
  if (!ep?.host || !ep.port) return undefined;
  return { server: `https://${ep.host}:${ep.port}` };
}

export type KubeconfigResult = 'created' | 'updated' | 'unchanged' | 'no-endpoint' | 'waiting-for-ca';

/**
 * Create the Secret, or bring it to the current endpoint and owner
 * (the client certificate is kept while the CA is the same).
 */
export async function reconcileKubeconfigSecret(
  mgmt: KubeClient,
  workloads: WorkloadClusters,
  cluster: Cluster,
  owner: OwnerReference,
  rng: Rng,
  nowMs: number,
): Promise<KubeconfigResult> {
  const ns = cluster.metadata.namespace ?? 'default';
  const name = cluster.metadata.name;
  const ep = kubeconfigEndpoint(workloads, cluster);
  if (!ep) return 'no-endpoint';
  const caSecret = await mgmt.get<Secret>({ kind: 'Secret', namespace: ns, name: `${name}-ca` });
  const ca = tlsPairOf(caSecret);
  if (!ca) return 'waiting-for-ca'; // kubeconfig.ErrDependentCertificateNotFound
  const { certPem: caPem, keyPem: caKey } = ca;
  const ref = { kind: 'Secret', namespace: ns, name: kubeconfigSecretName(name) };
  const cur = await mgmt.get<Secret>(ref);
  const have = cur ? parsedOf(cur) : {};
  const wantCa = ep.insecureSkipTlsVerify ? undefined : (ep.certificateAuthorityData ?? caPem);
  const sameTarget = have.server === ep.server && have.token === ep.token && have.insecure === !!ep.insecureSkipTlsVerify && have.ca === wantCa;
  const ownersOk = !!cur?.metadata.ownerReferences?.some((r) => r.uid === owner.uid) && cur.metadata.ownerReferences.length === 1;
  const labelsOk = cur?.metadata.labels?.[LABEL_CLUSTER_NAME] === name;
  if (cur && sameTarget && ownersOk && labelsOk) return 'unchanged';
  let value = cur ? secretValue(cur, KUBECONFIG_DATA_KEY) : undefined;
  if (!cur || !sameTarget) {
    // Keep the client certificate unless the cluster CA changed.
    const keep = have.cert && have.key && cur?.metadata.annotations?.['testbed.hcs/kubeconfig-ca'] === fingerprint(caPem);
    const client = keep ? { certPem: have.cert!, keyPem: have.key! } : issueCertificateSync({ certPem: caPem, keyPem: caKey }, { commonName: 'kubernetes-admin', organization: 'system:masters' }, rng, nowMs);
    value = renderKubeconfig({ clusterName: name, server: ep.server, ...(wantCa ? { caPem: wantCa } : {}), ...(ep.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}), clientCertPem: client.certPem, clientKeyPem: client.keyPem, ...(ep.token ? { token: ep.token } : {}) });
  }
  const metadata = {
    ...(cur?.metadata ?? { name: ref.name, namespace: ns }),
    labels: { ...(cur?.metadata.labels ?? {}), [LABEL_CLUSTER_NAME]: name },
    annotations: { ...(cur?.metadata.annotations ?? {}), 'testbed.hcs/kubeconfig-ca': fingerprint(caPem) },
    ownerReferences: [owner],
  };
  const secret: Secret = { apiVersion: 'v1', kind: 'Secret', metadata, type: cur?.type ?? SECRET_TYPE_CLUSTER, data: { [KUBECONFIG_DATA_KEY]: b64(value ?? '') } };
  if (!cur) {
    await mgmt.create<Secret>(secret);
    return 'created';
  }
  await mgmt.update<Secret>(secret);
  return 'updated';
}

function fingerprint(pem: string): string {
  return createHash('sha256').update(pem).digest('hex').slice(0, 16);
}
