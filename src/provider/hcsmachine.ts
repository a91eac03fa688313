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
import { getShared, updateStatusShared } from '../kube/client.js';
import { LABEL_CLUSTER_NAME, type Cluster, type Condition, type Machine } from '../api/capi.js';
import { secretValue, type Secret } from '../api/core.js';
import {
  FINALIZER_HCSMACHINE,
  type HCSCluster,
  type HCSMachine,
  type HCSMachineConfigPool,
  type HCSMachineStatus,
  type PersistentDisk,
  type PoolConfig,
  type PoolNetwork,
} from '../api/hcs.js';
import { issueCertificate } from '../pki/index.js';
import { isConflict } from '../kube/errors.js';
import { hasFinalizer, isDeleting, type ObjectRef } from '../kube/types.js';
import type { ControllerContext } from '../runtime/context.js';
import type { Controller, Result } from '../runtime/manager.js';
import { asCloudError, attachedServers, type CloudApi, type CloudImage, type CloudServer, type CloudSubnet, type CloudVolume } from './cloud-api.js';
import { CloudInitError, injectCloudInit } from './cloudinit.js';
import type { ClaimedDisk, DiskClaimer } from './disks.js';
import {
  META_CLUSTER,
  META_HOSTNAME,
  META_K8S_VERSION,
  META_MACHINE,
  META_MACHINE_UID,
  META_NAMESPACE,
  META_PERSISTENT,
  META_PERSISTENT_VOLUMES,
  META_POOL,
  providerIDFor,
} from './labels.js';
import { COND_DISK_REUSE, surgeContext, surgeMessage } from './surge.js';
import { bindEntry, enqueuePoolRefresh, diskPhaseOf, effectiveDisks, poolRef, releaseEntry, sameJsonText, updateDiskStatus } from './pool.js';
import { Reporter, getCondition, ipInCidr, setCondition } from './util.js';

export const MACHINE_CONTROLLER = 'hcsmachine';

/** Image metadata key with the image's Kubernetes version, for the guest (BOOT-4). */
export const META_IMAGE_NAME = 'hcs.io/image';
export const META_IMAGE_K8S_VERSION = 'hcs.io/image-kubernetes-version';

const POLL_FAST = 5_000;
const POLL = 10_000;
const POLL_SLOW = 30_000;

/** Condition types on HCSMachine. */
export const COND_POOL = 'PoolEntryBound';
export const COND_DISKS = 'PersistentDisksReady';
export const COND_INSTANCE = 'InstanceReady';
export const COND_READY = 'Ready';

export function clientTokenFor(uid: string): string {
  return `hcsm-${uid}`;
}

interface Wait {
  condition: string;
  reason: string;
  message: string;
  rules?: string[];
  requeueAfter?: number;
  /** Also emit a Warning k8s Event (stuck states); only when the condition changes. */
  warn?: boolean;
  /** Terminal: set failureReason/failureMessage (CAPI marks the Machine Failed). */
  failure?: string;
  severity?: Condition['severity'];
  /** OPS-2: after this long in the same reason, report `stuck` instead (Warning event, condition reason). */
  stuckAfterMs?: number;
  stuck?: { reason: string; message: string; rules: string[] };
}

/** How long a transition may take before the machine reports it as stuck (OPS-2). */
export const STUCK_AFTER_MS = { detach: 5 * 60_000, attach: 5 * 60_000, build: 15 * 60_000 };

class WaitSignal {
  constructor(readonly wait: Wait) {}
}

/** Mutable state of one reconcile. */
interface Run {
  key: string;
  hm: HCSMachine;
  status: HCSMachineStatus;
  conds: Condition[];
}

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
          requeueAfter: ce.status >= 500 ? POLL : 60_000,
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
    if (!ownerRef) this.wait({ condition: COND_INSTANCE, reason: 'WaitingForOwner', message: 'waiting for the owning Machine to set an ownerReference' });
    const machine = await getShared<Machine>(this.ctx.mgmt, { kind: 'Machine', namespace: ns, name: ownerRef!.name });
    if (!machine) this.wait({ condition: COND_INSTANCE, reason: 'WaitingForOwner', message: `owner Machine ${ownerRef!.name} not found`, requeueAfter: POLL });
    const clusterName = hm.metadata.labels?.[LABEL_CLUSTER_NAME] ?? machine!.spec.clusterName;
    if (!clusterName) this.wait({ condition: COND_INSTANCE, reason: 'WaitingForCluster', message: `no ${LABEL_CLUSTER_NAME} label and no Machine.spec.clusterName` });
    const cluster = await getShared<Cluster>(this.ctx.mgmt, { kind: 'Cluster', namespace: ns, name: clusterName });
    if (!cluster) this.wait({ condition: COND_INSTANCE, reason: 'WaitingForCluster', message: `Cluster ${clusterName} not found`, requeueAfter: POLL });
    const hcName = cluster!.spec.infrastructureRef?.kind === 'HCSCluster' ? cluster!.spec.infrastructureRef.name : clusterName;
    const hc = await getShared<HCSCluster>(this.ctx.mgmt, { kind: 'HCSCluster', namespace: ns, name: hcName });
    if (!hc?.status?.ready) {
      const why = hc?.status?.conditions?.find((c) => c.type === 'NetworkReady' && c.status === 'False')?.message;
      this.wait({
        condition: COND_INSTANCE,
        reason: 'WaitingForClusterInfrastructure',
        message: hc ? `HCSCluster ${hcName} is not ready${why ? `: ${why}` : ''}` : `HCSCluster ${hcName} not found`,
        requeueAfter: POLL,
        ...(why ? { rules: ['NET-4'] } : {}),
      });
    }

    // Template values before anything is created for this machine.
    const image = hm.spec.serverId ? undefined : await this.validateTemplate(run);

    // Pool entry (POOL-2, POOL-4).
    if (!hm.spec.configPoolRef?.name) {
      this.wait({
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
      this.wait({ condition: COND_POOL, reason: 'PoolNotFound', message: `HCSMachineConfigPool ${pRef.name} not found`, requeueAfter: POLL_SLOW, warn: true, rules: ['POOL-1'] });
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
      this.wait({
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
        this.wait({
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
          availabilityZone: hm.spec.availabilityZone,
          ...(known ? { knownVolumeId: known } : {}),
        });
      } catch (e) {
        const ce = asCloudError(e);
        if (!ce) throw e;
        const why = cloudErrorReason(ce.code, ce.status);
        this.wait({
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
        await updateDiskStatus(this.ctx.mgmt, pRef, hostname, d.slot, { volumeId: c!.volumeId, phase: c!.created ? 'Creating' : diskPhaseOf({ id: c!.volumeId, name: c!.name, status: c!.status }) }, now);
        if (!c!.created) this.rep.info('hcsmachine.disk-claimed', `claimed persistent disk ${c!.name} (${c!.volumeId}) for ${hostname} slot ${d.slot}`, { machine: run.key, hostname, slot: d.slot, volumeId: c!.volumeId }, ['DISK-3']);
      }
    }

    // Server: find (spec.serverId, exact name + uid), else create once.
    const providerID = providerIDFor(clusterName, hm.metadata.name);
    let server = await this.findServer(run);
    if (!server) {
      if (hm.spec.serverId) {
        this.wait({
          condition: COND_INSTANCE,
          reason: 'InstanceNotFound',
          message: `server ${hm.spec.serverId} no longer exists in HCS; the machine must be replaced`,
          failure: 'UpdateError',
          warn: true,
        });
      }
      const dataSecretName = machine!.spec.bootstrap.dataSecretName;
      if (!dataSecretName) {
        this.wait({ condition: COND_INSTANCE, reason: 'WaitingForBootstrapData', message: 'Machine.spec.bootstrap.dataSecretName is not set yet' });
      }
      server = await this.createServer(run, {
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
        image: image ?? (await this.validateTemplate(run)),
      });
    }
    if (run.hm.spec.serverId !== server.id || run.hm.spec.providerID !== providerID) {
      run.hm = await this.ctx.mgmt.patch<HCSMachine>(refOf(run.hm), 'merge', { spec: { serverId: server.id, providerID } });
      this.rep.info('hcsmachine.server-bound', `HCSMachine ${run.key}: spec.serverId=${server.id}, spec.providerID=${providerID}`, { machine: run.key, serverId: server.id, providerID }, ['TPL-4']);
    }
    run.status.serverStatus = server.status;
    run.status.addresses = [...poolIps.map((ip) => ({ type: 'InternalIP', address: ip })), { type: 'Hostname', address: hostname }];

    if (server['OS-EXT-STS:task_state'] === 'deleting') {
      this.wait({ condition: COND_INSTANCE, reason: 'InstanceDeleting', message: `server ${server.id} is being deleted outside the provider`, requeueAfter: POLL, warn: true });
    }
    switch (server.status) {
      case 'BUILD':
        this.wait({
          condition: COND_INSTANCE,
          reason: 'InstanceProvisioning',
          message: `server ${server.name} (${server.id}) is BUILD`,
          requeueAfter: POLL,
          stuckAfterMs: STUCK_AFTER_MS.build,
          stuck: { reason: 'InstanceBuildStuck', message: `server ${server.name} (${server.id}) has been BUILD for over ${STUCK_AFTER_MS.build / 60_000}m; check the ECS create job and host capacity in HCS`, rules: ['OPS-2', 'HCS-1'] },
        });
        break;
      case 'ERROR':
        this.wait({
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
        this.wait({ condition: COND_INSTANCE, reason: 'InstanceNotActive', message: `server ${server.id} is ${server.status}`, requeueAfter: POLL_SLOW, warn: true });
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

  private async createServer(
    run: Run,
    p: {
      ns: string;
      clusterName: string;
      hc: HCSCluster;
      pool: string;
      hostname: string;
      config: PoolConfig;
      dataSecretName: string;
      version: string | undefined;
      providerID: string;
      disks: { d: PersistentDisk; volumeId: string }[];
      image: CloudImage;
    },
  ): Promise<CloudServer> {
    const image = p.image;
    const { hm } = run;
    const spec = hm.spec;
    const now = this.ctx.clock.now();
    const secret = await this.ctx.mgmt.get<Secret>({ kind: 'Secret', namespace: p.ns, name: p.dataSecretName });
    const bootstrap = secret ? secretValue(secret, 'value') : undefined;
    if (!bootstrap) this.wait({ condition: COND_INSTANCE, reason: 'WaitingForBootstrapData', message: `bootstrap data secret ${p.dataSecretName} not found or empty`, requeueAfter: POLL });
    const caSecret = await this.ctx.mgmt.get<Secret>({ kind: 'Secret', namespace: p.ns, name: `${p.clusterName}-ca` });
    const caCert = caSecret ? secretValue(caSecret, 'tls.crt') : undefined;
    const caKey = caSecret ? secretValue(caSecret, 'tls.key') : undefined;
    if (!caCert || !caKey) {
      this.wait({ condition: COND_INSTANCE, reason: 'WaitingForClusterCA', message: `cluster CA secret ${p.clusterName}-ca (tls.crt, tls.key) not found; the kubelet certificate cannot be issued`, requeueAfter: POLL, rules: ['BOOT-2'] });
    }

    const nics = this.resolveNics(p.hc, p.config, await this.cloud.listSubnets());

    // Cloud-init with the kubelet certificate (BOOT-2).
    const ips = p.config.networks.map((n) => n.ipAddress);
    const cert = await issueCertificate(
      { certPem: caCert!, keyPem: caKey! },
      { commonName: `system:node:${p.hostname}`, organization: 'system:nodes', dnsNames: [p.hostname], ips },
      this.ctx.rng,
      now,
    );
    let userData: string;
    try {
      userData = injectCloudInit(bootstrap!, {
        hostname: p.hostname,
        providerID: p.providerID,
        kubeletCertPem: cert.certPem,
        kubeletKeyPem: cert.keyPem,
        dataVolumes: spec.dataVolumes ?? [],
        persistentDisks: p.disks.map(({ d, volumeId }) => ({
          slot: d.slot,
          volumeId,
          mountPath: d.mountPath,
          format: d.format,
          ...(d.mountOptions ? { mountOptions: d.mountOptions } : {}),
        })),
      });
    } catch (e) {
      if (!(e instanceof CloudInitError)) throw e;
      this.wait({ condition: COND_INSTANCE, reason: 'InvalidBootstrapData', message: `BOOT-2: ${e.message}`, rules: ['BOOT-2'], requeueAfter: POLL_SLOW, warn: true });
    }
    const metadata: Record<string, string> = {
      [META_CLUSTER]: p.clusterName,
      [META_NAMESPACE]: p.ns,
      [META_MACHINE]: hm.metadata.name,
      [META_MACHINE_UID]: hm.metadata.uid ?? '',
      [META_HOSTNAME]: p.hostname,
      [META_POOL]: p.pool,
      [META_PERSISTENT_VOLUMES]: p.disks.map((x) => x.volumeId).join(','),
      [META_IMAGE_NAME]: image.name,
      ...(image.__support_kubernetes_version ? { [META_IMAGE_K8S_VERSION]: image.__support_kubernetes_version } : {}),
      ...(p.version ? { [META_K8S_VERSION]: p.version } : {}),
    };
    const token = clientTokenFor(hm.metadata.uid ?? hm.metadata.name);
    let res: { job_id: string; serverIds: string[] };
    try {
      res = await this.cloud.createServers(
        {
          server: {
            name: hm.metadata.name,
            imageRef: image.id,
            flavorRef: spec.flavorName,
            availability_zone: spec.availabilityZone,
            vpcid: nics[0]!.vpcId,
            nics: nics.map((n) => ({ subnet_id: n.subnetId, ip_address: n.ip })),
            root_volume: { volumetype: spec.rootVolume?.type ?? 'SSD', size: spec.rootVolume?.size ?? 40 },
            ...(spec.dataVolumes?.length ? { data_volumes: spec.dataVolumes.map((d) => ({ volumetype: d.type, size: d.size })) } : {}),
            user_data: Buffer.from(userData!, 'utf8').toString('base64'),
            metadata,
          },
        },
        token,
      );
    } catch (e) {
      const ce = asCloudError(e);
      if (!ce || ce.status >= 500) throw e;
      const rules = ruleForCloudError(ce.code);
      const why = cloudErrorReason(ce.code, ce.status);
      this.wait({
        condition: COND_INSTANCE,
        reason: why?.reason ?? 'InstanceCreateFailed',
        message: `${rules.length ? `${rules.join(', ')}: ` : ''}HCS refused to create server ${hm.metadata.name}: ${ce.code} ${ce.message}${why ? `; ${why.hint}` : ''}`,
        rules,
        requeueAfter: 60_000,
        warn: true,
      });
    }
    this.rep.info(
      'hcsmachine.server-created',
      `HCSMachine ${run.key}: requested server ${hm.metadata.name} (image ${image.name}, flavor ${spec.flavorName}, az ${spec.availabilityZone}, ips ${ips.join(',')}, persistent disks ${p.disks.map((x) => `pd${x.d.slot}=${x.volumeId}`).join(',') || 'none'}), job ${res!.job_id}`,
      { machine: run.key, job: res!.job_id, serverIds: res!.serverIds, clientToken: token },
      ['BOOT-2', 'TPL-3'],
    );
    const id = res!.serverIds[0];
    const s = id ? await this.cloud.showServer(id) : undefined;
    if (!s) {
      // The job has not published the server id yet: the next reconcile finds the server by name.
      this.wait({ condition: COND_INSTANCE, reason: 'InstanceProvisioning', message: `create job ${res!.job_id} running`, requeueAfter: POLL_FAST });
    }
    return s!;
  }

  /** Image (TPL-6), flavor and availability zone (TPL-2): checked before anything is created for the machine. */
  private async validateTemplate(run: Run): Promise<CloudImage> {
    const spec = run.hm.spec;
    const images = (await this.cloud.listImages({ name: spec.imageName })).filter((i) => i.name === spec.imageName);
    if (images.length === 0) {
      this.wait({
        condition: COND_INSTANCE,
        reason: 'ImageNotFound',
        message: `TPL-6: image "${spec.imageName}" (spec.imageName) does not exist in HCS; import it or point the template at an existing image`,
        rules: ['TPL-6'],
        requeueAfter: 60_000,
        warn: true,
      });
    }
    const image = images[0]!;
    let flavorOk = false;
    let flavorList: string[] = [];
    try {
      flavorList = (await this.cloud.listFlavors(spec.availabilityZone)).map((f) => f.id);
      flavorOk = flavorList.includes(spec.flavorName) || flavorList.length === 0;
    } catch (e) {
      const ce = asCloudError(e);
      if (!ce || ce.status >= 500) throw e;
      this.wait({
        condition: COND_INSTANCE,
        reason: 'InvalidAvailabilityZone',
        message: `TPL-2: spec.availabilityZone "${spec.availabilityZone}" is not a provider API value: ${ce.message}`,
        rules: ['TPL-2'],
        failure: 'InvalidConfiguration',
        warn: true,
      });
    }
    if (!flavorOk) {
      this.wait({
        condition: COND_INSTANCE,
        reason: 'InvalidFlavor',
        message: `TPL-2: spec.flavorName "${spec.flavorName}" is not offered in availability zone ${spec.availabilityZone} (valid API values: ${flavorList.join(', ')}); UI display names are not accepted`,
        rules: ['TPL-2'],
        failure: 'InvalidConfiguration',
        warn: true,
      });
    }
    return image;
  }

  private resolveNics(hc: HCSCluster, cfg: PoolConfig, cloudSubnets: CloudSubnet[]): { subnetId: string; vpcId: string; ip: string }[] {
    const listed = hc.spec.network?.subnets ?? [];
    const resolved = hc.status?.network?.subnets ?? [];
    if (cfg.networks.length === 0) {
      this.wait({ condition: COND_INSTANCE, reason: 'InvalidPoolEntry', message: `pool entry ${cfg.hostname} has no networks[]`, rules: ['POOL-1'], requeueAfter: POLL_SLOW, warn: true });
    }
    return cfg.networks.map((n: PoolNetwork, i) => {
      const field = `pool entry ${cfg.hostname} networks[${i}]`;
      const fail = (rule: string, message: string): never =>
        this.wait({ condition: COND_INSTANCE, reason: 'SubnetNotResolved', message: `${rule}: ${field}: ${message}`, rules: [rule], requeueAfter: POLL_SLOW, warn: true });
      if (n.subnetName && n.subnetId) fail('NET-1', 'set subnetName or subnetId, not both');
      if (n.subenetName && n.subnetName && n.subenetName !== n.subnetName) fail('NET-2', `legacy subenetName "${n.subenetName}" differs from subnetName "${n.subnetName}"`);
      const name = n.subnetName ?? n.subenetName;
      let sub: CloudSubnet | undefined;
      if (n.subnetId) {
        sub = cloudSubnets.find((s) => s.id === n.subnetId || s.neutron_subnet_id === n.subnetId);
        if (!sub) fail('NET-4', `subnetId ${n.subnetId} does not exist in HCS`);
        if (name && sub!.name !== name) fail('NET-3', `subenetName "${name}" and subnetId ${n.subnetId} select different subnets`);
      } else if (name) {
        if (!listed.some((s) => s.name === name) && !resolved.some((s) => s.name === name)) {
          fail('NET-4', `subnet "${name}" is not listed in HCSCluster ${hc.metadata.name} spec.network.subnets; add it (as a full object with its id on a Ready cluster, NET-5) before creating or scaling the pool`);
        }
        const r = resolved.find((s) => s.name === name);
        if (!r?.id) fail('NET-5', `subnet "${name}" is listed in HCSCluster ${hc.metadata.name} but not resolved (see its NetworkReady condition)`);
        sub = cloudSubnets.find((s) => s.id === r!.id);
        if (!sub) fail('NET-4', `subnet "${name}" (${r!.id}) does not exist in HCS`);
      } else {
        fail('NET-1', 'needs a subnet selector (subnetName or subnetId)');
      }
      const inside = ipInCidr(n.ipAddress, sub!.cidr);
      if (inside === false) fail('NET-7', `ipAddress ${n.ipAddress} is outside subnet ${sub!.name} (${sub!.cidr})`);
      return { subnetId: sub!.id, vpcId: sub!.vpc_id, ip: n.ipAddress };
    });
  }

  private async attachDisks(run: Run, server: CloudServer, pRef: ObjectRef, hostname: string, read: ReadonlyMap<string, CloudVolume>): Promise<void> {
    const ids = (server.metadata?.[META_PERSISTENT_VOLUMES] ?? '').split(',').filter(Boolean);
    const now = this.ctx.clock.now();
    const pending: string[] = [];
    let touched = false;
    for (const id of ids) {
      const v = read.get(id) ?? (await this.cloud.showVolume(id));
      const slot = Number(v?.metadata?.['hcs.io/slot'] ?? NaN);
      const record = async (patch: Parameters<typeof updateDiskStatus>[4]): Promise<void> => {
        if (Number.isInteger(slot)) await updateDiskStatus(this.ctx.mgmt, pRef, hostname, slot, patch, now);
        touched = true;
      };
      if (!v) {
        this.wait({
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
        this.wait({
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
          if (!ce || ce.status >= 500) throw e;
          const rules = ruleForCloudError(ce.code);
          this.wait({
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
      this.wait({
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
            if (!ce || ce.status >= 500) throw e;
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
        this.wait({
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
      this.wait({ condition: COND_INSTANCE, reason: 'InstanceDeleting', message: `waiting for server ${server.id} to be deleted`, severity: 'Info', requeueAfter: POLL });
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

  private wait(w: Wait): never {
    throw new WaitSignal(w);
  }

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

/** SPEC rules a cloud error code relates to (mock-hcs codes follow the real services' naming). */
export function ruleForCloudError(code: string): string[] {
  switch (code) {
    case 'Ecs.0031':
      return ['TPL-6'];
    case 'Ecs.0023':
      return ['TPL-2'];
    case 'Ecs.0010':
    case 'Ecs.0013':
    case 'Ecs.0039':
      return ['NET-7'];
    case 'Ecs.0020':
    case 'Ecs.0021':
      return ['NET-4'];
    case 'Ecs.0057':
      return ['DISK-9'];
    case 'Ecs.0062':
      return ['DISK-3'];
    case 'Ecs.0319':
    case 'Ecs.0001':
    case 'EVS.0001':
      return ['OPS-2', 'HCS-6'];
    case 'APIGW.0301':
    case 'Ecs.0003':
      return ['OPS-2', 'HCS-5'];
    default:
      return [];
  }
}

/**
 * Condition reason and operator hint for a cloud refusal (OPS-2: every stuck
 * state says why). Unknown codes keep the caller's generic reason.
 */
export function cloudErrorReason(code: string, status: number): { reason: string; hint: string } | undefined {
  if (code === 'Ecs.0319') return { reason: 'InsufficientCapacity', hint: 'HCS has no capacity for this flavor in this availability zone; retried every minute (choose another flavor/AZ or free capacity)' };
  if (code === 'Ecs.0001' || code === 'EVS.0001') return { reason: 'QuotaExceeded', hint: 'the project quota is exhausted; retried every minute (raise the quota or remove unused servers/volumes)' };
  if (code === 'Ecs.0010') return { reason: 'IPAddressInUse', hint: 'the pool entry\'s static IP is used by another port (NET-7); free it or change the entry' };
  if (code === 'Ecs.0039' || code === 'Ecs.0013') return { reason: 'IPAddressInvalid', hint: 'the static IP is not usable in the subnet (NET-7)' };
  if (status === 401 || code === 'APIGW.0301') return { reason: 'CloudAuthenticationFailed', hint: 'HCS rejected the provider\'s credentials (AK/SK, signature or clock); check the identity secret' };
  if (status === 403) return { reason: 'CloudPermissionDenied', hint: 'the credentials are valid but not allowed this operation or project; check the account\'s permissions' };
  if (status >= 500) return { reason: 'CloudError', hint: 'HCS returned a server error; retried' };
  return undefined;
}
