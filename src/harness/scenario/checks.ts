import type { HCSMachine, HCSMachineConfigPool } from '../../product/api/hcs.js';
import type { Machine, MachineDeployment, MachineSet } from '../../product/api/capi.js';
import { nodeReady, type Node } from '../../product/api/core.js';
import { LABEL_CLUSTER_NAME, LABEL_DEPLOYMENT_NAME } from '../../product/api/capi.js';
import { persistentDiskIdentity } from '../../product/api/hcs.js';
import { getShared, listShared, type KubeClient } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import type { Cluster, KubeadmControlPlane } from '../../product/api/capi.js';
import { defaultOsSupportMatrix, KUBE_OVN_CHART } from '../../product/matrix/matrix.js';
import type { AppRelease } from '../../product/api/apprelease.js';
import { installedRevisionTrap, ovnUpgradeDone } from '../../world/workload/apprelease.js';
import type { World } from './world.js';
import { CONTRACT, CONTRACT_CONDITIONS, CONTRACT_EVENT_REASONS, CONTRACT_FIELDS, PROVIDER_KINDS, TESTBED_EVENT_REASONS, reference, without, type Classification } from './contract.js';
import { META_PERSISTENT_VOLUMES } from '../../product/api/metadata.js';

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
  /** The only values allowed (validate suggests the nearest one). */
  values?: readonly string[];
  /** An absolute path is required. */
  absolute?: boolean;
}

/** Machine phases (Cluster API), as the `machines` check compares them. */
export const MACHINE_PHASES = ['Pending', 'Provisioning', 'Provisioned', 'Running', 'Deleting', 'Deleted', 'Failed', 'Unknown'] as const;
/** ECS server statuses of the fake cloud (mock-hcs). */
export const SERVER_STATUSES = ['BUILD', 'ACTIVE', 'SHUTOFF', 'REBOOT', 'HARD_REBOOT', 'ERROR', 'DELETED'] as const;
/** Event sources of the run's event log. */
export const EVENT_SOURCES = ['scenario', 'cloud', 'kube', 'capi', 'provider', 'guest', 'workload', 'invariant', 'fault', 'runtime'] as const;

export interface CheckDef {
  doc: string;
  rules?: string[];
  params: Record<string, ParamSpec>;
  /**
   * Contract or reference (src/harness/scenario/contract.ts): whether this use of the
   * check reads only what any provider must expose, or something only the
   * reference provider produces (then, when there is one, its contract core).
   */
  tier(p: Record<string, unknown>): Classification;
  run(world: World, p: Record<string, unknown>): Promise<CheckResult>;
}

const always = (): Classification => CONTRACT;

const ns = (p: Record<string, unknown>): string => (p.namespace as string | undefined) ?? 'cpaas-system';

function countResult(what: string, actual: number, expected: number | undefined, extra = ''): CheckResult {
  if (expected === undefined) return { ok: actual > 0, detail: `${actual} ${what}${extra}` };
  return { ok: actual === expected, detail: `${actual} ${what} (expected ${expected})${extra}` };
}

/** The management cluster, or the workload cluster named by `cluster` (a Cluster in the check's namespace). */
function clientFor(w: World, p: Record<string, unknown>): KubeClient {
  return p.cluster ? w.workloads.client(ns(p), p.cluster as string) : w.mgmt;
}

const minorOf = (v: string | undefined): number | undefined => {
  const m = /^v?(\d+)\.(\d+)/.exec(v ?? '');
  return m ? Number(m[1]) * 1000 + Number(m[2]) : undefined;
};

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

const isProviderKind = (k: unknown): boolean => (PROVIDER_KINDS as readonly unknown[]).includes(k);

/** `object`: any object's spec and any non-provider object's status are contract; of the provider's status, the fields of CONTRACT_FIELDS. */
function objectTier(p: Record<string, unknown>): Classification {
  if (p.cluster || !isProviderKind(p.kind)) return CONTRACT;
  const path = String(p.path ?? '').replace(/\[\d+\]/g, '[]');
  if (!path.startsWith('status.')) return CONTRACT;
  const field = `${String(p.kind)}.${path}`;
  if (CONTRACT_FIELDS.some((f) => field === f.field || field.startsWith(`${f.field}.`) || field.startsWith(`${f.field}[]`))) return CONTRACT;
  return reference(`${field} is the reference provider's status field, not in the contract`);
}

/**
 * `events`: the cloud's, the guest's, the workload's, the testbed Cluster API's and the invariants' events are contract.
 * Of the provider's, only a Kubernetes Event reason of the contract (seen, or never seen); its message text (`contains`),
 * the rules it cites (`rule`: the hcs-testbed.io/rules annotation or the message) and how often it repeats (`count` > 0)
 * are the reference provider's, and so are its internal decision events (source provider).
 */
function eventsTier(p: Record<string, unknown>): Classification {
  const source = p.source as string | undefined;
  const type = p.type as string | undefined;
  if (source && source !== 'provider') return CONTRACT;
  if (!type?.startsWith('event.')) {
    return reference(source ? `the reference provider's internal decision events (${type ?? 'any type'})` : `events not narrowed to a source or an Event reason (${type ?? 'any type'}) can only match the reference provider's own events and citations`);
  }
  const reason = type.slice('event.'.length);
  if (!source && (TESTBED_EVENT_REASONS as readonly string[]).includes(reason)) return CONTRACT;
  if (!CONTRACT_EVENT_REASONS.some((r) => r.reason === reason)) return reference(`the Event reason ${reason} is the reference provider's, not in the contract`);
  const extra = [...(p.rule !== undefined ? ['rule'] : []), ...(p.contains !== undefined ? ['contains'] : []), ...(typeof p.count === 'number' && p.count > 0 ? ['count'] : [])];
  if (!extra.length) return CONTRACT;
  const what = { rule: 'the rules an Event cites (hcs-testbed.io/rules annotation or message)', contains: 'an Event message\'s wording', count: 'how many times the provider repeats an Event' } as Record<string, string>;
  return reference(extra.map((k) => what[k]).join(', '), without(p, ['rule', 'contains', 'count']));
}

/** `condition`: conditions of Cluster API, workload and guest objects are contract; of the provider's, CONTRACT_CONDITIONS (type, status, reason, never the message). */
function conditionTier(p: Record<string, unknown>): Classification {
  if (p.cluster || !isProviderKind(p.kind)) return CONTRACT;
  const c = CONTRACT_CONDITIONS.find((x) => x.kind === p.kind && x.type === p.type);
  if (!c) return reference(`condition ${String(p.kind)}/${String(p.type)} is the reference provider's, not in the contract`);
  if (p.reason !== undefined && !c.reasons.includes(p.reason as string)) return reference(`reason ${String(p.reason)} of ${String(p.kind)}/${String(p.type)} is not in the contract`);
  if (p.contains !== undefined) return reference('a condition message\'s wording', without(p, ['contains']));
  return CONTRACT;
}

export const CHECKS: Record<string, CheckDef> = {
  machines: {
    doc: 'Count Machines (optionally of one MachineDeployment or cluster) in a phase.',
    params: {
      namespace: { type: 'string', doc: 'namespace (default cpaas-system)' },
      deployment: { type: 'string', doc: 'MachineDeployment name (label cluster.x-k8s.io/deployment-name)' },
      cluster: { type: 'string', doc: 'cluster name' },
      phase: { type: 'string', doc: 'Machine phase, e.g. Running', values: MACHINE_PHASES },
      count: { type: 'number', required: true, doc: 'expected number' },
    },
    tier: always,
    async run(w, p) {
      const sel: Record<string, string> = {};
      if (p.deployment) sel[LABEL_DEPLOYMENT_NAME] = p.deployment as string;
      if (p.cluster) sel[LABEL_CLUSTER_NAME] = p.cluster as string;
      const all = await listShared<Machine>(w.mgmt, 'Machine', { namespace: ns(p), labelSelector: sel });
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
    tier: always,
    async run(w, p) {
      const nodes = await listShared<Node>(w.workloads.client(ns(p), p.cluster as string), 'Node');
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
      status: { type: 'string', doc: 'ECS status, e.g. ACTIVE', values: SERVER_STATUSES },
      count: { type: 'number', required: true, doc: 'expected number' },
    },
    tier: always,
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
    tier: always,
    async run(w, p) {
      const md = await getShared<MachineDeployment>(w.mgmt, { kind: 'MachineDeployment', namespace: ns(p), name: p.name as string });
      if (!md) return { ok: false, detail: `MachineDeployment ${p.name} not found` };
      const keys = ['replicas', 'readyReplicas', 'updatedReplicas', 'availableReplicas'] as const;
      const bad = keys.filter((k) => p[k] !== undefined && (md.status?.[k] ?? 0) !== p[k]);
      const seen = keys.map((k) => `${k}=${md.status?.[k] ?? 0}`).join(' ');
      return { ok: bad.length === 0, detail: `${seen}${bad.length ? ` (expected ${bad.map((k) => `${k}=${String(p[k])}`).join(' ')})` : ''}` };
    },
  },
  machineSets: {
    doc: "The spec.replicas of a MachineDeployment's MachineSets not being deleted, oldest first (creation time, then name), e.g. \"6,1\" (MD-1).",
    rules: ['MD-1'],
    tier: always,
    params: {
      namespace: { type: 'string', doc: 'namespace (default cpaas-system)' },
      deployment: { type: 'string', required: true, doc: 'MachineDeployment name (label cluster.x-k8s.io/deployment-name)' },
      replicas: { type: 'string', required: true, doc: 'comma-separated spec.replicas, oldest MachineSet first' },
    },
    async run(w, p) {
      const all = await listShared<MachineSet>(w.mgmt, 'MachineSet', { namespace: ns(p), labelSelector: { [LABEL_DEPLOYMENT_NAME]: p.deployment as string } });
      const live = all
        .filter((ms) => !ms.metadata.deletionTimestamp)
        .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.metadata.name.localeCompare(b.metadata.name));
      const seen = live.map((ms) => ms.spec.replicas ?? 0).join(',');
      const want = String(p.replicas).replace(/\s+/g, '');
      return { ok: seen === want, detail: `MachineSets of ${String(p.deployment)}: replicas ${seen || '(none)'}${seen === want ? '' : ` (expected ${want})`} [${live.map((ms) => `${ms.metadata.name}=${ms.spec.replicas ?? 0}`).join(', ')}]` };
    },
  },
  persistentDisks: {
    doc:
      'Invariant of pool-managed persistent disks (DISK-3, DISK-9): every (hostname, slot) of the pool has exactly one EVS volume; ' +
      'it is attached to the server of the live machine holding that hostname, and available (kept, not deleted) when no machine holds it ' +
      'or when it was appended after that server was created (not hot-attached, DISK-6).',
    rules: ['DISK-3', 'DISK-9'],
    params: {
      namespace: { type: 'string', doc: 'namespace (default cpaas-system)' },
      pool: { type: 'string', required: true, doc: 'HCSMachineConfigPool name' },
    },
    tier: always,
    async run(w, p) {
      const pool = await getShared<HCSMachineConfigPool>(w.mgmt, { kind: 'HCSMachineConfigPool', namespace: ns(p), name: p.pool as string });
      if (!pool) return { ok: false, detail: `HCSMachineConfigPool ${p.pool} not found` };
      const machines = await listShared<HCSMachine>(w.mgmt, 'HCSMachine', { namespace: ns(p) });
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
          // DISK-6: a disk appended after the server was created is not in its cloud-init (hcs.io/persistent-volumes): claimed, not hot-attached.
          const inCloudInit = live?.metadata[META_PERSISTENT_VOLUMES]?.split(',').includes(v.id) ?? true;
          if (live && live.status !== 'DELETED' && !inCloudInit) {
            if (v.status !== 'available') problems.push(`${label}: volume ${v.id} was appended after server ${server} was created, so it must stay available until a replacement (DISK-6), but it is ${v.status}${v.attachedTo ? ` on ${v.attachedTo}` : ''}`);
            else seen.push(`${label}=${v.id.slice(0, 8)} available (appended, not hot-attached)`);
          } else if (live && live.status !== 'DELETED') {
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
  volume: {
    doc:
      'The EVS volumes of one persistent-disk identity (DISK-3): volumes whose metadata hcs.io/hostname and hcs.io/slot name it ' +
      '(not deleted) — by default exactly one — and, with attached: true, attached to the server of the live HCSMachine holding that hostname. ' +
      'The contract form of "the provider created the persistent disk of <hostname>" (no log wording).',
    rules: ['DISK-3'],
    params: {
      namespace: { type: 'string', doc: 'namespace of the HCSMachines (default cpaas-system)' },
      hostname: { type: 'string', required: true, doc: 'pool entry hostname' },
      slot: { type: 'number', required: true, doc: 'persistentDisks[].slot' },
      count: { type: 'number', doc: 'expected number of volumes (default 1)' },
      attached: { type: 'boolean', doc: 'attached to the server of the live HCSMachine holding the hostname (true) or available (false)' },
      name: { type: 'string', doc: 'the volume carries this name (e.g. one an operator created by hand: the provider claimed it, DISK-3)' },
    },
    tier: always,
    async run(w, p) {
      const vols = w.cloud.listVolumes().filter((v) => {
        const id = persistentDiskIdentity(v.metadata);
        return v.status !== 'deleted' && id !== undefined && id.hostname === p.hostname && id.slot === p.slot;
      });
      const want = (p.count as number | undefined) ?? 1;
      const seen = vols.map((v) => `${v.name} (${v.id.slice(0, 8)}) ${v.status}${v.attachedTo ? ` on ${v.attachedTo.slice(0, 8)}` : ''}`).join(', ') || 'none';
      if (vols.length !== want) return { ok: false, detail: `${vols.length} volumes for ${String(p.hostname)}/slot${String(p.slot)} (expected ${want}): ${seen}` };
      if (p.name !== undefined && vols.some((v) => v.name !== p.name)) return { ok: false, detail: `${seen}: expected the volume named ${String(p.name)}` };
      if (p.attached === undefined) return { ok: true, detail: seen };
      const holder = (await listShared<HCSMachine>(w.mgmt, 'HCSMachine', { namespace: ns(p) })).find((m) => m.status?.hostname === p.hostname && !m.metadata.deletionTimestamp);
      const server = holder?.spec.serverId;
      const bad = vols.filter((v) => (p.attached ? !server || v.attachedTo !== server : v.status !== 'available'));
      return {
        ok: bad.length === 0,
        detail: `${seen}${bad.length ? `: expected ${p.attached ? `attached to ${holder ? `${holder.metadata.name}'s server ${server ?? '(none yet)'}` : `a live HCSMachine holding ${String(p.hostname)} (none)`}` : 'available'}` : ''}`,
      };
    },
  },
  markers: {
    doc:
      'Every data marker written so far is intact (DISK-8): read through the node when a node with that hostname is up (a persistent marker ' +
      'missing there fails, whatever its old volume holds), otherwise straight from its (detached) persistent volume. Markers on non-persistent storage are expected lost after replacement.',
    rules: ['DISK-8'],
    params: {
      path: { type: 'string', doc: 'only markers at this path', absolute: true },
    },
    tier: always,
    async run(w, p) {
      const markers = w.markers.filter((m) => !p.path || m.path === p.path);
      if (markers.length === 0) return { ok: false, detail: 'no markers written' };
      const problems: string[] = [];
      const seen: string[] = [];
      for (const m of markers) {
        const up = w.guests.mounts(m.hostname).length > 0;
        const viaNode = up ? w.guests.readFile(m.hostname, m.path) : undefined;
        if (viaNode !== undefined) {
          if (viaNode === m.content) seen.push(`${m.hostname}:${m.path} (node)`);
          else problems.push(`${m.hostname}:${m.path} reads ${JSON.stringify(viaNode)} on the node, expected ${JSON.stringify(m.content)}`);
          continue;
        }
        if (!m.persistent) { seen.push(`${m.hostname}:${m.path} (ephemeral, ${up ? 'node replaced' : 'node gone'})`); continue; }
        // A node with that hostname is up but does not show the file: its persistent path does not hold the volume the
        // data was written to (issue 22) — never excused by reading that volume detached.
        if (up) {
          const at = w.guests.mounts(m.hostname).find((x) => x.mountPath === m.mountPath);
          problems.push(`${m.hostname}:${m.path} missing on the running node: ${at ? `${m.mountPath} holds volume ${at.volumeId}` : `nothing is mounted at ${m.mountPath}`}, the data was written to volume ${m.volumeId}`);
          continue;
        }
        const rel = m.path.slice(m.mountPath.length).replace(/^\/+/, '');
        const onDisk = w.cloud.readFile(m.volumeId, rel);
        if (onDisk === m.content) seen.push(`${m.hostname}:${m.path} (detached volume ${m.volumeId.slice(0, 8)})`);
        else problems.push(`${m.hostname}:${m.path} missing: no node with that hostname is up, and on its volume ${m.volumeId} the file ${onDisk === undefined ? 'is absent' : `reads ${JSON.stringify(onDisk)}, expected ${JSON.stringify(m.content)}`}`);
      }
      return problems.length ? { ok: false, detail: problems.join('; ') } : { ok: true, detail: seen.join(', ') };
    },
  },
  file: {
    doc: "A file on a node's filesystem has this content (or is absent when content is omitted and absent: true).",
    params: {
      hostname: { type: 'string', required: true, doc: 'node hostname' },
      path: { type: 'string', required: true, doc: 'absolute path', absolute: true },
      content: { type: 'string', doc: 'expected content' },
      absent: { type: 'boolean', doc: 'expect the file not to exist' },
    },
    tier: always,
    async run(w, p) {
      // A hostname no running node has reads nothing: that is not "absent", it is the wrong host.
      if (w.guests.mounts(p.hostname as string).length === 0) return { ok: false, detail: `no running node with hostname ${String(p.hostname)}` };
      const got = w.guests.readFile(p.hostname as string, p.path as string);
      if (p.absent) return { ok: got === undefined, detail: got === undefined ? 'absent' : `present: ${JSON.stringify(got)}` };
      if (got === undefined) return { ok: false, detail: `${String(p.path)} does not exist on ${String(p.hostname)}, expected ${JSON.stringify(p.content)}` };
      return { ok: got === p.content, detail: `read ${JSON.stringify(got)}${got === p.content ? '' : `, expected ${JSON.stringify(p.content)}`}` };
    },
  },
  mount: {
    doc:
      "A running node's filesystem mount (DISK-5, DISK-6): the path is (or, with absent, is not) a mount point, backed by a persistent disk or not, " +
      'with these mount options (as the node booted with them: a mountOptions change reaches a node only through a replacement).',
    params: {
      hostname: { type: 'string', required: true, doc: 'node hostname' },
      path: { type: 'string', required: true, doc: 'mount point, e.g. /var/cpaas', absolute: true },
      persistent: { type: 'boolean', doc: 'backed by a pool-managed persistent disk (true) or not (false)' },
      options: { type: 'string', doc: 'comma-separated options that must all be among the mount options' },
      without: { type: 'string', doc: 'comma-separated options that must not be among them' },
      absent: { type: 'boolean', doc: 'expect no such mount point on the running node' },
    },
    tier: always,
    async run(w, p) {
      const mounts = w.guests.mounts(p.hostname as string);
      if (mounts.length === 0) return { ok: false, detail: `no running node ${String(p.hostname)}` };
      const m = mounts.find((x) => x.mountPath === p.path);
      const all = mounts.map((x) => `${x.mountPath}${x.persistent ? '(persistent)' : ''}[${(x.options ?? []).join(',')}]`).join(' ');
      if (p.absent) return { ok: !m, detail: `${m ? 'mounted' : 'not mounted'}: ${all}` };
      if (!m) return { ok: false, detail: `${String(p.path)} is not mounted: ${all}` };
      const list = (v: unknown): string[] => String(v ?? '').split(',').map((x) => x.trim()).filter(Boolean);
      const opts = m.options ?? [];
      const problems = [
        ...(p.persistent !== undefined && m.persistent !== p.persistent ? [`persistent=${m.persistent}`] : []),
        ...list(p.options).filter((o) => !opts.includes(o)).map((o) => `option ${o} missing`),
        ...list(p.without).filter((o) => opts.includes(o)).map((o) => `option ${o} present`),
      ];
      return { ok: problems.length === 0, detail: `${m.mountPath} on ${m.volumeId.slice(0, 8)}${m.persistent ? ' (persistent)' : ''} options ${opts.join(',') || '-'}${problems.length ? `: ${problems.join(', ')}` : ''}` };
    },
  },
  object: {
    doc: 'A field of a management-cluster object (or, with cluster, a workload-cluster object) equals a value (path in dotted form, e.g. status.phase or spec.configs[0].hostname).',
    params: {
      kind: { type: 'string', required: true, doc: 'kind, e.g. MachineDeployment' },
      name: { type: 'string', required: true, doc: 'object name' },
      namespace: { type: 'string', doc: 'namespace (default cpaas-system)' },
      path: { type: 'string', required: true, doc: 'dotted field path' },
      equals: { type: 'scalar', required: true, doc: 'expected value' },
      cluster: { type: 'string', doc: 'read the object from this workload cluster (of the Cluster in namespace) instead of the management cluster, e.g. an AppRelease' },
    },
    tier: objectTier,
    async run(w, p) {
      const o = await getShared<KubeObject>(clientFor(w, p), { kind: p.kind as string, namespace: ns(p), name: p.name as string });
      if (!o) return { ok: false, detail: `${p.kind} ${p.name} not found` };
      const v = getPath(o, p.path as string);
      return { ok: v === p.equals, detail: `${p.path}=${JSON.stringify(v)}${v === p.equals ? '' : ` (expected ${JSON.stringify(p.equals)})`}` };
    },
  },
  events: {
    doc: 'The run recorded an event (cloud call, controller decision, k8s Event) matching all given filters (OPS-2: stuck states are explained).',
    params: {
      source: { type: 'string', doc: 'event source: cloud, kube, capi, provider, guest, workload, fault, invariant', values: EVENT_SOURCES },
      type: { type: 'string', doc: 'event type or prefix ending in "*", e.g. event.* or server.active' },
      rule: { type: 'string', doc: 'a SPEC rule ID the event cites' },
      contains: { type: 'string', doc: 'text in the message' },
      count: { type: 'number', doc: 'exact number of matching events (default: at least one)' },
    },
    tier: eventsTier,
    async run(w, p) {
      const type = p.type as string | undefined;
      const match = w.eventLog().filter(
        (e) =>
          (!p.source || e.source === p.source) &&
          (!type || (type.endsWith('*') ? e.type.startsWith(type.slice(0, -1)) : e.type === type)) &&
          (!p.rule || (e.rules ?? []).includes(p.rule as string)) &&
          (!p.contains || e.message.includes(p.contains as string)),
      );
      const first = match[0] ? `; first: #${match[0].seq} ${match[0].message.slice(0, 160)}` : '';
      return p.count === undefined ? { ok: match.length > 0, detail: `${match.length} matching events${first}` } : countResult('matching events', match.length, p.count as number, first);
    },
  },
  condition: {
    doc: 'Objects of a kind (optionally one by name) carry a status condition with this type (and status / reason / message text). With count, that many objects match.',
    params: {
      kind: { type: 'string', required: true, doc: 'kind, e.g. HCSMachine' },
      name: { type: 'string', doc: 'object name (default: any object of the kind)' },
      namespace: { type: 'string', doc: 'namespace (default cpaas-system)' },
      type: { type: 'string', required: true, doc: 'condition type, e.g. Ready' },
      status: { type: 'string', doc: 'True, False or Unknown', values: ['True', 'False', 'Unknown'] },
      reason: { type: 'string', doc: 'condition reason' },
      contains: { type: 'string', doc: 'text in the condition message' },
      count: { type: 'number', doc: 'number of matching objects (default: at least one)' },
      cluster: { type: 'string', doc: 'objects of this workload cluster instead of the management cluster (e.g. AppRelease conditions)' },
    },
    tier: conditionTier,
    async run(w, p) {
      const c = clientFor(w, p);
      const objs = p.name
        ? [await getShared<KubeObject>(c, { kind: p.kind as string, namespace: ns(p), name: p.name as string })].filter((o): o is KubeObject => !!o)
        : await listShared<KubeObject>(c, p.kind as string, { namespace: ns(p) });
      const conds = (o: KubeObject): { type: string; status: string; reason?: string; message?: string }[] =>
        ((o.status as { conditions?: { type: string; status: string; reason?: string; message?: string }[] } | undefined)?.conditions ?? []);
      const hits = objs.filter((o) =>
        conds(o).some((c) => c.type === p.type && (!p.status || c.status === p.status) && (!p.reason || c.reason === p.reason) && (!p.contains || (c.message ?? '').includes(p.contains as string))),
      );
      const seen = objs.map((o) => {
        const c = conds(o).find((x) => x.type === p.type);
        return `${o.metadata.name}: ${c ? `${c.status}/${c.reason ?? ''}${c.message ? ` "${c.message.slice(0, 100)}"` : ''}` : 'no condition'}`;
      });
      const detail = `${hits.length} of ${objs.length} ${p.kind} match [${seen.join('; ')}]`;
      return p.count === undefined ? { ok: hits.length > 0, detail } : { ok: hits.length === p.count, detail: `${detail} (expected ${String(p.count)})` };
    },
  },
  kubeOvnUpgrade: {
    doc:
      'The documented "is the Kube-OVN chart upgraded?" verdict (OVN-6): done only when the cni-kube-ovn AppRelease of the workload cluster ' +
      'has phase Success AND installedRevision equal to the target. `done: false` passes while it is not done — e.g. during HealthChecking, ' +
      'when installedRevision already shows the target (the trap a check trusting installedRevision alone falls into; `trap: true` asserts that state).',
    rules: ['OVN-6'],
    params: {
      cluster: { type: 'string', required: true, doc: 'workload cluster name' },
      namespace: { type: 'string', doc: 'namespace of the Cluster and of the AppRelease (default cpaas-system)' },
      target: { type: 'string', required: true, doc: 'target chart revision' },
      done: { type: 'boolean', required: true, doc: 'expected verdict' },
      trap: { type: 'boolean', doc: 'expect (true) or exclude (false) the state installedRevision == target while the phase is not Success' },
    },
    tier: always,
    async run(w, p) {
      const ar = await getShared<AppRelease>(w.workloads.client(ns(p), p.cluster as string), { kind: 'AppRelease', namespace: ns(p), name: 'cni-kube-ovn' });
      if (!ar) return { ok: false, detail: 'AppRelease cni-kube-ovn not found in the workload cluster' };
      const st = ar.status?.charts?.[KUBE_OVN_CHART];
      const done = ovnUpgradeDone(ar, p.target as string);
      const trap = installedRevisionTrap(ar, p.target as string);
      const seen = `phase=${st?.phase ?? '?'} installedRevision=${st?.installedRevision ?? '?'} targetRevision=${ar.spec.source.charts[0]?.targetRevision ?? '?'}: ${done ? 'done' : 'not done'}${trap ? ' (installedRevision already shows the target)' : ''}`;
      const ok = done === p.done && (p.trap === undefined || !!trap === p.trap);
      return { ok, detail: ok ? seen : `${seen}; expected ${p.done ? 'done' : 'not done'}${p.trap === undefined ? '' : p.trap ? ' with installedRevision already at the target' : ''}` };
    },
  },
  upgradePrerequisites: {
    doc:
      'The upgrade document\'s prerequisites and order for moving a cluster to one OS Support Matrix row (UPG-1, UPG-2, UPG-3, UPG-4, HCS-4). ' +
      'Evaluates: row (the ACP version has a matrix row), managementReady (the HCS provider reports the HCSCluster ready), ' +
      'controlPlaneReachable (Cluster controlPlaneReady, the KubeadmControlPlane ready, its components and etcd healthy), nodesReady (every Node Ready), ' +
      'image (IMS has the row\'s Alauda OS image carrying the row\'s Kubernetes version), order (stage controlPlane: no worker ahead of the ' +
      'control plane; stage workers: the control plane already runs the row\'s version on every machine), skew (no minor version skipped). ' +
      'Passes when exactly the prerequisites listed in `unmet` are unmet (default: none).',
    rules: ['UPG-1', 'UPG-2', 'UPG-3', 'UPG-4', 'HCS-4'],
    params: {
      cluster: { type: 'string', required: true, doc: 'Cluster name' },
      namespace: { type: 'string', doc: 'namespace (default cpaas-system)' },
      acpVersion: { type: 'string', required: true, doc: 'target row of the OS Support Matrix, e.g. v4.2' },
      stage: { type: 'string', required: true, doc: 'controlPlane or workers', values: ['controlPlane', 'workers'] },
      unmet: { type: 'string', doc: 'comma-separated prerequisites expected to be unmet (default: none)' },
    },
    tier: always,
    async run(w, p) {
      const stage = p.stage as string;
      if (stage !== 'controlPlane' && stage !== 'workers') return { ok: false, detail: `stage must be controlPlane or workers, got ${stage}` };
      const matrix = defaultOsSupportMatrix();
      const row = matrix.byAcp(p.acpVersion as string);
      const cluster = await getShared<Cluster>(w.mgmt, { kind: 'Cluster', namespace: ns(p), name: p.cluster as string });
      if (!cluster) return { ok: false, detail: `Cluster ${p.cluster} not found` };
      const hc = cluster.spec.infrastructureRef ? await getShared<KubeObject & { status?: { ready?: boolean } }>(w.mgmt, { kind: 'HCSCluster', namespace: ns(p), name: cluster.spec.infrastructureRef.name }) : undefined;
      const kcpRef = cluster.spec.controlPlaneRef;
      const kcp = kcpRef ? await getShared<KubeadmControlPlane>(w.mgmt, { kind: 'KubeadmControlPlane', namespace: ns(p), name: kcpRef.name }) : undefined;
      const nodes = await listShared<Node>(w.workloads.client(ns(p), p.cluster as string), 'Node');
      const mds = (await listShared<MachineDeployment>(w.mgmt, 'MachineDeployment', { namespace: ns(p) })).filter((m) => m.spec.clusterName === p.cluster);
      const res: Record<string, string | undefined> = {};
      res.row = row ? undefined : `no OS Support Matrix row for ACP ${String(p.acpVersion)} (rows: ${matrix.rows.map((r) => r.acpVersion).join(', ')})`;
      res.managementReady = hc?.status?.ready ? undefined : 'the HCS provider does not report the HCSCluster ready';
      const unhealthy = (kcp?.status?.conditions ?? []).filter((c) => (c.type === 'ControlPlaneComponentsHealthy' || c.type === 'EtcdClusterHealthy') && c.status === 'False');
      res.controlPlaneReachable = !cluster.status?.controlPlaneReady || (kcpRef && !kcp?.status?.ready)
        ? 'the control plane is not reachable (Cluster controlPlaneReady / KubeadmControlPlane ready)'
        : unhealthy.length ? `the control plane is not healthy: ${unhealthy.map((c) => `${c.type}: ${c.message ?? c.reason ?? ''}`).join('; ')}` : undefined;
      const notReady = nodes.filter((n) => !nodeReady(n)).map((n) => n.metadata.name);
      res.nodesReady = nodes.length && !notReady.length ? undefined : nodes.length ? `nodes not Ready: ${notReady.join(', ')}` : 'no nodes';
      if (row) {
        const img = w.cloud.images().find((i) => i.name === row.alaudaOSImage);
        res.image = !img ? `image ${row.alaudaOSImage} is not in HCS` : img.status !== 'active' ? `image ${row.alaudaOSImage} is ${img.status}` : img.kubernetesVersion !== row.kubernetesVersion ? `image ${row.alaudaOSImage} carries Kubernetes ${img.kubernetesVersion ?? '?'}, the row says ${row.kubernetesVersion}` : undefined;
        const cpVersion = kcp?.status?.version ?? kcp?.spec.version;
        if (stage === 'controlPlane') {
          const ahead = mds.filter((m) => (minorOf(m.spec.template.spec.version) ?? 0) > (minorOf(cpVersion) ?? Infinity)).map((m) => m.metadata.name);
          res.order = ahead.length ? `workers ahead of the control plane: ${ahead.join(', ')}` : undefined;
        } else {
          const done = kcp && kcp.spec.version === row.kubernetesVersion && kcp.status?.version === row.kubernetesVersion && kcp.status?.updatedReplicas === kcp.spec.replicas;
          res.order = !kcpRef || done ? undefined : `the control plane is not at ${row.kubernetesVersion} yet (spec ${kcp?.spec.version ?? '?'}, running ${kcp?.status?.version ?? '?'}, updated ${kcp?.status?.updatedReplicas ?? 0}/${kcp?.spec.replicas ?? '?'}): upgrade the control plane before the workers`;
        }
        const versions = nodes.map((n) => n.status?.nodeInfo?.kubeletVersion).filter((v): v is string => !!v);
        const lowest = Math.min(...versions.map((v) => minorOf(v) ?? Infinity));
        const target = minorOf(row.kubernetesVersion) ?? 0;
        res.skew = Number.isFinite(lowest) && target - lowest > 1 ? `${row.kubernetesVersion} skips a minor version above the lowest running kubelet (${versions.sort()[0]}); upgrade through the intermediate version` : undefined;
      }
      const expectedUnmet = new Set(String(p.unmet ?? '').split(',').map((x) => x.trim()).filter(Boolean));
      const unmet = Object.entries(res).filter(([, v]) => v !== undefined).map(([k]) => k);
      const ok = unmet.length === expectedUnmet.size && unmet.every((u) => expectedUnmet.has(u));
      const detail = Object.entries(res).map(([k, v]) => `${v ? '✗' : '✓'} ${k}${v ? `: ${v}` : ''}`).join('; ');
      return { ok, detail: ok ? detail : `${detail} (expected unmet: ${[...expectedUnmet].join(', ') || 'none'})` };
    },
  },
  controllerLog: {
    doc: 'The controller log (kubectl logs deployment/<name>) contains a text (OPS-3).',
    rules: ['OPS-3'],
    params: {
      deployment: { type: 'string', doc: 'deployment name (default hcs-controller-manager)' },
      contains: { type: 'string', required: true, doc: 'text to find' },
    },
    tier: () => reference('reads the reference provider\'s log wording (kubectl logs deployment/hcs-controller-manager)'),
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
