/**
 * Rules judged from one state alone (issue 35: `hcs-testbed doctor`), beside
 * the continuous invariants (invariants.ts), which remember a run's history
 * (a disk ever in service, the template a rollout started from) and so see
 * less on a single snapshot. Both read a StateSource (world.ts): a captured
 * bundle, a live cluster read-only, or a running testbed. Every finding
 * names its rule and the objects it rests on.
 *
 * - DISK-8  a Running machine serves hostname H, its server is ACTIVE, and a
 *           persistent volume of (H, slot S), S declared for H, sits
 *           `available` instead of on that server (detached by hand, or
 *           stranded);
 * - DISK-3  two live volumes claim one (cluster, hostname, slot);
 * - POOL-4  a pool entry bound (status.entries[].machine) to an HCSMachine
 *           that is gone; a live server built for an entry (its metadata
 *           hcs.io/pool, hcs.io/hostname, hcs.io/machine) whose HCSMachine is
 *           gone (its finalizer removed by hand) while the entry is free or
 *           bound to another machine;
 * - TPL-4   runtime ids (serverId, providerID) in an HCSMachineTemplate;
 * - MD-3 / KCP-1  maxSurge > 0 on a MachineDeployment / KubeadmControlPlane
 *           whose machines take pool entries with persistent disks;
 * - POOL-2  more live machines of a pool than entries: some wait for a free
 *           entry (with MD-3: the surge machine of a rollout on a full pool);
 * - MD-1    more live machines than replicas + maxSurge in a MachineDeployment
 *           whose replicas were not lowered.
 */
import { LABEL_CLUSTER_NAME, LABEL_DEPLOYMENT_NAME, type KubeadmControlPlane, type Machine, type MachineDeployment } from '../../product/api/capi.js';
import { persistentDiskIdentity, type HCSMachine, type HCSMachineConfigPool, type HCSMachineTemplate } from '../../product/api/hcs.js';
import { META_HOSTNAME, META_MACHINE, META_NAMESPACE, META_PERSISTENT, META_POOL } from '../../product/api/metadata.js';
import { maxSurge } from '../../world/capi/mdutil.js';
import { listShared } from '../../core/kube/client.js';
import { short, type ContractFinding } from './disk-reuse.js';
import type { StateSource } from './world.js';

/** The rules stateFindings can report. */
export const STATE_RULES = ['DISK-8', 'DISK-3', 'POOL-4', 'TPL-4', 'MD-3', 'KCP-1', 'POOL-2', 'MD-1'] as const;


export async function stateFindings(state: StateSource): Promise<ContractFinding[]> {
  const out: ContractFinding[] = [];
  const hcsMachines = await listShared<HCSMachine>(state.mgmt, 'HCSMachine');
  const machines = await listShared<Machine>(state.mgmt, 'Machine');
  const pools = await listShared<HCSMachineConfigPool>(state.mgmt, 'HCSMachineConfigPool');
  const templates = await listShared<HCSMachineTemplate>(state.mgmt, 'HCSMachineTemplate');
  const volumes = state.cloud.listVolumes().filter((v) => v.status !== 'deleting' && v.status !== 'deleted');
  const servers = state.cloud.listServers().filter((s) => s.status !== 'DELETED');
  const live = new Map(servers.map((s) => [s.id, s]));
  const poolOf = new Map(pools.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
  const hmByKey = new Map(hcsMachines.map((h) => [`${h.metadata.namespace}/${h.metadata.name}`, h]));
  const machineOf = new Map(machines.map((m) => [`${m.metadata.namespace}/${m.spec.infrastructureRef?.name ?? ''}`, m]));
  const declaredSlots = (ns: string, pool: string, host: string): number[] =>
    poolOf.get(`${ns}/${pool}`)?.spec.configs?.find((c) => c.hostname === host)?.persistentDisks?.map((d) => d.slot) ?? [];

  // DISK-8: a served hostname's declared disk sits available.
  for (const hm of hcsMachines) {
    const ns = hm.metadata.namespace ?? 'default';
    const host = hm.status?.hostname;
    const pool = hm.spec.configPoolRef?.name;
    const sid = hm.spec.serverId;
    const m = machineOf.get(`${ns}/${hm.metadata.name}`);
    if (!host || !pool || !sid || hm.metadata.deletionTimestamp || m?.metadata.deletionTimestamp || m?.status?.phase !== 'Running' || live.get(sid)?.status !== 'ACTIVE') continue;
    const cluster = hm.metadata.labels?.[LABEL_CLUSTER_NAME];
    for (const slot of declaredSlots(ns, pool, host)) {
      const mine = volumes.filter((v) => {
        const id = persistentDiskIdentity(v.metadata);
        return v.metadata[META_PERSISTENT] === 'true' && id?.hostname === host && id.slot === slot && (!cluster || !id.cluster || id.cluster === cluster);
      });
      if (mine.some((v) => v.attachedTo === sid)) continue;
      for (const v of mine.filter((x) => x.status === 'available')) {
        out.push({
          rule: 'DISK-8',
          key: `DISK-8/detached/${v.id}/${sid}`,
          message: `stranded data: machine ${hm.metadata.name} serves hostname ${host} on server ${live.get(sid)?.name ?? sid} (${short(sid)}), ACTIVE, but its slot ${slot} volume ${v.name} (${short(v.id)}) is available, not attached to it (detached by hand?): the node runs without its persistent disk`,
          refs: [v.id, sid, hm.metadata.name],
        });
      }
    }
  }

  // DISK-3: one (cluster, hostname, slot), two volumes.
  const byIdentity = new Map<string, typeof volumes>();
  for (const v of volumes) {
    const id = persistentDiskIdentity(v.metadata);
    if (!id || v.metadata[META_PERSISTENT] !== 'true') continue;
    const k = `${id.cluster ?? ''}/${id.hostname}/${id.slot}`;
    byIdentity.set(k, [...(byIdentity.get(k) ?? []), v]);
  }
  for (const [k, vs] of byIdentity) {
    if (vs.length < 2) continue;
    const [cluster, host, slot] = k.split('/');
    out.push({
      rule: 'DISK-3',
      key: `DISK-3/duplicate/${k}/${vs.map((v) => v.id).sort().join(',')}`,
      message: `${vs.length} volumes claim hostname ${host} slot ${slot}${cluster ? ` of cluster ${cluster}` : ''}: ${vs.map((v) => `${v.name} (${short(v.id)}, ${v.status}${v.attachedTo ? ` on ${short(v.attachedTo)}` : ''})`).join(', ')}: the identity of a persistent disk is (hostname, slot), one volume each`,
      refs: vs.map((v) => v.id),
    });
  }

  // POOL-4: entries bound to machines that are gone.
  for (const p of pools) {
    const ns = p.metadata.namespace ?? 'default';
    for (const e of p.status?.entries ?? []) {
      if (e.machine && !hmByKey.has(`${ns}/${e.machine}`)) {
        out.push({
          rule: 'POOL-4',
          key: `POOL-4/gone/${ns}/${p.metadata.name}/${e.hostname}/${e.machine}`,
          message: `pool ${ns}/${p.metadata.name} entry ${e.hostname} is bound to HCSMachine ${e.machine}, which is gone: the entry is held by no live machine and cannot be taken`,
          refs: [e.machine, p.metadata.name],
        });
      }
    }
  }
  // POOL-4 / HCS-1: a live server whose HCSMachine is gone (its finalizer removed by hand), its entry given away.
  for (const s of servers) {
    const d = state.cloud.server(s.id);
    const meta = d?.metadata ?? {};
    const ns = meta[META_NAMESPACE];
    const machine = meta[META_MACHINE];
    const pool = meta[META_POOL];
    const host = meta[META_HOSTNAME];
    if (!ns || !machine || !pool || !host || hmByKey.has(`${ns}/${machine}`) || hcsMachines.some((h) => h.spec.serverId === s.id)) continue;
    const entry = poolOf.get(`${ns}/${pool}`)?.status?.entries?.find((e) => e.hostname === host);
    const holder = entry?.machine && entry.machine !== machine ? entry.machine : undefined;
    out.push({
      rule: 'POOL-4',
      key: `POOL-4/server-without-machine/${s.id}`,
      message: `server ${s.name} (${short(s.id)}, ${s.status}) was built for HCSMachine ${machine} (pool ${ns}/${pool} entry ${host}), which is gone while the server still exists (its finalizer removed by hand?); the entry is ${holder ? `bound to HCSMachine ${holder}` : 'free'}: an entry is released only once its holder's server is gone`,
      refs: [s.id, machine, ...(holder ? [holder] : [])],
    });
  }

  // TPL-4: runtime ids in templates.
  for (const t of templates) {
    const spec = t.spec.template.spec;
    for (const f of ['serverId', 'providerID'] as const) {
      if (!spec[f]) continue;
      out.push({
        rule: 'TPL-4',
        key: `TPL-4/template/${t.metadata.namespace}/${t.metadata.name}/${f}`,
        message: `HCSMachineTemplate ${t.metadata.namespace}/${t.metadata.name} carries spec.template.spec.${f} ${spec[f]}: runtime identity fields must be empty in a template (every machine made from it would claim that ${f === 'serverId' ? 'server' : 'identity'})`,
        refs: [t.metadata.name],
      });
    }
  }

  // Strategies against pools with persistent disks; machines beyond what a pool or a strategy allows.
  const templatePool = (ns: string, name: string | undefined): HCSMachineConfigPool | undefined => {
    const t = templates.find((x) => x.metadata.namespace === ns && x.metadata.name === name);
    const ref = t?.spec.template.spec.configPoolRef;
    return ref?.name ? poolOf.get(`${ref.namespace ?? ns}/${ref.name}`) : undefined;
  };
  const hasDisks = (p: HCSMachineConfigPool | undefined): boolean => !!p?.spec.configs?.some((c) => (c.persistentDisks ?? []).length > 0);
  const liveMachines = machines.filter((m) => !m.metadata.deletionTimestamp);
  for (const md of await listShared<MachineDeployment>(state.mgmt, 'MachineDeployment')) {
    const ns = md.metadata.namespace ?? 'default';
    const key = `${ns}/${md.metadata.name}`;
    const surge = maxSurge(md as MachineDeployment);
    const pool = templatePool(ns, md.spec.template.spec.infrastructureRef?.name);
    if (surge > 0 && (md.spec.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate' && hasDisks(pool)) {
      out.push({
        rule: 'MD-3',
        key: `MD-3/strategy/${key}/${surge}`,
        message: `MachineDeployment ${key} rolls out with maxSurge ${surge} while its machines take entries of pool ${pool!.metadata.name}, which carry persistent disks: a surge machine cannot take the entry (and disks) of the machine it replaces — it waits for a free entry or takes another one; use maxSurge 0`,
        refs: [md.metadata.name, pool!.metadata.name],
      });
    }
    const mine = liveMachines.filter((m) => m.metadata.namespace === ns && m.metadata.labels?.[LABEL_DEPLOYMENT_NAME] === md.metadata.name);
    const replicas = md.spec.replicas ?? 1;
    const lowered = (md.status?.replicas ?? replicas) > replicas;
    if (!lowered && mine.length > replicas + surge) {
      out.push({
        rule: 'MD-1',
        key: `MD-1/surge/${key}/${mine.length}`,
        message: `MachineDeployment ${key} has ${mine.length} machines, above replicas ${replicas} + maxSurge ${surge} (${mine.map((m) => m.metadata.name).sort().join(', ')})`,
        refs: [md.metadata.name],
      });
    }
  }
  for (const kcp of await listShared<KubeadmControlPlane>(state.mgmt, 'KubeadmControlPlane')) {
    const ns = kcp.metadata.namespace ?? 'default';
    const surge = Number(kcp.spec.rolloutStrategy?.rollingUpdate?.maxSurge ?? 1);
    const pool = templatePool(ns, kcp.spec.machineTemplate.infrastructureRef.name);
    if (surge > 0 && hasDisks(pool)) {
      out.push({
        rule: 'KCP-1',
        key: `KCP-1/strategy/${ns}/${kcp.metadata.name}/${surge}`,
        message: `KubeadmControlPlane ${ns}/${kcp.metadata.name} rolls out with maxSurge ${surge} while its machines take entries of pool ${pool!.metadata.name}, which carry persistent disks: set rolloutStrategy.rollingUpdate.maxSurge: 0 (remove first, then replace on the same hostname and disks)`,
        refs: [kcp.metadata.name, pool!.metadata.name],
      });
    }
  }
  for (const p of pools) {
    const ns = p.metadata.namespace ?? 'default';
    const users = hcsMachines.filter((h) => !h.metadata.deletionTimestamp && (h.metadata.namespace ?? 'default') === ns && h.spec.configPoolRef?.name === p.metadata.name);
    const entries = p.spec.configs?.length ?? 0;
    const waiting = users.filter((h) => !h.status?.hostname);
    if (users.length > entries && waiting.length) {
      out.push({
        rule: 'POOL-2',
        key: `POOL-2/full/${ns}/${p.metadata.name}/${users.length}`,
        message: `pool ${ns}/${p.metadata.name} has ${entries} entries for ${users.length} live machines: ${waiting.map((h) => h.metadata.name).sort().join(', ')} wait${waiting.length === 1 ? 's' : ''} for a free entry (a surge machine on a full pool, or replicas raised before entries were added: POOL-3)`,
        refs: [p.metadata.name, ...waiting.map((h) => h.metadata.name)],
      });
    }
  }
  return out;
}
