/**
 * The Cluster API object graph of a namespace, walked the way `clusterctl
 * move` walks it (cluster-api v1.10 cmd/clusterctl/client/cluster/objectgraph.go):
 * every object of the provider's and Cluster API's kinds in the namespace,
 * with Secrets and ConfigMaps (Discovery); owners from ownerReferences
 * (processOwnerReferences); Secrets without owners soft-owned by the Cluster
 * their name starts with (`<cluster>-<purpose>`, setSoftOwnership); each
 * object's clusters through its owner chain (setTenants). Besides owner
 * references, the references the specs hold (a Cluster's infrastructureRef
 * and controlPlaneRef, templates, the HCS pool) count as ownership here, so
 * an HCSMachineConfigPool belongs to the Cluster that uses it.
 */
import type { KubeObject } from '../../core/kube/types.js';
import { objectKey, type GraphNode } from './bundle.js';

/** Management kinds a capture lists, in the order clusterctl move would create them (owners first). */
export const GRAPH_KINDS = [
  'Cluster',
  'HCSCluster',
  'KubeadmControlPlane',
  'HCSMachineConfigPool',
  'HCSMachineTemplate',
  'KubeadmConfigTemplate',
  'MachineDeployment',
  'MachineSet',
  'Machine',
  'KubeadmConfig',
  'HCSMachine',
  'Secret',
  'ConfigMap',
] as const;

interface Ref {
  kind?: string;
  name?: string;
  namespace?: string;
}

const refKey = (r: Ref | undefined, ns: string | undefined, kind?: string): string | undefined => (r?.name && (r.kind ?? kind) ? `${r.kind ?? kind}/${r.namespace ?? ns ?? ''}/${r.name}` : undefined);

/** Objects this one's spec points at (it is their owner in the graph, or they are its: see `specOwners`). */
function specRefs(o: KubeObject): { owns: string[]; ownedBy: string[] } {
  const ns = o.metadata.namespace;
  const s = (o as { spec?: Record<string, unknown> }).spec ?? {};
  const get = (path: string[]): Ref | undefined => {
    let cur: unknown = s;
    for (const p of path) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[p] : undefined;
    return cur && typeof cur === 'object' ? (cur as Ref) : undefined;
  };
  const owns: (string | undefined)[] = [];
  const ownedBy: (string | undefined)[] = [];
  switch (o.kind) {
    case 'Cluster':
      owns.push(refKey(get(['infrastructureRef']), ns), refKey(get(['controlPlaneRef']), ns));
      break;
    case 'MachineDeployment':
    case 'MachineSet':
      // The templates a MachineDeployment rolls out from belong to its Cluster; it uses them.
      ownedBy.push(refKey(get(['template', 'spec', 'infrastructureRef']), ns), refKey(get(['template', 'spec', 'bootstrap', 'configRef']), ns));
      break;
    case 'KubeadmControlPlane':
      ownedBy.push(refKey(get(['machineTemplate', 'infrastructureRef']), ns));
      break;
    case 'HCSMachineTemplate':
      ownedBy.push(refKey(get(['template', 'spec', 'configPoolRef']), ns, 'HCSMachineConfigPool'));
      break;
    case 'HCSMachine':
      ownedBy.push(refKey(get(['configPoolRef']), ns, 'HCSMachineConfigPool'));
      break;
  }
  return { owns: owns.filter((x): x is string => !!x), ownedBy: ownedBy.filter((x): x is string => !!x) };
}

/** The graph of `objects` (all of one capture): owners and clusters of each. */
export function objectGraph(objects: readonly KubeObject[]): GraphNode[] {
  const byKey = new Map(objects.map((o) => [objectKey(o), o]));
  const byUid = new Map(objects.filter((o) => o.metadata.uid).map((o) => [o.metadata.uid!, objectKey(o)]));
  const owners = new Map<string, Set<string>>();
  const add = (child: string, owner: string): void => {
    if (!byKey.has(child) || !byKey.has(owner) || child === owner) return;
    let set = owners.get(child);
    if (!set) owners.set(child, (set = new Set()));
    set.add(owner);
  };
  for (const o of objects) {
    const k = objectKey(o);
    for (const r of o.metadata.ownerReferences ?? []) {
      const ok = byUid.get(r.uid) ?? `${r.kind}/${o.metadata.namespace ?? ''}/${r.name}`;
      add(k, ok);
    }
    const refs = specRefs(o);
    for (const child of refs.owns) add(child, k);
    // A template or pool used by something belongs where its user belongs (ownership by reference, not by owner reference).
    for (const used of refs.ownedBy) if (!(byKey.get(used)?.metadata.ownerReferences?.length)) add(used, k);
  }
  // Soft ownership: a Secret without owners named after a Cluster of its namespace (`<cluster>-<purpose>`).
  const clusters = objects.filter((o) => o.kind === 'Cluster');
  for (const s of objects) {
    if (s.kind !== 'Secret' || owners.has(objectKey(s))) continue;
    const c = clusters.find((c) => c.metadata.namespace === s.metadata.namespace && s.metadata.name.startsWith(`${c.metadata.name}-`));
    if (c) add(objectKey(s), objectKey(c));
  }
  // Tenants: the Clusters reached by walking owners up.
  const tenants = new Map<string, Set<string>>();
  const clustersOf = (k: string, seen: Set<string>): Set<string> => {
    const done = tenants.get(k);
    if (done) return done;
    const out = new Set<string>();
    const o = byKey.get(k);
    if (o?.kind === 'Cluster') out.add(`${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    for (const ow of owners.get(k) ?? []) if (!seen.has(ow)) for (const c of clustersOf(ow, new Set([...seen, k]))) out.add(c);
    tenants.set(k, out);
    return out;
  };
  return objects.map((o) => {
    const k = objectKey(o);
    return { key: k, owners: [...(owners.get(k) ?? [])].sort(), clusters: [...clustersOf(k, new Set())].sort() };
  });
}
