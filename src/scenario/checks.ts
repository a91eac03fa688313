import type { HCSMachine, HCSMachineConfigPool } from '../api/hcs.js';
import type { Machine, MachineDeployment } from '../api/capi.js';
import { nodeReady, type Node } from '../api/core.js';
import { LABEL_CLUSTER_NAME, LABEL_DEPLOYMENT_NAME } from '../api/capi.js';
import { persistentDiskIdentity } from '../api/hcs.js';
import type { KubeObject } from '../kube/types.js';
import type { World } from './world.js';

/**
 * Checks used by `wait` and `expect` steps. Each one reads the world
 * independently (store, workload clusters, the cloud's own view) and returns a
 * verdict with the observed values, so a failure says what was seen.
 */
export interface CheckResult {
  ok: boolean;
  /** What was observed, e.g. "4 of 4 machines Running". */
  detail: string;
}

export interface ParamSpec {
  type: 'string' | 'number' | 'boolean' | 'scalar';
  required?: boolean;
  doc: string;
}

export interface CheckDef {
  doc: string;
  rules?: string[];
  params: Record<string, ParamSpec>;
  run(world: World, p: Record<string, unknown>): Promise<CheckResult>;
}

const ns = (p: Record<string, unknown>): string => (p.namespace as string | undefined) ?? 'cpaas-system';

function countResult(what: string, actual: number, expected: number | undefined, extra = ''): CheckResult {
  if (expected === undefined) return { ok: actual > 0, detail: `${actual} ${what}${extra}` };
  return { ok: actual === expected, detail: `${actual} ${what} (expected ${expected})${extra}` };
}

function getPath(o: unknown, path: string): unknown {
  let cur: unknown = o;
  for (const part of path.split('.').filter(Boolean)) {
    const m = /^(.+?)\[(\d+)\]$/.exec(part);
    const key = m ? m[1]! : part;
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[key];
    if (m) cur = Array.isArray(cur) ? cur[Number(m[2])] : undefined;
  }
  return cur;
}

export const CHECKS: Record<string, CheckDef> = {
  machines: {
    doc: 'Count Machines (optionally of one MachineDeployment or cluster) in a phase.',
    params: {
      namespace: { type: 'string', doc: 'namespace (default cpaas-system)' },
      deployment: { type: 'string', doc: 'MachineDeployment name (label cluster.x-k8s.io/deployment-name)' },
      cluster: { type: 'string', doc: 'cluster name' },
      phase: { type: 'string', doc: 'Machine phase, e.g. Running' },
      count: { type: 'number', required: true, doc: 'expected number' },
    },
    async run(w, p) {
      const sel: Record<string, string> = {};
      if (p.deployment) sel[LABEL_DEPLOYMENT_NAME] = p.deployment as string;
      if (p.cluster) sel[LABEL_CLUSTER_NAME] = p.cluster as string;
      const all = await w.mgmt.list<Machine>('Machine', { namespace: ns(p), labelSelector: sel });
      const match = p.phase ? all.filter((m) => m.status?.phase === p.phase) : all;
      const phases = all.map((m) => `${m.metadata.name}=${m.status?.phase ?? 'Pending'}`).join(', ');
      return countResult(`machines${p.phase ? ` ${p.phase}` : ''}`, match.length, p.count as number, all.length ? ` [${phases}]` : '');
    },
  },
  nodes: {
    doc: "Count Nodes of a workload cluster (optionally Ready ones, or of a kubelet version).",
    params: {
      namespace: { type: 'string', doc: 'namespace of the Cluster (default cpaas-system)' },
      cluster: { type: 'string', required: true, doc: 'workload cluster name' },
      ready: { type: 'boolean', doc: 'count only Ready (true) or not Ready (false) nodes' },
      version: { type: 'string', doc: 'kubelet version' },
      count: { type: 'number', required: true, doc: 'expected number' },
    },
    async run(w, p) {
      const nodes = await w.workloads.client(ns(p), p.cluster as string).list<Node>('Node');
      const match = nodes.filter(
        (n) => (p.ready === undefined || nodeReady(n) === p.ready) && (p.version === undefined || n.status?.nodeInfo?.kubeletVersion === p.version),
      );
      const desc = nodes.map((n) => `${n.metadata.name}=${nodeReady(n) ? 'Ready' : 'NotReady'}/${n.status?.nodeInfo?.kubeletVersion ?? '?'}`).join(', ');
      return countResult(`nodes${p.ready === true ? ' Ready' : p.ready === false ? ' NotReady' : ''}`, match.length, p.count as number, nodes.length ? ` [${desc}]` : '');
    },
  },
  servers: {
    doc: 'Count ECS servers in the fake cloud (optionally in one status).',
    rules: ['HCS-1'],
    params: {
      status: { type: 'string', doc: 'ECS status, e.g. ACTIVE' },
      count: { type: 'number', required: true, doc: 'expected number' },
    },
    async run(w, p) {
      const all = w.cloud.listServers().filter((s) => s.status !== 'DELETED');
      const match = p.status ? all.filter((s) => s.status === p.status) : all;
      return countResult(`servers${p.status ? ` ${p.status}` : ''}`, match.length, p.count as number, ` [${all.map((s) => `${s.name}=${s.status}`).join(', ')}]`);
    },
  },
  machineDeployment: {
    doc: 'Compare MachineDeployment status counters.',
    params: {
      namespace: { type: 'string', doc: 'namespace (default cpaas-system)' },
      name: { type: 'string', required: true, doc: 'MachineDeployment name' },
      replicas: { type: 'number', doc: 'status.replicas' },
      readyReplicas: { type: 'number', doc: 'status.readyReplicas' },
      updatedReplicas: { type: 'number', doc: 'status.updatedReplicas' },
      availableReplicas: { type: 'number', doc: 'status.availableReplicas' },
    },
    async run(w, p) {
      const md = await w.mgmt.get<MachineDeployment>({ kind: 'MachineDeployment', namespace: ns(p), name: p.name as string });
      if (!md) return { ok: false, detail: `MachineDeployment ${p.name} not found` };
      const keys = ['replicas', 'readyReplicas', 'updatedReplicas', 'availableReplicas'] as const;
      const bad = keys.filter((k) => p[k] !== undefined && (md.status?.[k] ?? 0) !== p[k]);
      const seen = keys.map((k) => `${k}=${md.status?.[k] ?? 0}`).join(' ');
      return { ok: bad.length === 0, detail: `${seen}${bad.length ? ` (expected ${bad.map((k) => `${k}=${String(p[k])}`).join(' ')})` : ''}` };
    },
  },
  persistentDisks: {
    doc:
      'Invariant of pool-managed persistent disks (DISK-3, DISK-9): every (hostname, slot) of the pool has exactly one EVS volume; ' +
      'it is attached to the server of the live machine holding that hostname, and available (kept, not deleted) when no machine holds it.',
    rules: ['DISK-3', 'DISK-9'],
    params: {
      namespace: { type: 'string', doc: 'namespace (default cpaas-system)' },
      pool: { type: 'string', required: true, doc: 'HCSMachineConfigPool name' },
    },
    async run(w, p) {
      const pool = await w.mgmt.get<HCSMachineConfigPool>({ kind: 'HCSMachineConfigPool', namespace: ns(p), name: p.pool as string });
      if (!pool) return { ok: false, detail: `HCSMachineConfigPool ${p.pool} not found` };
      const machines = await w.mgmt.list<HCSMachine>('HCSMachine', { namespace: ns(p) });
      const serverOf = new Map<string, string>();
      for (const m of machines) if (m.status?.hostname && m.spec.serverId && !m.metadata.deletionTimestamp) serverOf.set(m.status.hostname, m.spec.serverId);
      const volumes = w.cloud.listVolumes().filter((v) => v.status !== 'deleted');
      const problems: string[] = [];
      const seen: string[] = [];
      for (const entry of pool.spec.configs) {
        for (const d of entry.persistentDisks ?? []) {
          const vols = volumes.filter((v) => {
            const id = persistentDiskIdentity(v.metadata);
            return id?.hostname === entry.hostname && id.slot === d.slot;
          });
          const label = `${entry.hostname}/slot${d.slot}`;
          if (vols.length === 0) { problems.push(`${label}: no volume (deleted or never created)`); continue; }
          if (vols.length > 1) { problems.push(`${label}: ${vols.length} volumes (${vols.map((v) => v.id).join(', ')}) — identity not reused`); continue; }
          const v = vols[0]!;
          const server = serverOf.get(entry.hostname);
          const live = server ? w.cloud.server(server) : undefined;
          if (live && live.status !== 'DELETED') {
            if (v.attachedTo !== server) problems.push(`${label}: volume ${v.id} is ${v.status}${v.attachedTo ? ` on ${v.attachedTo}` : ''}, expected attached to ${entry.hostname}'s server ${server}`);
            else seen.push(`${label}=${v.id.slice(0, 8)}@${live.name}`);
          } else if (v.status !== 'available') {
            problems.push(`${label}: volume ${v.id} is ${v.status}${v.attachedTo ? ` on ${v.attachedTo}` : ''} although no machine holds ${entry.hostname}`);
          } else seen.push(`${label}=${v.id.slice(0, 8)} available`);
        }
      }
      return problems.length ? { ok: false, detail: problems.join('; ') } : { ok: true, detail: seen.join(', ') || 'no persistent disks declared' };
    },
  },
  markers: {
    doc:
      'Every data marker written so far is intact (DISK-8): read through the node when a node with that hostname is up, ' +
      'otherwise straight from its (detached) persistent volume. Markers on non-persistent storage are expected lost after replacement.',
    rules: ['DISK-8'],
    params: {
      path: { type: 'string', doc: 'only markers at this path' },
    },
    async run(w, p) {
      const markers = w.markers.filter((m) => !p.path || m.path === p.path);
      if (markers.length === 0) return { ok: false, detail: 'no markers written' };
      const problems: string[] = [];
      const seen: string[] = [];
      for (const m of markers) {
        const viaNode = w.guests.mounts(m.hostname).length ? w.guests.readFile(m.hostname, m.path) : undefined;
        if (viaNode !== undefined) {
          if (viaNode === m.content) seen.push(`${m.hostname}:${m.path} (node)`);
          else problems.push(`${m.hostname}:${m.path} reads ${JSON.stringify(viaNode)} on the node, expected ${JSON.stringify(m.content)}`);
          continue;
        }
        if (!m.persistent) { seen.push(`${m.hostname}:${m.path} (ephemeral, node gone)`); continue; }
        const rel = m.path.slice(m.mountPath.length).replace(/^\/+/, '');
        const onDisk = w.cloud.readFile(m.volumeId, rel);
        if (onDisk === m.content) seen.push(`${m.hostname}:${m.path} (detached volume ${m.volumeId.slice(0, 8)})`);
        else problems.push(`${m.hostname}:${m.path} missing on node and on volume ${m.volumeId} (read ${JSON.stringify(onDisk)})`);
      }
      return problems.length ? { ok: false, detail: problems.join('; ') } : { ok: true, detail: seen.join(', ') };
    },
  },
  file: {
    doc: "A file on a node's filesystem has this content (or is absent when content is omitted and absent: true).",
    params: {
      hostname: { type: 'string', required: true, doc: 'node hostname' },
      path: { type: 'string', required: true, doc: 'absolute path' },
      content: { type: 'string', doc: 'expected content' },
      absent: { type: 'boolean', doc: 'expect the file not to exist' },
    },
    async run(w, p) {
      const got = w.guests.readFile(p.hostname as string, p.path as string);
      if (p.absent) return { ok: got === undefined, detail: got === undefined ? 'absent' : `present: ${JSON.stringify(got)}` };
      return { ok: got === p.content, detail: `read ${JSON.stringify(got)}${got === p.content ? '' : `, expected ${JSON.stringify(p.content)}`}` };
    },
  },
  object: {
    doc: 'A field of a management-cluster object equals a value (path in dotted form, e.g. status.phase or spec.configs[0].hostname).',
    params: {
      kind: { type: 'string', required: true, doc: 'kind, e.g. MachineDeployment' },
      name: { type: 'string', required: true, doc: 'object name' },
      namespace: { type: 'string', doc: 'namespace (default cpaas-system)' },
      path: { type: 'string', required: true, doc: 'dotted field path' },
      equals: { type: 'scalar', required: true, doc: 'expected value' },
    },
    async run(w, p) {
      const o = await w.mgmt.get<KubeObject>({ kind: p.kind as string, namespace: ns(p), name: p.name as string });
      if (!o) return { ok: false, detail: `${p.kind} ${p.name} not found` };
      const v = getPath(o, p.path as string);
      return { ok: v === p.equals, detail: `${p.path}=${JSON.stringify(v)}${v === p.equals ? '' : ` (expected ${JSON.stringify(p.equals)})`}` };
    },
  },
  controllerLog: {
    doc: 'The controller log (kubectl logs deployment/<name>) contains a text (OPS-3).',
    rules: ['OPS-3'],
    params: {
      deployment: { type: 'string', doc: 'deployment name (default hcs-controller-manager)' },
      contains: { type: 'string', required: true, doc: 'text to find' },
    },
    async run(w, p) {
      const log = w.controllerLog((p.deployment as string | undefined) ?? 'hcs-controller-manager');
      const ok = log.includes(p.contains as string);
      return { ok, detail: ok ? `found ${JSON.stringify(p.contains)}` : `${JSON.stringify(p.contains)} not in ${log.split('\n').length} log lines` };
    },
  },
};

export function describeCheck(type: string, params: Record<string, unknown>): string {
  const ps = Object.entries(params).map(([k, v]) => `${k}=${String(v)}`).join(' ');
  return ps ? `${type}(${ps})` : type;
}
