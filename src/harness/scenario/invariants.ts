/**
 * Continuous invariants (checked at every quiescent instant of a run and at
 * its end). Each violation is reported once, with the event that most
 * recently touched the offending resource — the likely cause.
 */
import type { HCSMachine, HCSMachineConfigPool } from '../../product/api/hcs.js';
import { LABEL_DEPLOYMENT_NAME, type Machine, type MachineDeployment } from '../../product/api/capi.js';
import { maxSurge, maxUnavailable } from '../../world/capi/mdutil.js';
import { nodeReady, secretValue, type Node, type Secret } from '../../product/api/core.js';
import { verifyLeaf } from '../../core/pki/index.js';

const KUBELET_CERT = '/etc/kubernetes/pki/kubelet.crt';
const KUBELET_KEY = '/etc/kubernetes/pki/kubelet.key';
/** The kubelets' group (BOOT-2: the kubelet certificate's O). */
const NODES_GROUP = 'system:nodes';
import type { LogEvent } from '../../core/events.js';
import { getShared, listShared } from '../../core/kube/client.js';
import type { StateSource } from './world.js';
import { StrandedDataTracker } from './stranded.js';
import { DiskReuseTracker } from './disk-reuse.js';
import { KcpScaleDownTracker } from './kcp-scale-down.js';
import { DrainOrderTracker } from './drain-order.js';
import { MdRolloutPlanTracker } from './md-rollout-plan.js';
import { ControlPlaneNodesTracker } from './control-plane-nodes.js';
import { PoolStatusTracker } from './pool-status.js';
import { CpPlacementTracker } from './cp-placement.js';
import { NodeServerTracker } from './node-server.js';
import { StuckTimingTracker } from './stuck-timing.js';
import { serverSpecFindings } from './server-spec.js';
import { CONTRACT, reference, type Classification } from './contract.js';
import { META_PERSISTENT } from '../../product/api/metadata.js';

/** The reference provider names each server after its HCSMachine; the contract identifies a server by spec.serverId only. */
const STUCK_TIMING_TIER = reference('the 5/5/15 minute thresholds after which a wait is reported stuck are the reference provider\'s (docs/provider.md "Stuck states")');
const SERVER_NAME_TIER = reference('the server name equal to the HCSMachine name is the reference provider\'s naming; the contract identifies the server by HCSMachine.spec.serverId');

/**
 * The rules the continuous invariants check, i.e. what `expectViolations` may
 * name (a bug-reproduction scenario expects them to break).
 */
export const INVARIANT_RULES = ['DISK-3', 'DISK-6', 'DISK-8', 'DISK-9', 'POOL-4', 'POOL-5', 'TPL-2', 'TPL-3', 'TPL-4', 'BOOT-1', 'BOOT-2', 'BOOT-3', 'BOOT-4', 'NET-7', 'MD-1', 'MD-3', 'MD-4', 'KCP-2', 'KCP-3', 'OVN-2', 'HCS-1'] as const;

export interface Violation {
  rule: string;
  /** Stable key so a violation is reported once. */
  key: string;
  message: string;
  /** Virtual time it was first seen. */
  at: number;
  /** seq of the event that most recently touched the resource. */
  causeSeq?: number;
  cause?: string;
  /** The scenario step whose action is the likely cause (when it is one: an edit, kubectl, apply, fault, crash, write). */
  causeStep?: number;
}

/** A reference finding a contract-only monitor set aside. */
export interface SkippedFinding {
  rule: string;
  key: string;
  message: string;
  why: string;
}

interface Finding {
  /** Contract or reference (src/harness/scenario/contract.ts): conformance runs skip reference findings. */
  tier: Classification;
  rule: string;
  key: string;
  message: string;
  /** Ids (volume, server, machine names) to find the causing event by. */
  refs: string[];
}

const PERSISTENT = META_PERSISTENT;

/** What the monitor remembers of a MachineDeployment between checks (rollout bounds, MD-1). */
interface MdTrack {
  template: string;
  replicas: number;
  /** Fully rolled out and available at the last check. */
  stable: boolean;
  /** A template rollout from a stable state is in progress: the bounds apply. */
  enforcing: boolean;
  /** A template rollout (from any state) is in progress with the replicas unchanged: the deletion bound applies. */
  rolling: boolean;
  /** Machines that were available (not deleting, Node Ready) at the last check. */
  available: Set<string>;
}

export class InvariantMonitor {
  private readonly violations = new Map<string, Violation>();
  /** Persistent volumes ever seen: id -> name. */
  private readonly persistentSeen = new Map<string, string>();
  private readonly mds = new Map<string, MdTrack>();
  private readonly stranded: StrandedDataTracker;
  private readonly diskReuse: DiskReuseTracker;
  private readonly kcpScaleDown: KcpScaleDownTracker;
  private readonly drainOrder: DrainOrderTracker;
  private readonly mdRolloutPlan: MdRolloutPlanTracker;
  private readonly controlPlaneNodes: ControlPlaneNodesTracker;
  private readonly poolStatus: PoolStatusTracker;
  private readonly cpPlacement: CpPlacementTracker;
  private readonly nodeServer: NodeServerTracker;
  private readonly stuckTiming: StuckTimingTracker;

  /** Reference findings a contract-only monitor did not count (by key): conformance mode marks them skipped. */
  private readonly skipped = new Map<string, SkippedFinding>();

  constructor(
    private readonly world: StateSource,
    private readonly events: () => readonly LogEvent[],
    /**
     * contractOnly: reference findings are set aside as skipped, not violations (hcs-testbed conformance).
     * fromSnapshot: the state did not start empty but was loaded (a replay, src/harness/capture/replay.ts): what it
     * serves at the first check is the baseline the history-keeping checks compare with.
     * off: statements left out, by name (RunOptions.invariantsOff).
     * stampSkewMs: TestbedHandle.stampSkewMs.
     */
    private readonly opts: { contractOnly?: boolean; fromSnapshot?: boolean; off?: readonly string[]; stampSkewMs?: number } = {},
  ) {
    this.stranded = new StrandedDataTracker(world, { baselineFirstSight: !!opts.fromSnapshot });
    this.diskReuse = new DiskReuseTracker(world);
    this.kcpScaleDown = new KcpScaleDownTracker(world, events);
    this.drainOrder = new DrainOrderTracker(world);
    this.mdRolloutPlan = new MdRolloutPlanTracker(world.mgmt);
    this.controlPlaneNodes = new ControlPlaneNodesTracker(world);
    this.poolStatus = new PoolStatusTracker(world, opts.stampSkewMs ?? 0);
    this.cpPlacement = new CpPlacementTracker(world);
    this.nodeServer = new NodeServerTracker(world);
    this.stuckTiming = new StuckTimingTracker(world);
  }

  /** The statement `name` is checked in this run (RunOptions.invariantsOff). */
  private on(name: string): boolean {
    return !this.opts.off?.includes(name);
  }

  /** A violation seen before this monitor existed (a replayed run's history): not reported again, and it counts for expectViolations. */
  remember(v: Violation): void {
    if (!this.violations.has(v.key)) this.violations.set(v.key, v);
  }

  all(): Violation[] {
    return [...this.violations.values()].sort((a, b) => a.at - b.at || a.key.localeCompare(b.key));
  }

  /** World.revision at the last completed check. */
  private checkedAt: string | undefined;

  /**
   * Check everything that must hold at any instant. Returns the new violations.
   *
   * Skipped while World.revision says that nothing the checks read changed
   * since the last one (two of three quiescent instants of the library): the
   * findings would be those of the last check, all already recorded, and the
   * trackers (rollouts, disks in service) would remember what they already
   * do: a second check of the same state changes neither.
   */
  async check(): Promise<Violation[]> {
    const rev = this.world.revision?.();
    if (rev !== undefined && rev === this.checkedAt) {
      // Nothing changed, but the statements bounded in time may have run out (a Node outliving its server, a pool
      // status left stale): those that hold a running clock are judged again.
      const pool = this.on('pool-status') && this.poolStatus.pending();
      const nodes = this.on('node-server') && this.nodeServer.pending();
      if (!pool && !nodes) return [];
      const contract = <F extends object>(fs: readonly F[]): (F & { tier: Classification })[] => fs.map((f) => ({ ...f, tier: CONTRACT }));
      return this.record([...contract(pool ? await this.poolStatus.findings() : []), ...contract(nodes ? await this.nodeServer.findings() : [])]);
    }
    const contract = <F extends object>(fs: readonly F[]): (F & { tier: Classification })[] => fs.map((f) => ({ ...f, tier: CONTRACT }));
    const fresh = this.record([
      ...this.cloudFindings(),
      ...(await this.clusterFindings()),
      ...contract(await this.stranded.findings()),
      ...contract(await this.diskReuse.findings()),
      ...(await this.certificateFindings()),
      ...contract(await this.kcpScaleDown.findings()),
      ...contract(await this.drainOrder.findings()),
      ...contract(this.mdRolloutPlan.findings()),
      ...contract(this.on('control-plane-nodes') ? await this.controlPlaneNodes.findings() : []),
      ...contract(this.on('pool-status') ? await this.poolStatus.findings() : []),
      ...contract(this.on('cp-placement') ? await this.cpPlacement.findings() : []),
      ...contract(this.on('node-server') ? await this.nodeServer.findings() : []),
      ...contract(this.on('server-spec') ? await serverSpecFindings(this.world) : []),
      // One clock only: a provider in its own process counts its waits on its wall clock.
      ...(this.on('stuck-timing') && !this.opts.stampSkewMs ? (await this.stuckTiming.findings()).map((f) => ({ ...f, tier: STUCK_TIMING_TIER })) : []),
    ]);
    this.checkedAt = rev;
    return fresh;
  }

  /** Checks that only make sense when the system is meant to be at rest (end of a run): no orphans. */
  async checkAtRest(): Promise<Violation[]> {
    const fresh = await this.check();
    return [...fresh, ...this.record(await this.orphanFindings())];
  }

  /**
   * BOOT-2/BOOT-3, at every instant (issue 22): every Running machine's node
   * holds a kubelet certificate signed by its cluster's CA, valid now, with
   * the matching key, for `CN=system:node:<hostname>` and exactly
   * `O=system:nodes`, whose SANs carry the
   * hostname and every IP the cloud gave the node's server (docs/provider.md,
   * "Cloud-init format"). The chain is verified once per certificate
   * (verifyLeaf remembers it); a node's result is re-read only when its files
   * change.
   */
  private async certificateFindings(): Promise<Finding[]> {
    const out: Finding[] = [];
    const cas = new Map<string, string | undefined>();
    const hcsMachines = new Map((await listShared<HCSMachine>(this.world.mgmt, 'HCSMachine')).map((m) => [`${m.metadata.namespace}/${m.metadata.name}`, m]));
    for (const m of await listShared<Machine>(this.world.mgmt, 'Machine')) {
      const host = m.status?.nodeRef?.name;
      if (m.status?.phase !== 'Running' || !host || m.metadata.deletionTimestamp) continue;
      const caKey = `${m.metadata.namespace}/${m.spec.clusterName}`;
      if (!cas.has(caKey)) {
        const secret = await getShared<Secret>(this.world.mgmt, { kind: 'Secret', namespace: m.metadata.namespace, name: `${m.spec.clusterName}-ca` });
        cas.set(caKey, secret ? secretValue(secret as Secret, 'tls.crt') : undefined);
      }
      const ca = cas.get(caKey);
      if (!ca) continue;
      const cert = this.world.guests.readFile(host, KUBELET_CERT);
      const key = this.world.guests.readFile(host, KUBELET_KEY);
      if (cert === undefined || key === undefined) {
        // Nodes whose guest is not simulated by this testbed carry no files to check.
        if (this.world.guests.mounts(host).length) out.push({ tier: CONTRACT, rule: 'BOOT-2', key: `BOOT-2/missing/${host}`, message: `node ${host} has no ${cert === undefined ? KUBELET_CERT : KUBELET_KEY}`, refs: [host] });
        continue;
      }
      const r = verifyLeaf(cert, key, ca, this.world.clock.now());
      if (!r.ok) {
        out.push({ tier: CONTRACT, rule: 'BOOT-3', key: `BOOT-3/${host}`, message: `kubelet certificate of node ${host} is not valid: ${r.reason}`, refs: [host] });
        continue;
      }
      if (!r.subject?.includes(`CN=system:node:${host}`)) {
        out.push({ tier: CONTRACT, rule: 'BOOT-2', key: `BOOT-2/cn/${host}`, message: `kubelet certificate of node ${host} is for ${r.subject}, expected CN=system:node:${host}`, refs: [host] });
        continue;
      }
      // O is exactly system:nodes: the group the Node authorizer authorizes kubelets by
      // (https://kubernetes.io/docs/reference/access-authn-authz/node/: "group system:nodes, username
      // system:node:<nodeName>"), and the only organization the kubelet-serving signer permits
      // (https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/#kubernetes-signers:
      // "organizations are exactly ["system:nodes"]").
      const orgs = r.organizations ?? [];
      if (orgs.length !== 1 || orgs[0] !== NODES_GROUP) {
        out.push({
          tier: CONTRACT,
          rule: 'BOOT-2',
          key: `BOOT-2/o/${host}/${orgs.join(',')}`,
          message: `kubelet certificate of node ${host} has ${orgs.length ? orgs.map((o) => `O=${o}`).join(', ') : 'no O'} (subject ${r.subject}), expected exactly O=${NODES_GROUP}: the Node authorizer's group`,
          refs: [host],
        });
        continue;
      }
      const serverId = m.spec.infrastructureRef?.name ? hcsMachines.get(`${m.metadata.namespace}/${m.spec.infrastructureRef.name}`)?.spec.serverId : undefined;
      const ips = (serverId ? this.world.cloud.server(serverId)?.ips : undefined) ?? [];
      const missing = [...(r.dnsNames?.includes(host) ? [] : [`DNS:${host}`]), ...ips.filter((ip) => !r.ips?.includes(ip)).map((ip) => `IP:${ip}`)];
      if (missing.length) {
        out.push({
          tier: CONTRACT,
          rule: 'BOOT-2',
          key: `BOOT-2/san/${host}/${missing.join(',')}`,
          message: `kubelet certificate of node ${host} (server ${serverId ?? '?'}) lacks the SAN${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (it has ${[...(r.dnsNames ?? []).map((d) => `DNS:${d}`), ...(r.ips ?? []).map((i) => `IP:${i}`)].join(', ') || 'none'}): the node's hostname and IPs`,
          refs: [host, ...(serverId ? [serverId] : [])],
        });
      }
    }
    return out;
  }

  /** Reference findings set aside by a contract-only monitor, in the order first seen. */
  skippedReference(): SkippedFinding[] {
    return [...this.skipped.values()];
  }

  private record(findings: Finding[]): Violation[] {
    const fresh: Violation[] = [];
    for (const f of findings) {
      if (this.violations.has(f.key)) continue;
      if (this.opts.contractOnly && f.tier.tier === 'reference') {
        if (!this.skipped.has(f.key)) this.skipped.set(f.key, { rule: f.rule, key: f.key, message: f.message, why: f.tier.why ?? 'reference' });
        continue;
      }
      const cause = this.causeOf(f.refs);
      const step = cause?.type === 'step.action' && typeof cause.data?.step === 'number' ? cause.data.step : undefined;
      const v: Violation = {
        rule: f.rule,
        key: f.key,
        message: f.message,
        at: this.world.clock.now(),
        ...(cause ? { causeSeq: cause.seq, cause: cause.message } : {}),
        ...(step !== undefined ? { causeStep: step } : {}),
      };
      this.violations.set(f.key, v);
      fresh.push(v);
    }
    return fresh;
  }

  /**
   * The event that most recently touched one of `refs`: controller decisions, cloud calls and object changes, and the
   * scenario's own actions (`step.action`: an edit, kubectl, apply, fault, crash or write, with its step number). Within
   * the step running now, the step's own action wins over the controllers' reactions to it that came after it.
   */
  private causeOf(refs: string[]): LogEvent | undefined {
    const evs = this.events();
    let candidate: LogEvent | undefined;
    let before = false; // walked past the start of the current step
    for (let i = evs.length - 1; i >= 0 && i >= evs.length - 5000; i--) {
      const e = evs[i]!;
      if (e.source === 'scenario' && e.type === 'step.start') {
        if (candidate) break;
        before = true;
        continue;
      }
      if (e.source === 'invariant' || (e.source === 'scenario' && e.type !== 'step.action')) continue;
      const hay = e.message + (e.data ? JSON.stringify(e.data) : '');
      if (!refs.some((r) => r && hay.includes(r))) continue;
      if (e.type === 'step.action') return e;
      if (!candidate) {
        candidate = e;
        if (before) break;
      }
    }
    return candidate;
  }

  private cloudFindings(): Finding[] {
    const out: Finding[] = [];
    const volumes = this.world.cloud.listVolumes();
    const present = new Set<string>();
    const byId = new Map(volumes.map((v) => [v.id, v]));
    for (const v of volumes) {
      if (v.metadata[PERSISTENT] !== 'true') continue;
      present.add(v.id);
      this.persistentSeen.set(v.id, v.name);
    }
    // DISK-9: a persistent disk is never deleted.
    for (const [id, name] of this.persistentSeen) {
      const v = byId.get(id);
      if (!present.has(id) || v?.status === 'deleting' || v?.status === 'deleted') {
        out.push({ tier: CONTRACT, rule: 'DISK-9', key: `DISK-9/deleted/${id}`, message: `persistent volume ${name} (${id}) was deleted`, refs: [id] });
      }
    }
    // DISK-9: never attached to two servers at once (the cloud refuses multi-attach; this guards the model itself).
    const servers = this.world.cloud.listServers();
    const holders = new Map<string, string[]>();
    for (const s of servers) {
      const d = this.world.cloud.server(s.id);
      for (const vol of d?.volumes ?? []) holders.set(vol.volumeId, [...(holders.get(vol.volumeId) ?? []), s.id]);
    }
    for (const [vid, sids] of holders) {
      if (sids.length > 1 && this.persistentSeen.has(vid)) {
        out.push({ tier: CONTRACT, rule: 'DISK-9', key: `DISK-9/multi/${vid}/${sids.sort().join(',')}`, message: `persistent volume ${this.persistentSeen.get(vid)} is attached to ${sids.length} servers (${sids.join(', ')})`, refs: [vid] });
      }
    }
    return out;
  }

  private async clusterFindings(): Promise<Finding[]> {
    const out: Finding[] = [];
    const hcsMachines = await listShared<HCSMachine>(this.world.mgmt, 'HCSMachine');
    // POOL-4: an entry is bound to at most one live machine.
    const byEntry = new Map<string, string[]>();
    for (const m of hcsMachines) {
      const host = m.status?.hostname;
      const pool = m.spec.configPoolRef?.name;
      if (!host || !pool) continue;
      const k = `${m.metadata.namespace}/${pool}/${host}`;
      byEntry.set(k, [...(byEntry.get(k) ?? []), m.metadata.name]);
    }
    for (const [entry, names] of byEntry) {
      if (names.length > 1) out.push({ tier: CONTRACT, rule: 'POOL-4', key: `POOL-4/${entry}/${names.sort().join(',')}`, message: `pool entry ${entry} is bound to ${names.length} machines: ${names.join(', ')}`, refs: names });
    }
    // TPL-4: providerID and serverId consistent with the cloud and the Machine.
    const machines = new Map((await listShared<Machine>(this.world.mgmt, 'Machine')).map((m) => [`${m.metadata.namespace}/${m.metadata.name}`, m]));
    for (const hm of hcsMachines) {
      const name = hm.metadata.name;
      const cluster = hm.metadata.labels?.['cluster.x-k8s.io/cluster-name'];
      if (hm.spec.providerID && cluster && hm.spec.providerID !== `hcs://${cluster}/${name}`) {
        out.push({ tier: CONTRACT, rule: 'TPL-4', key: `TPL-4/providerID/${name}`, message: `HCSMachine ${name} has providerID ${hm.spec.providerID}, expected hcs://${cluster}/${name}`, refs: [name] });
      }
      if (hm.spec.serverId && !hm.metadata.deletionTimestamp) {
        const s = this.world.cloud.server(hm.spec.serverId);
        if (s && s.name !== name) out.push({ tier: SERVER_NAME_TIER, rule: 'TPL-4', key: `TPL-4/serverId/${name}`, message: `HCSMachine ${name} points at server ${hm.spec.serverId} named ${s.name}`, refs: [name, hm.spec.serverId] });
      }
      const m = machines.get(`${hm.metadata.namespace}/${name}`);
      if (m?.spec.providerID && hm.spec.providerID && m.spec.providerID !== hm.spec.providerID) {
        out.push({ tier: CONTRACT, rule: 'TPL-4', key: `TPL-4/machine/${name}`, message: `Machine ${name} has providerID ${m.spec.providerID} but its HCSMachine has ${hm.spec.providerID}`, refs: [name] });
      }
    }
    out.push(...(await this.rolloutFindings([...machines.values()])));
    const hcsByKey = new Map(hcsMachines.map((hm) => [`${hm.metadata.namespace}/${hm.metadata.name}`, hm]));
    /** "namespace/pool" -> hostname -> the entry's static IPs (read once per check, when a Ready Node needs it). */
    let entryIps: Map<string, Map<string, string[]>> | undefined;
    for (const m of machines.values()) {
      if (!m.status?.nodeRef || m.metadata.deletionTimestamp) continue;
      const node = await getShared<Node>(this.world.workloads.client(m.metadata.namespace ?? 'default', m.spec.clusterName), { kind: 'Node', name: m.status.nodeRef.name });
      if (!node) continue;
      // BOOT-4: a Node's kubelet version equals its Machine's version.
      const v = node.status?.nodeInfo?.kubeletVersion;
      if (m.spec.version && v && v !== m.spec.version) out.push({ tier: CONTRACT, rule: 'BOOT-4', key: `BOOT-4/${m.metadata.name}`, message: `Node ${node.metadata.name} runs kubelet ${v} but Machine ${m.metadata.name} asks for ${m.spec.version}`, refs: [m.metadata.name, node.metadata.name] });
      // NET-7: a Ready Node carries its pool entry's static IPs as InternalIP addresses.
      const ir = m.spec.infrastructureRef;
      const hm = ir?.kind === 'HCSMachine' ? hcsByKey.get(`${ir.namespace ?? m.metadata.namespace}/${ir.name}`) : undefined;
      if (!hm || hm.metadata.deletionTimestamp || !nodeReady(node as Node)) continue;
      entryIps ??= new Map(
        (await listShared<HCSMachineConfigPool>(this.world.mgmt, 'HCSMachineConfigPool')).map((p) => [
          `${p.metadata.namespace}/${p.metadata.name}`,
          new Map((p.spec.configs ?? []).map((c) => [c.hostname, (c.networks ?? []).map((n) => n.ipAddress).filter(Boolean)])),
        ]),
      );
      const f = nodeAddressFinding(node as Node, m.metadata.name, hm, entryIps);
      if (f) out.push(f);
    }
    return out;
  }

  /**
   * MD-1 rollout bounds, as Cluster API's own rollout tests check them
   * (docs/capi.md): while a template rollout that started from a fully
   * available MachineDeployment is in progress, machines <= replicas + maxSurge
   * and available >= replicas - maxUnavailable. Not enforced where Cluster API
   * itself tolerates a breach: when replicas change mid-rollout (until the
   * deployment is stable again), and outside rollouts (initial provisioning,
   * scaling). "Available" here is a Machine, not being deleted, whose Node is
   * Ready (more lenient than CAPI's minReadySeconds, never stricter).
   */
  private async rolloutFindings(machines: readonly Readonly<Machine>[]): Promise<Finding[]> {
    const out: Finding[] = [];
    for (const md of await listShared<MachineDeployment>(this.world.mgmt, 'MachineDeployment')) {
      if ((md.spec.strategy?.type ?? 'RollingUpdate') !== 'RollingUpdate' || md.metadata.deletionTimestamp) continue;
      const key = `${md.metadata.namespace}/${md.metadata.name}`;
      const replicas = md.spec.replicas ?? 1;
      const template = JSON.stringify(md.spec.template);
      const mine = machines.filter((m) => m.metadata.namespace === md.metadata.namespace && m.metadata.labels?.[LABEL_DEPLOYMENT_NAME] === md.metadata.name);
      const availableNow = new Set<string>();
      for (const m of mine) {
        if (m.metadata.deletionTimestamp || !m.status?.nodeRef) continue;
        const node = await getShared<Node>(this.world.workloads.client(m.metadata.namespace ?? 'default', m.spec.clusterName), { kind: 'Node', name: m.status.nodeRef.name });
        if (node && nodeReady(node as Node)) availableNow.add(m.metadata.name);
      }
      const available = availableNow.size;
      const st = md.status;
      const stableNow =
        (st?.observedGeneration ?? 0) >= (md.metadata.generation ?? 0) && st?.updatedReplicas === replicas && st.availableReplicas === replicas && st.replicas === replicas && mine.length === replicas && available === replicas;
      const prev = this.mds.get(key);
      const track: MdTrack = prev ?? { template, replicas, stable: false, enforcing: false, rolling: false, available: new Set() };
      // Pausing mid-rollout is a breach Cluster API tolerates too: sync() -> scale() resizes the MachineSets
      // proportionally up to replicas + maxSurge by spec.replicas, while a machine the rollout already removes is still
      // being deleted (cluster-api v1.10 machinedeployment_sync.go scale; issue 37's pause flow showed it).
      if ((prev && prev.replicas !== replicas) || (md.spec as { paused?: boolean }).paused) track.enforcing = track.rolling = false;
      else if (prev && prev.template !== template) {
        if (prev.stable) track.enforcing = true;
        track.rolling = true;
      }
      // MD-1 with unhealthy machines (issue 22): a rollout that started with some machines unavailable cannot promise
      // replicas - maxUnavailable at once, but it never deletes an available machine when that leaves fewer
      // (upstream rolloutRolling: cleanupUnhealthyReplicas removes only unavailable ones, and
      // scaleDownOldMachineSetsForRollingUpdate only what exceeds minAvailable; an unhealthy machine is not available).
      if (track.rolling) {
        const unavailable = maxUnavailable(md as MachineDeployment);
        const stillThere = new Set(mine.filter((m) => !m.metadata.deletionTimestamp).map((m) => m.metadata.name));
        const removed = [...track.available].filter((n) => !stillThere.has(n)).sort();
        if (removed.length && available < replicas - unavailable) {
          out.push({
            tier: CONTRACT,
            rule: 'MD-1',
            key: `MD-1/deleted-available/${key}/${removed.join(',')}`,
            message: `MachineDeployment ${key}: available machine${removed.length > 1 ? 's' : ''} ${removed.join(', ')} deleted during a rollout, leaving ${available} available (${[...availableNow].sort().join(', ') || 'none'}; ${mine.length - available} not available, unhealthy ones included), below replicas ${replicas} - maxUnavailable ${unavailable}`,
            refs: [md.metadata.name, ...removed],
          });
        }
      }
      if (track.enforcing) {
        const surge = maxSurge(md as MachineDeployment);
        const unavailable = maxUnavailable(md as MachineDeployment);
        if (mine.length > replicas + surge) {
          out.push({ tier: CONTRACT, rule: 'MD-1', key: `MD-1/surge/${key}/${mine.length}`, message: `MachineDeployment ${key} has ${mine.length} machines during a rollout, above replicas ${replicas} + maxSurge ${surge}`, refs: [md.metadata.name] });
        }
        if (available < replicas - unavailable) {
          out.push({ tier: CONTRACT, rule: 'MD-1', key: `MD-1/unavailable/${key}/${available}`, message: `MachineDeployment ${key} has ${available} available machines during a rollout, below replicas ${replicas} - maxUnavailable ${unavailable}`, refs: [md.metadata.name] });
        }
        if (stableNow) track.enforcing = false;
      }
      if (stableNow) track.rolling = false;
      track.available = availableNow;
      track.template = template;
      track.replicas = replicas;
      track.stable = stableNow;
      this.mds.set(key, track);
    }
    return out;
  }

  /** No orphans at rest: servers without a machine, leaked non-persistent volumes. */
  private async orphanFindings(): Promise<Finding[]> {
    const out: Finding[] = [];
    const hcsMachines = await listShared<HCSMachine>(this.world.mgmt, 'HCSMachine');
    const owned = new Set(hcsMachines.map((m) => m.spec.serverId).filter(Boolean));
    const servers = this.world.cloud.listServers().filter((s) => s.status !== 'DELETED');
    for (const s of servers) {
      if (!owned.has(s.id)) out.push({ tier: CONTRACT, rule: 'HCS-1', key: `orphan/server/${s.id}`, message: `server ${s.name} (${s.id}) is not owned by any HCSMachine (orphan)`, refs: [s.id] });
    }
    const attached = new Set<string>();
    for (const s of servers) for (const v of this.world.cloud.server(s.id)?.volumes ?? []) attached.add(v.volumeId);
    for (const v of this.world.cloud.listVolumes()) {
      if (v.metadata[PERSISTENT] === 'true' || attached.has(v.id) || v.status === 'deleted' || v.status === 'deleting') continue;
      out.push({ tier: CONTRACT, rule: 'TPL-3', key: `orphan/volume/${v.id}`, message: `ephemeral volume ${v.name} (${v.id}) is ${v.status} and attached to no server (leaked)`, refs: [v.id] });
    }
    return out;
  }
}

/**
 * NET-7 (static IPs come from the pool entry): the Node of a machine holding pool entry `hostname` lists every
 * `networks[].ipAddress` of that entry as an `InternalIP` address — what the kubelet registers with `--node-ip`
 * (Node status.addresses: https://kubernetes.io/docs/reference/node/node-status/#addresses) and what the cloud
 * gave the server's ports. Read from the pool's spec and the Node only; an entry the pool no longer lists, or
 * one without networks, asserts nothing (editing a held entry is outside POOL-3).
 */
function nodeAddressFinding(node: Node, machine: string, hm: HCSMachine, entryIps: ReadonlyMap<string, ReadonlyMap<string, string[]>>): Finding | undefined {
  const host = hm.status?.hostname;
  const poolRef = hm.spec.configPoolRef?.name;
  if (!host || !poolRef) return undefined;
  const want = entryIps.get(`${hm.spec.configPoolRef?.namespace ?? hm.metadata.namespace}/${poolRef}`)?.get(host) ?? [];
  const have = (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address);
  const missing = want.filter((ip) => !have.includes(ip));
  if (!missing.length) return undefined;
  return {
    tier: CONTRACT,
    rule: 'NET-7',
    key: `NET-7/node-ips/${node.metadata.name}/${missing.join(',')}`,
    message: `Node ${node.metadata.name} (Machine ${machine}, pool ${poolRef} entry ${host}) is Ready without the entry's static IP${missing.length > 1 ? 's' : ''} ${missing.join(', ')} as InternalIP (its addresses: ${(node.status?.addresses ?? []).map((a) => `${a.type}=${a.address}`).join(', ') || 'none'})`,
    refs: [node.metadata.name, machine],
  };
}
