/**
 * The HCS provider as `deployment/hcs-controller-manager` in namespace
 * cpaas-system (the name the documents' troubleshooting command reads:
 * `kubectl logs -n cpaas-system deployment/hcs-controller-manager`), with
 * its ServiceAccount and RBAC, configured to reach the HCS endpoint the
 * testbed serves on this machine's address on the kind network:
 *
 * - `Secret hcs-controller-manager-cloud` (the provider's configuration,
 *   as environment variables: HCS_CLOUD_URL, HCS_AK, HCS_SK,
 *   HCS_PROJECT_ID, HCS_REGION) and `ConfigMap hcs-controller-manager-cloud-ca`
 *   (`ca.crt`, mounted as HCS_CA_FILE: the CA of the endpoint's
 *   certificate, so the provider verifies it);
 * - `Secret hcs-testbed-cloud-serving` (the endpoint's own certificate and
 *   key for that address, and its URL): what `hcs-testbed run --provider
 *   in-cluster` serves each scenario's mock-hcs with (src/harness/realcluster/backends.ts).
 *
 * The provider runs from the image tools/kind/images.sh builds from the
 * project's Dockerfile (`node bin/hcs-testbed.mjs provider`), in-cluster
 * config (no kubeconfig: its service account), health on the pod's own
 * address ($POD_IP from the downward API) for the kubelet's probes.
 * Pure: certificates, address and image are inputs.
 */
import type { CertKeyPair } from '../../../core/pki/index.js';
import { KEEP_LABEL, type Manifest } from './capi-incluster.js';

export const PROVIDER_NAMESPACE = 'cpaas-system';
export const PROVIDER_DEPLOYMENT_NAME = 'hcs-controller-manager';
export const PROVIDER_CONFIG_SECRET = 'hcs-controller-manager-cloud';
export const CLOUD_SERVING_SECRET = 'hcs-testbed-cloud-serving';
export const PROVIDER_CA_CONFIGMAP = 'hcs-controller-manager-cloud-ca';
export const PROVIDER_HEALTH_PORT = 8081;

export interface ProviderManifestOptions {
  image: string;
  /** https://<address on the kind network>:<port>: where the run serves mock-hcs. */
  cloudUrl: string;
  /** The endpoint's CA and serving certificate (for the address of cloudUrl). */
  cloudCa: CertKeyPair;
  cloudServing: CertKeyPair;
  project: { id: string; ak: string; sk: string; region: string };
  /** `hcs-testbed provider --speed` (testbed runs: requeue delays shortened to match `run --speed`); 1 = a real deployment. */
  speed?: number;
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/**
 * What the provider reads and writes in the management cluster (src/product/provider,
 * src/product/provider/process.ts): it lists and watches every kind it
 * informs on cluster-wide, writes the HCS kinds and their status, reads the
 * Cluster API objects (owners, the Machine's bootstrap data Secret, the
 * `<cluster>-kubeconfig` Secrets), follows the credentials Secret (HCS-5),
 * and records Events.
 */
export function providerClusterRole(): Manifest {
  const read = ['get', 'list', 'watch'];
  const write = [...read, 'create', 'update', 'patch', 'delete'];
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: PROVIDER_DEPLOYMENT_NAME },
    rules: [
      { apiGroups: ['infrastructure.cluster.x-k8s.io'], resources: ['hcsclusters', 'hcsmachines', 'hcsmachineconfigpools', 'hcsmachinetemplates'], verbs: write },
      { apiGroups: ['infrastructure.cluster.x-k8s.io'], resources: ['hcsclusters/status', 'hcsmachines/status', 'hcsmachineconfigpools/status', 'hcsmachinetemplates/status'], verbs: ['get', 'update', 'patch'] },
      { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters', 'machines', 'machinedeployments', 'machinesets'], verbs: read },
      { apiGroups: ['controlplane.cluster.x-k8s.io'], resources: ['kubeadmcontrolplanes'], verbs: read },
      { apiGroups: ['bootstrap.cluster.x-k8s.io'], resources: ['kubeadmconfigs'], verbs: read },
      { apiGroups: [''], resources: ['secrets'], verbs: write },
      { apiGroups: [''], resources: ['configmaps'], verbs: read },
      { apiGroups: [''], resources: ['events'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] },
    ],
  };
}

export function providerManifests(o: ProviderManifestOptions): Manifest[] {
  const ns = PROVIDER_NAMESPACE;
  const labels = { 'app.kubernetes.io/name': PROVIDER_DEPLOYMENT_NAME, 'cluster.x-k8s.io/provider': 'infrastructure-hcs' };
  const keep = { ...labels, [KEEP_LABEL]: 'true' };
  const url = new URL(o.cloudUrl);
  if (url.protocol !== 'https:') throw new Error(`cloudUrl: the in-cluster provider verifies the endpoint's certificate, so it must be https, got "${o.cloudUrl}"`);
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: PROVIDER_DEPLOYMENT_NAME, namespace: ns, labels } },
    { ...providerClusterRole(), metadata: { name: PROVIDER_DEPLOYMENT_NAME, labels } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: PROVIDER_DEPLOYMENT_NAME, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: PROVIDER_DEPLOYMENT_NAME },
      subjects: [{ kind: 'ServiceAccount', name: PROVIDER_DEPLOYMENT_NAME, namespace: ns }],
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: PROVIDER_CONFIG_SECRET, namespace: ns, labels: keep },
      type: 'Opaque',
      data: {
        HCS_CLOUD_URL: b64(o.cloudUrl),
        HCS_AK: b64(o.project.ak),
        HCS_SK: b64(o.project.sk),
        HCS_PROJECT_ID: b64(o.project.id),
        HCS_REGION: b64(o.project.region),
      },
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: PROVIDER_CA_CONFIGMAP, namespace: ns, labels: keep }, data: { 'ca.crt': o.cloudCa.certPem } },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: CLOUD_SERVING_SECRET, namespace: ns, labels: keep },
      type: 'kubernetes.io/tls',
      data: { url: b64(o.cloudUrl), 'tls.crt': b64(o.cloudServing.certPem), 'tls.key': b64(o.cloudServing.keyPem), 'ca.crt': b64(o.cloudCa.certPem) },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: PROVIDER_DEPLOYMENT_NAME, namespace: ns, labels },
      spec: {
        // One replica: the provider has no leader election (hcs-testbed provider --help).
        replicas: 1,
        strategy: { type: 'Recreate' },
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: PROVIDER_DEPLOYMENT_NAME,
            terminationGracePeriodSeconds: 10,
            tolerations: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
            containers: [
              {
                name: 'manager',
                image: o.image,
                imagePullPolicy: 'IfNotPresent',
                workingDir: '/app',
                command: ['node', 'bin/hcs-testbed.mjs', 'provider'],
                args: [`--health-addr=$(POD_IP):${PROVIDER_HEALTH_PORT}`, ...(o.speed && o.speed !== 1 ? [`--speed=${o.speed}`] : [])],
                envFrom: [{ secretRef: { name: PROVIDER_CONFIG_SECRET } }],
                env: [
                  { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
                  { name: 'HCS_CA_FILE', value: '/etc/hcs-cloud/ca.crt' },
                  { name: 'HCS_NAMESPACE', value: '' },
                ],
                ports: [{ name: 'healthz', containerPort: PROVIDER_HEALTH_PORT, protocol: 'TCP' }],
                readinessProbe: { httpGet: { path: '/readyz', port: 'healthz' }, periodSeconds: 2 },
                livenessProbe: { httpGet: { path: '/healthz', port: 'healthz' }, initialDelaySeconds: 60, periodSeconds: 10 },
                volumeMounts: [{ name: 'cloud-ca', mountPath: '/etc/hcs-cloud', readOnly: true }],
              },
            ],
            volumes: [{ name: 'cloud-ca', configMap: { name: PROVIDER_CA_CONFIGMAP } }],
          },
        },
      },
    },
  ];
}
