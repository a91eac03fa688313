/**
 * Why a step failed, from what the run already recorded (OPS-2): the Warning
 * events since the step started (deduplicated, newest last), the non-True
 * conditions of the machines, pools and deployments, and a snapshot of the
 * cloud (servers with their volumes, volumes with the server they are
 * attached to, pool entries with their machines). Printed under a failed
 * step and kept in its `detail` (JSON report).
 */
import type { LogEvent } from '../core/events.js';
import { persistentDiskIdentity, type HCSMachineConfigPool } from '../api/hcs.js';
import { listShared } from '../kube/client.js';
import type { KubeObject } from '../kube/types.js';
import type { World } from './world.js';

const KINDS = ['Machine', 'HCSMachine', 'MachineDeployment', 'MachineSet', 'KubeadmControlPlane', 'HCSMachineConfigPool', 'HCSCluster', 'Cluster'];

interface Cond { type: string; status: string; reason?: string; message?: string }

export async function explainFailure(world: World, events: readonly LogEvent[], sinceSeq: number): Promise<string[]> {
  const out: string[] = [];
  const warnings = new Map<string, LogEvent>();
  for (const e of events) {
    if (e.seq < sinceSeq || e.data?.eventType !== 'Warning') continue;
    warnings.delete(e.message);
    warnings.set(e.message, e);
  }
  if (warnings.size) {
    out.push('Warning events during the step:');
    for (const e of [...warnings.values()].slice(-12)) out.push(`  #${e.seq} ${e.message}${e.rules?.length ? ` [${e.rules.join(' ')}]` : ''}`);
  }
  const conds: string[] = [];
  for (const kind of KINDS) {
    for (const o of await listShared<KubeObject & { status?: { conditions?: Cond[] } }>(world.mgmt, kind)) {
      for (const c of o.status?.conditions ?? []) {
        if (c.status !== 'True') conds.push(`  ${kind} ${o.metadata.name}: ${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`);
      }
    }
  }
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
  for (const p of await listShared<HCSMachineConfigPool>(world.mgmt, 'HCSMachineConfigPool')) {
    const entries = (p.status?.entries ?? []).map((e) => `${e.hostname}${e.machine ? `→${e.machine}` : ' free'}`);
    out.push(`  pool ${p.metadata.name}: ${entries.join(', ') || p.spec.configs.map((c) => c.hostname).join(', ')}`);
  }
  return out;
}
