/**
 * Why a step failed, from what the run already recorded (OPS-2): the Warning
 * events since the step started (deduplicated, newest last) and the earlier
 * ones whose condition still stands (an object emits a Warning once per
 * change, so a wait that began after it would otherwise never show it), the
 * non-True conditions of the machines, pools and deployments (objects being
 * deleted marked), and a snapshot of the cloud (servers with their volumes,
 * persistent volumes with their identity, status and the server they are
 * attached to, pool entries with their machines, the cloud jobs that failed
 * or are stuck). Printed under a failed step and kept in its `detail` (JSON
 * report).
 */
import type { LogEvent } from '../../core/events.js';
import { persistentDiskIdentity, type HCSMachineConfigPool } from '../../product/api/hcs.js';
import { listShared } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import { stallLines, whyWaiting, WHY_KINDS } from '../status/why.js';
import type { World } from './world.js';

function line(e: LogEvent): string {
  return `#${e.seq} ${e.message}${e.rules?.length ? ` [${e.rules.join(' ')}]` : ''}`;
}

const KINDS = ['Machine', 'HCSMachine', 'MachineDeployment', 'MachineSet', 'KubeadmControlPlane', 'HCSMachineConfigPool', 'HCSCluster', 'Cluster'];

interface Cond { type: string; status: string; reason?: string; message?: string }

/** Guest event types that leave a node stuck short of joining (src/world/guest): what a wait for nodes or machines waits on. */
const GUEST_STUCK = new Set(['guest.join-failed', 'guest.waiting-for-disks']);

/**
 * What blocks a wait, read from the run's own record (issue 22): each live
 * server whose guest's latest word is a join failure or a wait for its disks,
 * with the guest's reason and rule IDs ("demo-worker-1: join failed: ... [BOOT-3]").
 * Empty when no guest is stuck.
 */
export function guestBlockers(world: World, events: readonly LogEvent[]): string[] {
  const latest = new Map<string, LogEvent>();
  for (const e of events) {
    const sid = e.data?.serverId;
    if (e.source !== 'guest' || typeof sid !== 'string') continue;
    latest.set(sid, e);
  }
  const live = new Set(world.cloud.listServers().filter((x) => x.status !== 'DELETED').map((x) => x.id));
  const out: string[] = [];
  for (const [sid, e] of latest) {
    if (!live.has(sid) || !GUEST_STUCK.has(e.type)) continue;
    const host = typeof e.data?.hostname === 'string' ? e.data.hostname : sid.slice(0, 8);
    const what = e.type === 'guest.join-failed' ? `join failed: ${e.message.replace(/^\S+ \([^)]*\): /, '')}` : e.message.replace(/^[^:]*: /, '');
    out.push(`guest ${host}: ${what}${e.rules?.length ? ` [${e.rules.join(' ')}]` : ''}`);
  }
  return out.sort();
}

/** "Why is it waiting?" (src/harness/status/why.ts, the dashboard's panel and `hcs-testbed status`): the stalls now, one line each. */
export async function whyWaitingLines(world: World): Promise<string[]> {
  const objects = Object.fromEntries(await Promise.all(WHY_KINDS.map(async (k) => [k, await listShared<KubeObject>(world.mgmt, k)] as const)));
  const stalls = whyWaiting(objects);
  return stalls.length ? ['why is it waiting (conditions):', ...stallLines(stalls)] : [];
}

export async function explainFailure(world: World, events: readonly LogEvent[], sinceSeq: number): Promise<string[]> {
  const out: string[] = [...(await whyWaitingLines(world))];
  const warnings = new Map<string, LogEvent>();
  for (const e of events) {
    if (e.seq < sinceSeq || e.data?.eventType !== 'Warning') continue;
    warnings.delete(e.message);
    warnings.set(e.message, e);
  }
  if (warnings.size) {
    out.push('Warning events during the step:');
    for (const e of [...warnings.values()].slice(-12)) out.push(`  ${line(e)}`);
  }
  const conds: string[] = [];
  /** kind/name/reason of every non-True condition now: an earlier Warning with that reason still explains the state. */
  const standing = new Set<string>();
  const deleting = new Set<string>();
  for (const kind of KINDS) {
    for (const o of await listShared<KubeObject & { status?: { conditions?: Cond[] } }>(world.mgmt, kind)) {
      if (o.metadata.deletionTimestamp) deleting.add(`${kind}/${o.metadata.name}`);
      for (const c of o.status?.conditions ?? []) {
        if (c.status === 'True') continue;
        conds.push(`  ${kind} ${o.metadata.name}${o.metadata.deletionTimestamp ? ' (being deleted)' : ''}: ${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`);
        if (c.reason) standing.add(`${kind}/${o.metadata.name}/${c.reason}`);
      }
    }
  }
  // A Warning emitted before the step (events are emitted once per change) whose condition still stands: the reason a
  // wait that started later never got anywhere (e.g. DiskDetachStuck on the machine being deleted).
  const earlier = new Map<string, LogEvent>();
  for (const e of events) {
    if (e.seq >= sinceSeq || e.data?.eventType !== 'Warning') continue;
    const k = `${String(e.data.kind)}/${String(e.data.name)}/${String(e.data.reason)}`;
    if (!standing.has(k)) continue;
    earlier.delete(k);
    earlier.set(k, e);
  }
  if (earlier.size) {
    out.push('Warning events before the step, still standing (the object still has that condition reason):');
    for (const e of [...earlier.values()].slice(-12)) out.push(`  ${line(e)}`);
  }
  const stuck = guestBlockers(world, events);
  if (stuck.length) out.push('guests that did not join (their latest word):', ...stuck.map((x) => `  ${x}`));
  if (conds.length) out.push('conditions not True:', ...conds.slice(0, 20), ...(conds.length > 20 ? [`  (${conds.length - 20} more in the JSON report's event log)`] : []));
  out.push('cloud at the failure:');
  const servers = world.cloud.listServers().filter((s) => s.status !== 'DELETED');
  const volumes = world.cloud.listVolumes().filter((v) => v.status !== 'deleted');
  const serverName = new Map(servers.map((s) => [s.id, s.name]));
  for (const s of servers) {
    const vols = (world.cloud.server(s.id)?.volumes ?? []).map((a) => volumes.find((v) => v.id === a.volumeId)?.name ?? a.volumeId);
    out.push(`  server ${s.name} ${s.status} (${s.id.slice(0, 8)}): ${vols.join(', ') || 'no volumes'}`);
  }
  for (const v of volumes) {
    const id = persistentDiskIdentity(v.metadata);
    if (!id) continue; // root and data volumes are listed under their server
    out.push(`  persistent volume ${v.name} (${v.id.slice(0, 8)}) ${id.hostname}/slot${id.slot}: ${v.status}${v.attachedTo ? ` on ${serverName.get(v.attachedTo) ?? v.attachedTo}` : ''}`);
  }
  const detachedOthers = volumes.filter((v) => !persistentDiskIdentity(v.metadata) && !v.attachedTo);
  for (const v of detachedOthers) out.push(`  volume ${v.name} (${v.id.slice(0, 8)}): ${v.status}, attached to no server`);
  const failures = new Map<string, LogEvent>();
  for (const e of events) {
    if (e.source !== 'cloud' || !(e.type === 'job.failed' || e.type.endsWith('-failed') || e.type === 'task.stuck')) continue;
    failures.delete(e.message);
    failures.set(e.message, e);
  }
  for (const p of await listShared<HCSMachineConfigPool>(world.mgmt, 'HCSMachineConfigPool')) {
    const entries = (p.status?.entries ?? []).map((e) => `${e.hostname}${e.machine ? `→${e.machine}${deleting.has(`HCSMachine/${e.machine}`) ? ' (being deleted: the entry is released when its server is gone)' : ''}` : ' free'}`);
    out.push(`  pool ${p.metadata.name}: ${entries.join(', ') || p.spec.configs.map((c) => c.hostname).join(', ')}`);
  }
  if (failures.size) {
    out.push('cloud jobs that failed or are stuck (newest last):');
    for (const e of [...failures.values()].slice(-6)) out.push(`  ${line(e)}`);
  }
  return out;
}
