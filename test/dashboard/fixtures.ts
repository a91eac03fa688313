/**
 * The dashboard tests' situations (issue 34): a maxSurge-1 rollout on a full
 * pool with persistent disks (the surge machine waits for an entry, MD-3),
 * and a worker pool of N machines (the page at any pool size).
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { EmbeddedStore } from '../../src/core/kube/embedded-store.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { applyObject } from '../../src/harness/manifests/index.js';
import { REPO } from '../facade/fixture.js';

const NS = 'cpaas-system';

/**
 * Roll the worker MachineDeployment with maxSurge 1, maxUnavailable 0 onto a new template (another flavor):
 * with every pool entry held, the surge machine waits for a free entry (POOL-2, MD-3).
 */
export async function startSurgeRollout(mgmt: EmbeddedStore): Promise<void> {
  const t = mgmt.getSync<KubeObject & { spec: { template: { spec: Record<string, unknown> } } }>({ kind: 'HCSMachineTemplate', namespace: NS, name: 'demo-worker-template' })!;
  await applyObject(mgmt, { apiVersion: t.apiVersion, kind: t.kind, metadata: { name: 'demo-worker-template-surge', namespace: NS }, spec: { template: { spec: { ...t.spec.template.spec, flavorName: 's6.xlarge.2' } } } } as KubeObject, NS);
  await mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name: 'demo-md-0' }, 'merge', { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }, template: { spec: { infrastructureRef: { name: 'demo-worker-template-surge' } } } } });
}

/** A copy of the `cluster` preset with a worker pool of `n` entries (persistent disks) and a MachineDeployment of `n`. */
export function bigClusterManifests(n: number): string {
  const dir = mkdtempSync(join(tmpdir(), `hcs-big-${n}-`));
  const src = join(REPO, 'scenarios', 'manifests', 'cluster');
  for (const f of readdirSync(src)) {
    const docs = parseAllDocuments(readFileSync(join(src, f), 'utf8')).map((d) => d.toJS() as { kind?: string; metadata?: { name?: string }; spec?: Record<string, unknown> & { configs?: unknown[]; replicas?: number } } | null);
    for (const doc of docs) {
      if (doc?.kind === 'HCSMachineConfigPool' && doc.metadata?.name === 'demo-worker-pool') {
        const first = structuredClone(doc.spec!.configs![0]) as { hostname: string; networks: { ipAddress: string }[] };
        doc.spec!.configs = Array.from({ length: n }, (_, i) => ({ ...structuredClone(first), hostname: `demo-worker-${i + 1}`, networks: [{ ...first.networks[0]!, ipAddress: `192.168.10.${11 + i}` }] }));
      }
      if (doc?.kind === 'MachineDeployment') {
        doc.spec!.replicas = n;
        // A rollout at this size: 10 % at a time, remove first (MD-2).
        doc.spec!.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '10%' } };
      }
    }
    writeFileSync(join(dir, f), docs.filter((d) => d !== null).map((d) => stringify(d)).join('---\n'));
  }
  return dir;
}
