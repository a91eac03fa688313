/**
 * The upstream Cluster API managers as Deployments in a cluster, laid out as
 * `clusterctl init` lays them out, from upstream's own manifests:
 * tools/kind/images.sh renders each manager's `config/default` kustomization
 * of the pinned version (sigs.k8s.io/cluster-api v1.10.10 in the Go module
 * cache) with `kubectl kustomize` into `<capi cache>/config/{core,bootstrap,
 * controlplane}.yaml`. What clusterctl and cert-manager would then do is done
 * here:
 *
 * - clusterctl's variable processing: every `${VAR:=default}` takes its
 *   default, a variable without one (or with an empty one) is an error
 *   (cmd/clusterctl/client/yamlprocessor/simple_processor.go Process; the
 *   manifests' feature gates are the release's defaults), unless `vars`
 *   names the variable;
 * - clusterctl's image overrides: the kustomization's staging image
 *   (gcr.io/k8s-staging-cluster-api/...:main) becomes the release's name
 *   (registry.k8s.io/cluster-api/<controller>:<version>, as the release's
 *   core-components.yaml has it; tools/kind/images.sh imports images under
 *   these names) with `imagePullPolicy: IfNotPresent` (the release's: the
 *   kustomization's manager_pull_policy.yaml sets Always, for development);
 * - cert-manager: instead of each `Issuer` (self-signed) and `Certificate`,
 *   a CA and a serving certificate for the Certificate's `dnsNames`
 *   (`<manager>-webhook-service.<ns>.svc[.cluster.local]`) generated with
 *   src/core/pki, put into the Certificate's `secretName` as cert-manager writes
 *   it (type kubernetes.io/tls, keys tls.crt, tls.key, ca.crt);
 * - cert-manager's CA injector: every object annotated
 *   `cert-manager.io/inject-ca-from: <ns>/<certificate>` (the validating and
 *   mutating webhook configurations, the CRDs with a conversion webhook) gets
 *   that certificate's CA as `caBundle` in each `clientConfig`
 *   (cert-manager's cainjector: webhooks[].clientConfig.caBundle and
 *   spec.conversion.webhook.clientConfig.caBundle).
 *
 * Pure: the clock, the RNG and the manifests' text are inputs.
 */
import { parseAllDocuments } from 'yaml';
import type { Rng } from '../../../core/rng.js';
import { generateCA, issueCertificate, type CertKeyPair } from '../../../core/pki/index.js';

export type InClusterManager = 'core' | 'bootstrap' | 'controlplane';
export const IN_CLUSTER_MANAGERS: InClusterManager[] = ['core', 'bootstrap', 'controlplane'];

/** The release's image repository names (registry.k8s.io/cluster-api/<name>:<version>). */
export const MANAGER_IMAGE: Record<InClusterManager, string> = {
  core: 'cluster-api-controller',
  bootstrap: 'kubeadm-bootstrap-controller',
  controlplane: 'kubeadm-control-plane-controller',
};

export function managerImage(m: InClusterManager, version: string): string {
  return `registry.k8s.io/cluster-api/${MANAGER_IMAGE[m]}:${version}`;
}

/** The label every object the testbed installs for the cluster's own controllers carries: a scenario reset keeps them (src/harness/realcluster/remote.ts). */
export const KEEP_LABEL = 'hcs-testbed.io/keep';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [k: string]: unknown;
}

const INJECT = 'cert-manager.io/inject-ca-from';
const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::=([^}]*))?\}/g;

/**
 * clusterctl's variable substitution for `${VAR}` and `${VAR:=default}`:
 * `vars[VAR]`, else the default; a variable without either is an error naming it.
 */
export function substituteVariables(text: string, vars: Record<string, string> = {}, where = 'manifest'): string {
  return text.replace(VAR, (_m, name: string, def: string | undefined) => {
    if (vars[name] !== undefined) return vars[name]!;
    // clusterctl takes an empty default for none (simple_processor.go Process: `defaultValue == ""` is missing).
    if (def) return def;
    throw new Error(`${where}: variable \${${name}} has no value and no default (clusterctl would refuse it too)`);
  });
}

interface Certificate {
  namespace: string;
  name: string;
  secretName: string;
  dnsNames: string[];
  organization?: string;
}

interface WebhookConfig extends Manifest {
  webhooks?: { clientConfig: { caBundle?: string } }[];
}
interface Crd extends Manifest {
  spec: { conversion?: { strategy?: string; webhook?: { clientConfig?: { caBundle?: string } } } };
}
interface DeploymentManifest extends Manifest {
  spec: { template: { spec: { containers: { name: string; image: string; imagePullPolicy?: string }[] } } };
}

export interface RenderedManager {
  manager: InClusterManager;
  namespace: string;
  deployment: string;
  /** Everything to apply, in order: Namespace, CRDs, RBAC, ServiceAccount, Secrets, Service, Deployment, webhook configurations. */
  objects: Manifest[];
  /** The serving certificates generated in cert-manager's place (per Certificate name). */
  certificates: Record<string, { ca: CertKeyPair; serving: CertKeyPair; dnsNames: string[] }>;
}

const ORDER = ['Namespace', 'CustomResourceDefinition', 'ServiceAccount', 'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding', 'Secret', 'Service', 'Deployment', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** Render one manager's `kubectl kustomize config/default` output as clusterctl + cert-manager would install it. */
export async function renderManager(
  manager: InClusterManager,
  kustomized: string,
  o: { version: string; rng: Rng; nowMs: number; vars?: Record<string, string> },
): Promise<RenderedManager> {
  const text = substituteVariables(kustomized, o.vars, `${manager} manifests`);
  const docs: Manifest[] = [];
  for (const d of parseAllDocuments(text)) {
    const x = d.toJS() as Manifest | null;
    if (x) docs.push(x);
  }
  const certs: Certificate[] = [];
  const kept: Manifest[] = [];
  for (const x of docs) {
    if (x.apiVersion.startsWith('cert-manager.io/')) {
      if (x.kind === 'Certificate') {
        const spec = x.spec as { secretName?: string; dnsNames?: string[]; subject?: { organizations?: string[] } };
        if (!spec.secretName || !spec.dnsNames?.length) throw new Error(`${manager} manifests: Certificate ${x.metadata.name}: spec.secretName and spec.dnsNames are required`);
        certs.push({ namespace: x.metadata.namespace ?? 'default', name: x.metadata.name, secretName: spec.secretName, dnsNames: spec.dnsNames, ...(spec.subject?.organizations?.[0] ? { organization: spec.subject.organizations[0] } : {}) });
      }
      continue; // Issuer, Certificate: cert-manager is not installed; their effect is generated below
    }
    kept.push(x);
  }
  const certificates: RenderedManager['certificates'] = {};
  const secrets: Manifest[] = [];
  for (const c of certs) {
    // cert-manager's self-signed Issuer makes the Certificate its own CA; here a CA signs a serving certificate,
    // and ca.crt holds that CA (what the caBundles trust), as cert-manager's CA issuer would write it.
    const ca = await generateCA(o.rng, o.nowMs, `${c.name}-ca`);
    const serving = await issueCertificate(ca, { commonName: c.dnsNames[0]!, dnsNames: c.dnsNames, ...(c.organization ? { organization: c.organization } : {}), days: 365 }, o.rng, o.nowMs);
    certificates[`${c.namespace}/${c.name}`] = { ca, serving, dnsNames: c.dnsNames };
    secrets.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: c.secretName, namespace: c.namespace, labels: { [KEEP_LABEL]: 'true' }, annotations: { 'cert-manager.io/certificate-name': c.name } },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(serving.certPem), 'tls.key': b64(serving.keyPem), 'ca.crt': b64(ca.certPem) },
    });
  }
  const caFor = (x: Manifest): string | undefined => {
    const from = x.metadata.annotations?.[INJECT];
    if (!from) return undefined;
    const c = certificates[from];
    if (!c) throw new Error(`${manager} manifests: ${x.kind} ${x.metadata.name} asks for the CA of Certificate ${from}, which the manifests do not define`);
    return b64(c.ca.certPem);
  };
  let namespace: string | undefined;
  let deployment: string | undefined;
  for (const x of kept) {
    if (x.kind === 'Namespace') namespace = x.metadata.name;
    const ca = caFor(x);
    if (x.kind === 'MutatingWebhookConfiguration' || x.kind === 'ValidatingWebhookConfiguration') {
      if (!ca) throw new Error(`${manager} manifests: ${x.kind} ${x.metadata.name} has no ${INJECT} annotation`);
      for (const w of (x as WebhookConfig).webhooks ?? []) w.clientConfig.caBundle = ca;
    }
    if (x.kind === 'CustomResourceDefinition') {
      const conv = (x as Crd).spec.conversion;
      if (conv?.strategy === 'Webhook' && conv.webhook?.clientConfig) {
        if (!ca) throw new Error(`${manager} manifests: CRD ${x.metadata.name} has a conversion webhook but no ${INJECT} annotation`);
        conv.webhook.clientConfig.caBundle = ca;
      }
    }
    if (x.kind === 'Deployment') {
      deployment = x.metadata.name;
      for (const c of (x as DeploymentManifest).spec.template.spec.containers) {
        if (c.name !== 'manager') continue;
        c.image = managerImage(manager, o.version);
        c.imagePullPolicy = 'IfNotPresent';
      }
    }
  }
  if (!namespace || !deployment) throw new Error(`${manager} manifests: no ${!namespace ? 'Namespace' : 'Deployment'} (is this the output of kubectl kustomize config/default?)`);
  const rank = (k: string): number => (ORDER.includes(k) ? ORDER.indexOf(k) : ORDER.length);
  const objects = [...kept, ...secrets].map((x, i) => ({ x, i })).sort((a, b) => rank(a.x.kind) - rank(b.x.kind) || a.i - b.i).map((e) => e.x);
  return { manager, namespace, deployment, objects, certificates };
}
