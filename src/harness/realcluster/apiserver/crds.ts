/**
 * Install the testbed's CRDs (src/product/api/crds/definitions.ts, the same objects
 * `dump.ts` prints) into a real cluster and wait until the apiserver serves
 * them: every CRD Established and NamesAccepted, none NonStructuralSchema.
 * A schema the apiserver refuses (e.g. a CEL rule that does not compile or
 * whose estimated cost is over budget) fails with the apiserver's message.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { CRDS, type CustomResourceDefinition } from '../../../product/api/crds/index.js';
import { kubeRequest } from '../../../core/kube/client-node.js';

const BASE = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

type CrdObject = CustomResourceDefinition & { metadata: { name: string; resourceVersion?: string }; status?: { conditions?: Condition[] } };

async function request(kc: KubeConfig, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const server = kc.getCurrentCluster()?.server.replace(/\/+$/, '');
  if (!server) throw new Error('kubeconfig has no current cluster');
  return kubeRequest(kc, method, new URL(server + path), body);
}

function message(body: unknown): string {
  return typeof body === 'object' && body !== null && 'message' in body ? String((body as { message: unknown }).message) : JSON.stringify(body);
}

export { loadKubeconfig } from '../../../core/kube/client-node.js';

/** Create or replace every CRD, then wait until all are served. Returns the stored CRDs. */
export async function installCrds(kc: KubeConfig, crds: readonly CustomResourceDefinition[] = CRDS, timeoutMs = 60_000): Promise<CrdObject[]> {
  for (const crd of crds) {
    const name = (crd as CrdObject).metadata.name;
    const cur = await request(kc, 'GET', `${BASE}/${name}`);
    const r =
      cur.status === 404
        ? await request(kc, 'POST', BASE, crd)
        : await request(kc, 'PUT', `${BASE}/${name}`, { ...crd, metadata: { ...(crd as CrdObject).metadata, resourceVersion: (cur.body as CrdObject).metadata.resourceVersion } });
    if (r.status >= 300) throw new Error(`CRD ${name} rejected (${r.status}): ${message(r.body)}`);
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const out: CrdObject[] = [];
    const pending: string[] = [];
    for (const crd of crds) {
      const name = (crd as CrdObject).metadata.name;
      const r = await request(kc, 'GET', `${BASE}/${name}`);
      const o = r.body as CrdObject;
      const conds = o.status?.conditions ?? [];
      const bad = conds.find((c) => c.type === 'NonStructuralSchema' && c.status === 'True');
      if (bad) throw new Error(`CRD ${name} is not structural: ${bad.message ?? bad.reason}`);
      const ok = (t: string): boolean => conds.some((c) => c.type === t && c.status === 'True');
      if (!ok('Established') || !ok('NamesAccepted')) pending.push(name);
      out.push(o);
    }
    if (pending.length === 0) {
      // Discovery and the handler follow Established closely but not atomically: probe each resource once.
      for (const crd of crds) {
        // The first served version (upstream CRDs list old, no longer served versions first).
        const v = (crd.spec.versions.find((x) => x.served) ?? crd.spec.versions[0]!).name;
        const path = `/apis/${crd.spec.group}/${v}/${crd.spec.names.plural}`;
        for (;;) {
          const r = await request(kc, 'GET', path);
          if (r.status === 200) break;
          if (Date.now() > deadline) throw new Error(`${path} not served: ${r.status} ${message(r.body)}`);
          await new Promise((res) => setTimeout(res, 100));
        }
      }
      return out;
    }
    if (Date.now() > deadline) throw new Error(`CRDs not established in time: ${pending.join(', ')}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** Create the namespaces (ignoring ones that exist). */
export async function ensureNamespaces(kc: KubeConfig, names: string[]): Promise<void> {
  for (const name of names) {
    const r = await request(kc, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    if (r.status >= 300 && r.status !== 409) throw new Error(`namespace ${name}: ${r.status} ${message(r.body)}`);
  }
}
