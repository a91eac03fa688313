/**
 * HCSMachine controller: one ECS server per machine, with the static IPs and
 * hostname of a config pool entry, the entry's persistent disks (claimed by
 * (hostname, slot) and re-attached to every replacement) and cloud-init with
 * the kubelet certificate injected.
 *
 * Every step is re-derived from the management API and the cloud on each
 * reconcile, so a restarted provider never creates a second server or disk:
 * servers are found by exact name + machine uid metadata (and protected by an
 * X-Client-Token derived from the HCSMachine uid), disks by identity metadata,
 * pool bindings live in the pool status.
 */
import { getShared, updateStatusShared } from '../../core/kube/client.js';
import { LABEL_CLUSTER_NAME, type Cluster, type Machine } from '../api/capi.js';
import { FINALIZER_HCSMACHINE, type HCSCluster, type HCSMachine, type HCSMachineConfigPool } from '../api/hcs.js';
import { isConflict } from '../../core/kube/errors.js';
import { hasFinalizer, isDeleting, type ObjectRef } from '../../core/kube/types.js';
import type { ControllerContext } from '../../core/runtime/context.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import { asCloudError, isTransientCloudError, attachedServers, type CloudApi, type CloudServer, type CloudVolume } from './cloud-api.js';
import { cloudErrorReason, ruleForCloudError } from './cloud-errors.js';
import type { ClaimedDisk, DiskClaimer } from './disks.js';
import { providerIDFor } from './labels.js';
import { META_CLUSTER, META_MACHINE_UID, META_PERSISTENT, META_PERSISTENT_VOLUMES, META_SLOT } from '../api/metadata.js';
import { COND_DISKS, COND_INSTANCE, COND_POOL, COND_READY, POLL, POLL_FAST, POLL_SLOW, STUCK_AFTER_MS, WaitSignal, azOf, wait, type Run, type Wait } from './machine-wait.js';
import { createServer, validateTemplate } from './server-build.js';
import { COND_DISK_REUSE, surgeContext, surgeMessage } from './surge.js';
import { bindEntry, enqueuePoolRefresh, diskPhaseOf, effectiveDisks, poolRef, releaseEntry, updateDiskStatus } from './pool.js';
import { Reporter, getCondition, sameJsonText, setCondition } from './util.js';

export const MACHINE_CONTROLLER = 'hcsmachine';

export class HCSMachineController implements Controller {
  readonly name = MACHINE_CONTROLLER;
  private readonly rep: Reporter;
  /** HCSMachine keys waiting for a free entry, per pool key (re-queued when the pool changes). */
  private readonly waitingForEntry = new Map<string, Set<string>>();
  /** Since when a machine waits in a reason (stuck detection; a restarted process starts counting again unless the condition already says stuck). */
  private readonly waitingSince = new Map<string, { reason: string; since: number }>();
  /**
   * The last detach job asked for per (machine, volume) while deleting, and how many were asked for: a disk that is
   * back `in-use` after one is a job the cloud gave up (its FAIL reason goes into the condition and a Warning event).
   * In memory, like `waitingSince`: a restarted provider only learns of the failures that come after it started.
   */
  private readonly detachJobs = new Map<string, { jobId: string; attempts: number; lastFailure?: string }>();

  /**
   * Entries held by HCSMachines being deleted, with what their deletion waits for: such an entry comes free only when
   * its server is gone (POOL-4; not before its persistent disks are detached, DISK-9), so a machine waiting for an entry
   * says which one it will get and what holds it up (OPS-2).
   */
  private async leavingHolders(ns: string, holders: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    for (const h of holders) {
      const i = h.indexOf('=');
      const [host, name] = [h.slice(0, i), h.slice(i + 1)];
      const o = await getShared<HCSMachine>(this.ctx.mgmt, { kind: 'HCSMachine', namespace: ns, name });
      if (!o || !isDeleting(o)) continue;
      const c = getCondition(o.status?.conditions ?? [], COND_INSTANCE);
      out.push(`${host} is held by HCSMachine ${name}, being deleted${c?.status === 'False' && c.reason ? ` (${c.reason})` : ''}: it comes free when that server is gone (POOL-4, DISK-9)`);
    }
    return out;
  }

  private detachNote(key: string): string {
    const d = this.detachJobs.get(key);
    return d && d.attempts > 1 ? `, attempt ${d.attempts}${d.lastFailure ? `; the previous ${d.lastFailure}` : ''}` : '';
  }

  constructor(
    private readonly ctx: ControllerContext,
    private readonly cloud: CloudApi,
    private readonly disks: DiskClaimer,
    /** MD-3 detection (injectable so tests can prove the scenario's checks fail without it). */
    private readonly surgeCheck: typeof surgeContext = surgeContext,
  ) {
    this.rep = new Reporter(ctx, MACHINE_CONTROLLER);
  }

  /** Machines to re-queue after a change of the pool `poolKey`. */
  takeWaiting(poolKey: string): string[] {
    const s = this.waitingForEntry.get(poolKey);
    if (!s) return [];
    this.waitingForEntry.delete(poolKey);
    return [...s].sort();
  }

  async reconcile(key: string): Promise<Result | void> {
    const [namespace, name] = key.split('/') as [string, string];
    const ref: ObjectRef = { kind: 'HCSMachine', namespace, name };
    // Read-only (the store's own object where it shares one): changes go through patch/update/status writes.
    let hm: HCSMachine | undefined = await getShared<HCSMachine>(this.ctx.mgmt, ref);
    if (!hm) return;
    if (!isDeleting(hm) && !hasFinalizer(hm, FINALIZER_HCSMACHINE)) {
      hm = await this.ctx.mgmt.patch<HCSMachine>(ref, 'merge', { metadata: { finalizers: [...(hm.metadata.finalizers ?? []), FINALIZER_HCSMACHINE] } });
    }
    const run: Run = { key, hm, status: structuredClone(hm.status ?? {}), conds: [] };
    run.conds = run.status.conditions ??= [];
    let result: Result | void;
    try {
      result = isDeleting(hm) ? await this.reconcileDelete(run) : await this.reconcileNormal(run);
    } catch (e) {
      let w: Wait | undefined = e instanceof WaitSignal ? e.wait : undefined;
      const ce = w ? undefined : asCloudError(e);
      if (ce) {
        // OPS-2: a refused or failed cloud call is a visible stuck state (condition + event), retried.
        const why = cloudErrorReason(ce.code, ce.status);
        const rules = ruleForCloudError(ce.code);
        w = {
          condition: COND_INSTANCE,
          reason: why?.reason ?? 'CloudError',
          message: `HCS call failed: ${ce.code} ${ce.message}${why ? `; ${why.hint}` : ''}`,
          rules: rules.length ? rules : ['OPS-2'],
          requeueAfter: isTransientCloudError(ce) ? POLL : 60_000,
          warn: true,
        };
      }
      if (!w) {
        await this.saveStatus(run).catch(() => undefined);
        throw e;
      }
      result = await this.applyWait(run, w);
    }
    if (isDeleting(run.hm) && !hasFinalizer(run.hm, FINALIZER_HCSMACHINE)) return;
    await this.saveStatus(run);
    return result;
  }

  // ------------------------------------------------------------------ normal

  private async reconcileNormal(run: Run): Promise<Result | void> {
    const { hm } = run;
    const ns = hm.metadata.namespace ?? 'default';
    const now = this.ctx.clock.now();
    if (hm.status?.failureReason) return; // terminal, as in Cluster API

    const ownerRef = hm.metadata.ownerReferences?.find((r) => r.kind === 'Machine');
    if (!ownerRef) wait({ condition: COND_INSTANCE, reason: 'WaitingForOwner', message: 'waiting for the owning Machine to set an ownerReference' });
    const machine = await getShared<Machine>(this.ctx.mgmt, { kind: 'Machine', namespace: ns, name: ownerRef!.name });
    if (!machine) wait({ condition: COND_INSTANCE, reason: 'WaitingForOwner', message: `owner Machine ${ownerRef!.name} not found`, requeueAfter: POLL });
    // Infrastructure providers place the server in the Machine's failure domain (Cluster API contract; CAPO maps it to
    // the availability zone the same way): here an HCS availability zone.
    if (machine!.spec.failureDomain) run.az = machine!.spec.failureDomain;
    const clusterName = hm.metadata.labels?.[LABEL_CLUSTER_NAME] ?? machine!.spec.clusterName;
    if (!clusterName) wait({ condition: COND_INSTANCE, reason: 'WaitingForCluster', message: `no ${LABEL_CLUSTER_NAME} label and no Machine.spec.clusterName` });
    const cluster = await getShared<Cluster>(this.ctx.mgmt, { kind: 'Cluster', namespace: ns, name: clusterName });
    if (!cluster) wait({ condition: COND_INSTANCE, reason: 'WaitingForCluster', message: `Cluster ${clusterName} not found`, requeueAfter: POLL });
    const hcName = cluster!.spec.infrastructureRef?.kind === 'HCSCluster' ? cluster!.spec.infrastructureRef.name : clusterName;
    const hc = await getShared<HCSCluster>(this.ctx.mgmt, { kind: 'HCSCluster', namespace: ns, name: hcName });
    if (!hc?.status?.ready) {
      const why = hc?.status?.conditions?.find((c) => c.type === 'NetworkReady' && c.status === 'False')?.message;
      wait({
        condition: COND_INSTANCE,
        reason: 'WaitingForClusterInfrastructure',
        message: hc ? `HCSCluster ${hcName} is not ready${why ? `: ${why}` : ''}` : `HCSCluster ${hcName} not found`,
        requeueAfter: POLL,
        ...(why ? { rules: ['NET-4'] } : {}),
      });
    }

    // Template values before anything is created for this machine.
    const image = hm.spec.serverId ? undefined : await validateTemplate(this.cloud, run);

    // Pool entry (POOL-2, POOL-4).
    if (!hm.spec.configPoolRef?.name) {
      wait({
        condition: COND_POOL,
        reason: 'InvalidConfiguration',
        message: 'spec.configPoolRef is required: static IPs, hostname and persistent disks come from an HCSMachineConfigPool entry (POOL-1)',
        rules: ['POOL-1'],
        failure: 'InvalidConfiguration',
      });
    }
    const pRef = poolRef(ns, hm.spec.configPoolRef!.name);
    const poolKey = `${ns}/${pRef.name}`;
    const pool = await getShared<HCSMachineConfigPool>(this.ctx.mgmt, pRef);
    if (!pool) {
      wait({ condition: COND_POOL, reason: 'PoolNotFound', message: `HCSMachineConfigPool ${pRef.name} not found`, requeueAfter: POLL_SLOW, warn: true, rules: ['POOL-1'] });
    }
    const bound = await bindEntry(this.ctx.mgmt, pRef, hm.metadata.name, run.status.hostname, now);
    const firstBinding = !run.status.hostname;
    // MD-3: a surge machine of a rollout cannot take the entry (and disks) of the machine it replaces.
    const surge = firstBinding ? await this.surgeCheck(this.ctx.mgmt, machine!, pool!) : undefined;
    if (!bound || 'none' in bound) {
      const set = this.waitingForEntry.get(poolKey) ?? new Set<string>();
      set.add(run.key);
      this.waitingForEntry.set(poolKey, set);
      const total = bound && 'none' in bound ? bound.total : pool!.spec.configs.length;
      const leaving = bound && 'none' in bound ? await this.leavingHolders(ns, bound.holders) : [];
      wait({
        condition: COND_POOL,
        reason: 'NoFreePoolEntry',
        message:
          `no free config pool entry in HCSMachineConfigPool ${pRef.name} (${total} entries, all bound to live machines${leaving.length ? `; ${leaving.join('; ')}` : ''}); add an entry to the pool before scaling up (POOL-2, POOL-3)` +
          (surge ? `. ${surgeMessage(surge, 'this surge machine waits for a free entry')}` : ''),
        rules: surge ? ['POOL-2', 'MD-3'] : ['POOL-2'],
        requeueAfter: POLL_SLOW,
        warn: true,
      });
    }
    const entry = bound as Exclude<typeof bound, undefined | { none: true }>;
    this.waitingForEntry.get(poolKey)?.delete(run.key);
    const hostname = entry.hostname;
    if (run.status.hostname !== hostname) {
      run.status.hostname = hostname;
      this.rep.info('hcsmachine.entry-bound', `HCSMachine ${run.key} bound to pool entry ${hostname} of ${pRef.name}`, { machine: run.key, pool: pRef.name, hostname }, ['POOL-4']);
      if (surge && (entry.config.persistentDisks ?? []).length > 0) {
        const message = surgeMessage(surge, `this surge machine took another entry, ${hostname}, and therefore ${hostname}'s persistent disks instead of those of the machine it replaces`);
        setCondition(run.conds, { type: COND_DISK_REUSE, status: 'False', reason: 'MaxSurgeTookAnotherEntry', message, severity: 'Warning' }, now);
        this.rep.error('hcsmachine.md3', `HCSMachine ${run.key}: ${message}`, { machine: run.key, pool: pRef.name, hostname }, ['MD-3']);
        await this.rep.k8sEvent(hm, 'Warning', 'MaxSurgeTookAnotherEntry', message, ['MD-3']);
      }
    }
    setCondition(run.conds, { type: COND_POOL, status: 'True', reason: 'Bound', message: `entry ${hostname}` }, now);
    const poolIps = entry.config.networks.map((n) => n.ipAddress);

    // Persistent disks (DISK-3): claim every accepted disk of the entry, creating missing volumes once.
    const disks = effectiveDisks(entry.config, entry.entry);
    // DISK-7 (cross-object: pool entry x template): a persistent mountPath must not also be an ephemeral data volume.
    if (!hm.spec.serverId) {
      const norm = (p: string): string => '/' + p.replace(/^\/+|\/+$/g, '').replace(/\/+/g, '/');
      const clashes = disks.flatMap((d) => (hm.spec.dataVolumes ?? []).map((v, i) => ({ d, i, v })).filter((x) => norm(x.v.mountPath) === norm(d.mountPath)));
      if (clashes.length) {
        wait({
          condition: COND_DISKS,
          reason: 'MountPathConflict',
          message: `DISK-7: ${clashes.map((c) => `pool ${pRef.name} entry ${hostname} persistentDisks[slot ${c.d.slot}].mountPath ${c.d.mountPath} is also dataVolumes[${c.i}].mountPath of the machine template`).join('; ')}; data on a dataVolume is lost on replacement, so remove the path from spec.template.spec.dataVolumes[] (keep it in the pool's persistentDisks[]). Nothing is created until then`,
          rules: ['DISK-7'],
          requeueAfter: POLL_SLOW,
          warn: true,
        });
      }
    }
    const claimed = new Map<number, ClaimedDisk>();
    for (const d of disks) {
      const known = entry.entry.persistentDisks?.find((x) => x.slot === d.slot)?.volumeId;
      let c: ClaimedDisk;
      try {
        c = await this.disks.claim({
          namespace: ns,
          cluster: clusterName,
          pool: pRef.name,
          hostname,
          slot: d.slot,
          size: d.size,
          type: d.type,
          availabilityZone: azOf(run),
          ...(known ? { knownVolumeId: known } : {}),
        });
      } catch (e) {
        const ce = asCloudError(e);
        if (!ce) throw e;
        const why = cloudErrorReason(ce.code, ce.status);
        wait({
          condition: COND_DISKS,
          reason: why?.reason ?? 'DiskClaimFailed',
          message: `cannot create persistent disk ${hostname}/pd${d.slot}: ${ce.code} ${ce.message}${why ? `; ${why.hint}` : ''}`,
          rules: ['DISK-3', ...ruleForCloudError(ce.code)],
          requeueAfter: POLL_SLOW,
          warn: true,
        });
      }
      claimed.set(d.slot, c!);
      for (const w of c!.warnings) this.rep.error('hcsmachine.disk-warning', `HCSMachine ${run.key}: ${w}`, { machine: run.key, hostname, slot: d.slot }, [w.slice(0, w.indexOf(':'))]);
      if (c!.created) {
        this.rep.info('hcsmachine.disk-created', `created persistent disk ${c!.name} (${c!.volumeId}) for ${hostname} slot ${d.slot}`, { machine: run.key, hostname, slot: d.slot, volumeId: c!.volumeId }, ['DISK-3']);
      }
      if (known !== c!.volumeId || c!.created) {
        await updateDiskStatus(this.ctx.mgmt, pRef, hostname, d.slot, { volumeId: c!.volumeId, phase: c!.created ? 'Creating' : diskPhaseOf({ status: c!.status }) }, now);
        if (!c!.created) this.rep.info('hcsmachine.disk-claimed', `claimed persistent disk ${c!.name} (${c!.volumeId}) for ${hostname} slot ${d.slot}`, { machine: run.key, hostname, slot: d.slot, volumeId: c!.volumeId }, ['DISK-3']);
      }
    }

    // Server: find (spec.serverId, exact name + uid), else create once.
    const providerID = providerIDFor(clusterName, hm.metadata.name);
    let server = await this.findServer(run);
    if (!server) {
      if (hm.spec.serverId) {
        wait({
          condition: COND_INSTANCE,
          reason: 'InstanceNotFound',
          message: `server ${hm.spec.serverId} no longer exists in HCS; the machine must be replaced`,
          failure: 'UpdateError',
          warn: true,
        });
      }
      const dataSecretName = machine!.spec.bootstrap.dataSecretName;
      if (!dataSecretName) {
        wait({ condition: COND_INSTANCE, reason: 'WaitingForBootstrapData', message: 'Machine.spec.bootstrap.dataSecretName is not set yet' });
      }
      server = await createServer({ ctx: this.ctx, cloud: this.cloud, rep: this.rep }, run, {
        ns,
        clusterName,
        hc: hc!,
        pool: pRef.name,
        hostname,
        config: entry.config,
        dataSecretName: dataSecretName!,
        version: machine!.spec.version,
        providerID,
        disks: disks.map((d) => ({ d, volumeId: claimed.get(d.slot)!.volumeId })),
        image: image ?? (await validateTemplate(this.cloud, run)),
      });
    }
    if (run.hm.spec.serverId !== server.id || run.hm.spec.providerID !== providerID) {
      run.hm = await this.ctx.mgmt.patch<HCSMachine>(refOf(run.hm), 'merge', { spec: { serverId: server.id, providerID } });
      this.rep.info('hcsmachine.server-bound', `HCSMachine ${run.key}: spec.serverId=${server.id}, spec.providerID=${providerID}`, { machine: run.key, serverId: server.id, providerID }, ['TPL-4']);
    }
    run.status.serverStatus = server.status;
    run.status.addresses = [...poolIps.map((ip) => ({ type: 'InternalIP', address: ip })), { type: 'Hostname', address: hostname }];

    if (server['OS-EXT-STS:task_state'] === 'deleting') {
      wait({ condition: COND_INSTANCE, reason: 'InstanceDeleting', message: `server ${server.id} is being deleted outside the provider`, requeueAfter: POLL, warn: true });
    }
    switch (server.status) {
      case 'BUILD':
        wait({
          condition: COND_INSTANCE,
          reason: 'InstanceProvisioning',
          message: `server ${server.name} (${server.id}) is BUILD`,
          requeueAfter: POLL,
          stuckAfterMs: STUCK_AFTER_MS.build,
          stuck: { reason: 'InstanceBuildStuck', message: `server ${server.name} (${server.id}) has been BUILD for over ${STUCK_AFTER_MS.build / 60_000}m; check the ECS create job and host capacity in HCS`, rules: ['OPS-2', 'HCS-1'] },
        });
        break;
      case 'ERROR':
        wait({
          condition: COND_INSTANCE,
          reason: 'InstanceError',
          message: `server ${server.id} is ERROR${server.fault?.message ? `: ${server.fault.message}` : ''}`,
          failure: 'CreateError',
          warn: true,
        });
        break;
      case 'ACTIVE':
        break;
      default:
        wait({ condition: COND_INSTANCE, reason: 'InstanceNotActive', message: `server ${server.id} is ${server.status}`, requeueAfter: POLL_SLOW, warn: true });
    }
    setCondition(run.conds, { type: COND_INSTANCE, status: 'True', reason: 'Active', message: `server ${server.id} ACTIVE` }, now);

    // Attach the persistent disks written into this server's cloud-init (DISK-3, DISK-6, DISK-9).
    // The volumes the claims above read in this reconcile are not read again (one ShowVolume per disk per reconcile).
    const read = new Map<string, CloudVolume>();
    for (const c of claimed.values()) if (c.volume) read.set(c.volumeId, c.volume);
    await this.attachDisks(run, server, pRef, hostname, read);
    setCondition(run.conds, { type: COND_DISKS, status: 'True', reason: 'Attached' }, now);

    if (!run.status.ready) {
      this.rep.info('hcsmachine.ready', `HCSMachine ${run.key} ready: server ${server.id} ACTIVE as ${hostname} (${poolIps.join(', ')})`, { machine: run.key, serverId: server.id, hostname, ips: poolIps });
    }
    run.status.ready = true;
    setCondition(run.conds, { type: COND_READY, status: 'True' }, now);
    return undefined;
  }

  private async findServer(run: Run): Promise<CloudServer | undefined> {
    const { hm } = run;
    if (hm.spec.serverId) return this.cloud.showServer(hm.spec.serverId);
    const candidates = (await this.cloud.listServers({ name: hm.metadata.name })).filter(
      (s) => s.name === hm.metadata.name && s.status !== 'DELETED' && (s.metadata?.[META_MACHINE_UID] === undefined || s.metadata[META_MACHINE_UID] === hm.metadata.uid),
    );
    if (candidates.length > 1) {
      this.rep.error('hcsmachine.duplicate-servers', `HCSMachine ${run.key}: ${candidates.length} servers named ${hm.metadata.name}: ${candidates.map((s) => s.id).join(', ')}; adopting the first`, { machine: run.key });
    }
    const s = candidates[0];
    if (s) this.rep.info('hcsmachine.server-adopted', `HCSMachine ${run.key}: found existing server ${s.id} by name and machine uid`, { machine: run.key, serverId: s.id });
    return s;
  }

  private async attachDisks(run: Run, server: CloudServer, pRef: ObjectRef, hostname: string, read: ReadonlyMap<string, CloudVolume>): Promise<void> {
    const ids = (server.metadata?.[META_PERSISTENT_VOLUMES] ?? '').split(',').filter(Boolean);
    const now = this.ctx.clock.now();
    const pending: string[] = [];
    let touched = false;
    for (const id of ids) {
      const v = read.get(id) ?? (await this.cloud.showVolume(id));
      const slot = Number(v?.metadata?.[META_SLOT] ?? NaN);
      const record = async (patch: Parameters<typeof updateDiskStatus>[4]): Promise<void> => {
        if (Number.isInteger(slot)) await updateDiskStatus(this.ctx.mgmt, pRef, hostname, slot, patch, now);
        touched = true;
      };
      if (!v) {
        wait({
          condition: COND_DISKS,
          reason: 'DiskMissing',
          message: `persistent disk ${id} written into the cloud-init of server ${server.id} no longer exists in EVS`,
          rules: ['DISK-9'],
          requeueAfter: POLL_SLOW,
          warn: true,
        });
      }
      const holders = attachedServers(v!);
      if (holders.includes(server.id) && v!.status === 'in-use') continue;
      const other = holders.find((h) => h !== server.id);
      if (other) {
        await record({ phase: diskPhaseOf(v), attachedServerId: other, message: `in use by server ${other}` });
        wait({
          condition: COND_DISKS,
          reason: 'DiskInUse',
          message: `DISK-9: persistent disk ${v!.name} (${id}) is ${v!.status} on server ${other}; waiting for it to be released (never force-detached)`,
          rules: ['DISK-9'],
          requeueAfter: POLL_SLOW,
          warn: true,
        });
      }
      if (v!.status === 'available') {
        try {
          await this.cloud.attachVolume(server.id, id);
        } catch (e) {
          const ce = asCloudError(e);
          if (!ce || isTransientCloudError(ce)) throw e;
          const rules = ruleForCloudError(ce.code);
          wait({
            condition: COND_DISKS,
            reason: 'DiskAttachFailed',
            message: `cannot attach persistent disk ${v!.name} (${id}) to server ${server.id}: ${ce.code} ${ce.message}`,
            rules: rules.length ? rules : ['DISK-3'],
            requeueAfter: POLL_SLOW,
            warn: true,
          });
        }
        this.rep.info('hcsmachine.disk-attach', `attaching persistent disk ${v!.name} (${id}) to server ${server.id}`, { machine: run.key, volumeId: id, serverId: server.id }, ['DISK-3']);
        await record({ phase: 'Attaching', attachedServerId: server.id, message: undefined });
      }
      pending.push(`${v!.name} (${v!.status === 'available' ? 'attaching' : v!.status})`);
    }
    if (touched) enqueuePoolRefresh(this.ctx, pRef.namespace ?? 'default', pRef.name);
    if (pending.length) {
      wait({
        condition: COND_DISKS,
        reason: 'DisksAttaching',
        message: `waiting for persistent disks: ${pending.join(', ')}`,
        requeueAfter: POLL_FAST,
        stuckAfterMs: STUCK_AFTER_MS.attach,
        stuck: { reason: 'DiskAttachStuck', message: `persistent disk attach to server ${server.id} has not finished for over ${STUCK_AFTER_MS.attach / 60_000}m: ${pending.join(', ')}; check the EVS volume and ECS job in HCS`, rules: ['OPS-2', 'DISK-3'] },
      });
    }
  }

  // ------------------------------------------------------------------ delete

  private async reconcileDelete(run: Run): Promise<Result | void> {
    const { hm } = run;
    const now = this.ctx.clock.now();
    const ns = hm.metadata.namespace ?? 'default';
    if (!hasFinalizer(hm, FINALIZER_HCSMACHINE)) return;
    run.status.ready = false;
    setCondition(run.conds, { type: COND_READY, status: 'False', reason: 'Deleting', severity: 'Info' }, now);
    const server = await this.findServer(run);
    if (server) {
      run.status.serverStatus = server.status;
      // 1. Detach persistent disks first: delete_volume=true would take every attached data volume with it (DISK-9).
      const pVols = await this.persistentVolumesOf(server);
      const busy: string[] = [];
      for (const v of pVols) {
        const onThis = attachedServers(v).includes(server.id);
        const dk = `${run.key}|${v.id}`;
        const prev = this.detachJobs.get(dk);
        if (v.status === 'in-use' && onThis) {
          // Still attached after a detach was asked for: the cloud gave that job up (e.g. the guest did not release
          // the disk and the job timed out). Say so with the cloud's reason, then ask again (DISK-9: wait, retry,
          // never delete the server with the disk attached nor force it off a live guest).
          let failed: string | undefined;
          if (prev) {
            const job = await this.cloud.showJob(prev.jobId).catch(() => undefined);
            if (job?.status === 'FAIL') {
              failed = `detach job ${prev.jobId} ended FAIL: ${job.error_code ?? '?'} ${job.fail_reason ?? ''}`.trim();
              const message = `persistent disk ${v.name} (${v.id}) is still attached to server ${server.id}: ${failed}; asking the cloud again (attempt ${prev.attempts + 1}). The server is not deleted while the disk is attached (DISK-9)`;
              this.rep.error('hcsmachine.disk-detach-job-failed', `HCSMachine ${run.key}: ${message}`, { machine: run.key, volumeId: v.id, serverId: server.id, jobId: prev.jobId, errorCode: job.error_code, failReason: job.fail_reason }, ['DISK-9', 'HCS-2']);
              await this.rep.k8sEvent(run.hm, 'Warning', 'DiskDetachFailed', message, ['DISK-9', 'HCS-2', 'OPS-2']);
            }
          }
          try {
            const job = await this.cloud.detachVolume(server.id, v.id);
            this.detachJobs.set(dk, { jobId: job.job_id, attempts: (prev?.attempts ?? 0) + 1, ...(failed ? { lastFailure: failed } : prev?.lastFailure ? { lastFailure: prev.lastFailure } : {}) });
            this.rep.info('hcsmachine.disk-detach', `detaching persistent disk ${v.name} (${v.id}) from server ${server.id} before deleting it${prev ? ` (attempt ${prev.attempts + 1})` : ''}`, { machine: run.key, volumeId: v.id, serverId: server.id }, ['DISK-9']);
          } catch (e) {
            const ce = asCloudError(e);
            if (!ce || isTransientCloudError(ce)) throw e;
            this.rep.error('hcsmachine.disk-detach-failed', `detach of ${v.id} from ${server.id} refused: ${ce.code} ${ce.message}`, { machine: run.key }, ['DISK-9']);
          }
          busy.push(`${v.name} (detaching${this.detachNote(dk)})`);
        } else if (v.status === 'detaching' || (v.status === 'attaching' && onThis) || (v.status === 'attaching' && !onThis && v.attachments?.length === 0)) {
          busy.push(`${v.name} (${v.status}${this.detachNote(dk)})`);
        } else {
          this.detachJobs.delete(dk);
        }
      }
      if (pVols.length && hm.spec.configPoolRef?.name) enqueuePoolRefresh(this.ctx, ns, hm.spec.configPoolRef.name);
      if (busy.length) {
        wait({
          condition: COND_INSTANCE,
          reason: 'DetachingDisks',
          message: `waiting for persistent disks to detach before deleting server ${server.id}: ${busy.join(', ')}`,
          rules: ['DISK-9'],
          requeueAfter: POLL_FAST,
          stuckAfterMs: STUCK_AFTER_MS.detach,
          stuck: {
            reason: 'DiskDetachStuck',
            message: `persistent disk detach from server ${server.id} has not finished for over ${STUCK_AFTER_MS.detach / 60_000}m: ${busy.join(', ')}; check the EVS volume and ECS job in HCS. The server is not deleted while a persistent disk is attached (DISK-9)`,
            rules: ['OPS-2', 'DISK-9'],
          },
        });
      }
      // 2. Delete the server with its root and data volumes (TPL-3); persistent disks are already detached.
      if (server['OS-EXT-STS:task_state'] !== 'deleting') {
        const res = await this.cloud.deleteServers([server.id], { deleteVolume: true });
        this.rep.info('hcsmachine.server-delete', `deleting server ${server.name} (${server.id}) with delete_volume=true (root and data volumes go, persistent disks stay)`, { machine: run.key, serverId: server.id, job: res.job_id }, ['TPL-3', 'DISK-9']);
      }
      wait({ condition: COND_INSTANCE, reason: 'InstanceDeleting', message: `waiting for server ${server.id} to be deleted`, severity: 'Info', requeueAfter: POLL });
    }
    // 3. Server gone: release the pool entry (POOL-4) and drop the finalizer.
    if (hm.spec.configPoolRef?.name) {
      const pRef = poolRef(ns, hm.spec.configPoolRef.name);
      const released = await releaseEntry(this.ctx.mgmt, pRef, hm.metadata.name);
      if (released.length) this.rep.info('hcsmachine.entry-released', `HCSMachine ${run.key}: released pool entry ${released.join(', ')} of ${pRef.name}`, { machine: run.key, pool: pRef.name, hostnames: released }, ['POOL-4']);
      enqueuePoolRefresh(this.ctx, ns, pRef.name);
      for (const k of this.takeWaiting(`${ns}/${pRef.name}`)) this.ctx.manager.enqueue(MACHINE_CONTROLLER, k);
    }
    const fins = (hm.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_HCSMACHINE);
    try {
      run.hm = await this.ctx.mgmt.update<HCSMachine>({ ...hm, metadata: { ...hm.metadata, finalizers: fins } });
    } catch (e) {
      if (!isConflict(e)) throw e;
      const cur = await this.ctx.mgmt.get<HCSMachine>(refOf(hm));
      if (cur) run.hm = await this.ctx.mgmt.update<HCSMachine>({ ...cur, metadata: { ...cur.metadata, finalizers: (cur.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_HCSMACHINE) } });
    }
    run.hm = { ...run.hm, metadata: { ...run.hm.metadata, finalizers: fins } };
    for (const k of [...this.detachJobs.keys()]) if (k.startsWith(`${run.key}|`)) this.detachJobs.delete(k);
    this.rep.info('hcsmachine.deleted', `HCSMachine ${run.key}: server gone, finalizer removed`, { machine: run.key });
    return undefined;
  }

  /** Persistent volumes attached to (or attaching to) `server`. */
  private async persistentVolumesOf(server: CloudServer): Promise<CloudVolume[]> {
    const listed = (server.metadata?.[META_PERSISTENT_VOLUMES] ?? '').split(',').filter(Boolean);
    const attached = new Set((server['os-extended-volumes:volumes_attached'] ?? []).map((v) => v.id));
    const out = new Map<string, CloudVolume>();
    for (const id of listed) {
      const v = await this.cloud.showVolume(id);
      if (v && (attached.has(id) || attachedServers(v).includes(server.id) || v.status === 'attaching' || v.status === 'detaching')) out.set(id, v);
    }
    // Persistent volumes attached by hand (not in the cloud-init list) must not be deleted with the server either.
    const cluster = server.metadata?.[META_CLUSTER];
    if (cluster) {
      // EVS's server_id filter: only volumes attached (or attaching) to this server, not the whole cluster's.
      for (const v of await this.cloud.listVolumes({ metadata: { [META_CLUSTER]: cluster, [META_PERSISTENT]: 'true' }, serverId: server.id })) {
        if (!out.has(v.id) && attachedServers(v).includes(server.id)) out.set(v.id, v);
      }
    }
    return [...out.values()];
  }

  // ------------------------------------------------------------------ status

  private async applyWait(run: Run, wait: Wait): Promise<Result | void> {
    const now = this.ctx.clock.now();
    const prev = getCondition(run.conds, wait.condition);
    let w = wait;
    const sk = `${run.key}|${w.condition}`;
    if (w.stuck && w.stuckAfterMs !== undefined) {
      const cur = this.waitingSince.get(sk);
      const since = cur && cur.reason === w.reason ? cur.since : now;
      this.waitingSince.set(sk, { reason: w.reason, since });
      if (prev?.reason === w.stuck.reason || now - since >= w.stuckAfterMs) {
        w = { ...w, reason: w.stuck.reason, message: w.stuck.message, rules: w.stuck.rules, warn: true };
      }
    } else {
      this.waitingSince.delete(sk);
    }
    const changed = !prev || prev.status !== 'False' || prev.reason !== w.reason || prev.message !== w.message;
    setCondition(run.conds, { type: w.condition, status: 'False', reason: w.reason, message: w.message, ...(w.severity ? { severity: w.severity } : {}) }, now);
    if (!isDeleting(run.hm)) {
      setCondition(run.conds, { type: COND_READY, status: 'False', reason: w.reason, message: w.message, ...(w.severity ? { severity: w.severity } : {}) }, now);
    }
    if (w.failure) {
      run.status.failureReason = w.failure;
      run.status.failureMessage = w.message;
      run.status.ready = false;
    }
    if (changed) {
      const kv = { machine: run.key, condition: w.condition, reason: w.reason };
      if (w.warn || w.failure) this.rep.error('hcsmachine.waiting', `HCSMachine ${run.key}: ${w.reason}: ${w.message}`, kv, w.rules);
      else this.rep.info('hcsmachine.waiting', `HCSMachine ${run.key}: ${w.reason}: ${w.message}`, kv, w.rules);
      if (w.warn || w.failure) await this.rep.k8sEvent(run.hm, 'Warning', w.reason, w.message, w.rules);
    }
    return w.requeueAfter !== undefined ? { requeueAfter: w.requeueAfter } : undefined;
  }

  private async saveStatus(run: Run): Promise<void> {
    const ref = refOf(run.hm);
    for (let i = 0; i < 8; i++) {
      // Read only (the write below is a new top-level object with our status): no private copy needed.
      const cur = await getShared<HCSMachine>(this.ctx.mgmt, ref);
      if (!cur) return;
      // Exactly the JSON-text comparison, without building the two strings.
      if (sameJsonText(cur.status ?? {}, run.status)) return;
      try {
        await updateStatusShared<HCSMachine>(this.ctx.mgmt, { ...cur, status: run.status } as HCSMachine);
        return;
      } catch (e) {
        if (!isConflict(e)) throw e;
      }
    }
  }
}

function refOf(hm: HCSMachine): ObjectRef {
  return { kind: 'HCSMachine', namespace: hm.metadata.namespace, name: hm.metadata.name };
}
