/**
 * HCSCluster controller: resolves spec.network.subnets against the cloud
 * (names and IDs), publishes the resolved list in status.network.subnets and
 * sets status.ready (NET-4, NET-5); with spec.controlPlaneAvailabilityZones,
 * status.failureDomains from the available zones (NovaListAvailabilityZones).
 */
import { LABEL_CLUSTER_NAME } from '../api/capi.js';
import type { HCSCluster, HCSClusterStatus, HCSMachine, HCSSubnet } from '../api/hcs.js';
import { FINALIZER_HCSCLUSTER } from '../api/hcs.js';
import { errorMessage } from '../../core/errors.js';
import { hasFinalizer, isDeleting } from '../../core/kube/types.js';
import type { ControllerContext } from '../../core/runtime/context.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import { asCloudError, stableMessage, type CloudApi, type CloudSubnet } from './cloud-api.js';
import { cloudErrorReason, ruleForCloudError } from './cloud-errors.js';
import { Reporter, getCondition, mutateStatus, setCondition } from './util.js';

export const CLUSTER_CONTROLLER = 'hcscluster';

export interface SubnetResolution {
  resolved: HCSSubnet[];
  problems: { message: string; rules: string[] }[];
}

/**
 * Resolve the cluster's subnet list. A name-only entry that was not resolved
 * before is only accepted while the cluster is not Ready yet; on a Ready
 * cluster new subnets must be full objects with their ID (NET-5).
 */
export function resolveSubnets(spec: HCSSubnet[], cloud: CloudSubnet[], previous: HCSSubnet[], clusterReady: boolean): SubnetResolution {
  const resolved: HCSSubnet[] = [];
  const problems: SubnetResolution['problems'] = [];
  spec.forEach((s, i) => {
    const field = `spec.network.subnets[${i}]`;
    if (!s.id && !s.name) {
      problems.push({ message: `${field}: needs a name or an id`, rules: ['NET-4'] });
      return;
    }
    if (s.id) {
      const c = cloud.find((x) => x.id === s.id || x.neutron_subnet_id === s.id);
      if (!c) {
        problems.push({ message: `${field}: subnet id ${s.id} does not exist in HCS`, rules: ['NET-4'] });
        return;
      }
      if (s.name && s.name !== c.name) {
        problems.push({ message: `${field}: name "${s.name}" and id ${s.id} select different subnets (the id is subnet "${c.name}")`, rules: ['NET-3'] });
        return;
      }
      resolved.push({ name: c.name, id: c.id, cidr: c.cidr });
      return;
    }
    const known = previous.find((p) => p.name === s.name && p.id);
    if (!known && clusterReady) {
      problems.push({
        message: `${field}: subnet "${s.name}" was added by name only to a Ready cluster; append the full subnet object including its id (NET-5). It is not used until then`,
        rules: ['NET-5'],
      });
      return;
    }
    const matches = cloud.filter((x) => x.name === s.name);
    if (matches.length === 0) {
      problems.push({ message: `${field}: subnet "${s.name}" does not exist in HCS (known: ${cloud.map((x) => x.name).join(', ') || 'none'})`, rules: ['NET-4'] });
      return;
    }
    if (matches.length > 1) {
      problems.push({ message: `${field}: subnet name "${s.name}" is ambiguous in HCS (${matches.map((x) => x.id).join(', ')}); set the id`, rules: ['NET-5'] });
      return;
    }
    resolved.push({ name: matches[0]!.name, id: matches[0]!.id, cidr: matches[0]!.cidr });
  });
  return { resolved, problems };
}

export class HCSClusterController implements Controller {
  readonly name = CLUSTER_CONTROLLER;
  private readonly rep: Reporter;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly cloud: CloudApi,
  ) {
    this.rep = new Reporter(ctx, CLUSTER_CONTROLLER);
  }

  async reconcile(key: string): Promise<Result | void> {
    const [namespace, name] = key.split('/') as [string, string];
    const ref = { kind: 'HCSCluster', namespace, name };
    let hc = await this.ctx.mgmt.get<HCSCluster>(ref);
    if (!hc) return;
    if (isDeleting(hc)) {
      const clusterName = hc.metadata.labels?.[LABEL_CLUSTER_NAME] ?? name;
      const machines = await this.ctx.mgmt.list<HCSMachine>('HCSMachine', { namespace, labelSelector: { [LABEL_CLUSTER_NAME]: clusterName } });
      if (machines.length > 0) {
        this.rep.info('hcscluster.delete-waiting', `HCSCluster ${key} is being deleted: waiting for ${machines.length} HCSMachine(s) to go`, { cluster: key });
        return { requeueAfter: 10_000 };
      }
      if (hasFinalizer(hc, FINALIZER_HCSCLUSTER)) {
        hc.metadata.finalizers = hc.metadata.finalizers!.filter((f) => f !== FINALIZER_HCSCLUSTER);
        await this.ctx.mgmt.update(hc);
        this.rep.info('hcscluster.deleted', `HCSCluster ${key}: finalizer removed`, { cluster: key });
      }
      return;
    }
    if (!hasFinalizer(hc, FINALIZER_HCSCLUSTER)) {
      hc.metadata.finalizers = [...(hc.metadata.finalizers ?? []), FINALIZER_HCSCLUSTER];
      hc = await this.ctx.mgmt.update(hc);
    }
    const now = this.ctx.clock.now();
    const status = structuredClone(hc.status ?? {});
    const conds = (status.conditions ??= []);
    let cloudSubnets: CloudSubnet[];
    try {
      cloudSubnets = await this.cloud.listSubnets();
    } catch (e) {
      const ce = asCloudError(e);
      const why = ce ? cloudErrorReason(ce.code, ce.status) : undefined;
      const msg = `cannot list subnets in HCS: ${ce ? `${ce.code} ${ce.message}` : stableMessage(errorMessage(e))}; ${why?.hint ?? 'check credentials and permissions'}`;
      const prev = getCondition(conds, 'NetworkReady');
      const reason = why?.reason ?? 'CloudError';
      setCondition(conds, { type: 'NetworkReady', status: 'False', reason, message: msg }, now);
      setCondition(conds, { type: 'Ready', status: 'False', reason, message: msg }, now);
      await this.save(hc, status);
      // OPS-2: credentials / permissions / cloud errors are visible on the HCSCluster (condition + event, once per change).
      if (prev?.reason !== reason || prev.message !== msg) {
        const rules = ce ? ruleForCloudError(ce.code) : [];
        this.rep.error('hcscluster.cloud-error', `HCSCluster ${key}: ${msg}`, { cluster: key }, rules.length ? rules : ['OPS-2']);
        await this.rep.k8sEvent(hc, 'Warning', reason, msg, rules.length ? rules : ['OPS-2']);
      }
      return { requeueAfter: 30_000 };
    }
    const wasReady = status.ready === true;
    const res = resolveSubnets(hc.spec.network?.subnets ?? [], cloudSubnets, status.network?.subnets ?? [], wasReady);
    const prevCond = getCondition(conds, 'NetworkReady');
    if (res.problems.length) {
      const message = res.problems.map((p) => p.message).join('; ');
      const rules = [...new Set(res.problems.flatMap((p) => p.rules))].sort();
      setCondition(conds, { type: 'NetworkReady', status: 'False', reason: 'SubnetNotResolved', message }, now);
      // A Ready cluster keeps serving its resolved subnets; a new one is not ready until every subnet resolves.
      if (!wasReady) status.ready = false;
      status.network = { subnets: wasReady ? mergeResolved(status.network?.subnets ?? [], res.resolved) : res.resolved };
      if (prevCond?.status !== 'False' || prevCond.message !== message) {
        this.rep.error('hcscluster.subnets', `HCSCluster ${key}: ${message}`, { cluster: key }, rules);
        await this.rep.k8sEvent(hc, 'Warning', 'SubnetNotResolved', message, rules);
      }
    } else {
      setCondition(conds, { type: 'NetworkReady', status: 'True' }, now);
      status.network = { subnets: res.resolved };
      status.ready = true;
      if (!wasReady || prevCond?.status !== 'True') {
        this.rep.info('hcscluster.ready', `HCSCluster ${key} ready: subnets ${res.resolved.map((s) => `${s.name}=${s.id}`).join(', ')}`, { cluster: key }, ['NET-4']);
      }
    }
    setCondition(conds, { type: 'Ready', status: status.ready ? 'True' : 'False', ...(status.ready ? {} : { reason: 'NetworkNotReady', message: getCondition(conds, 'NetworkReady')?.message }) }, now);
    const fdRetry = await this.failureDomains(hc, status);
    await this.save(hc, status);
    return res.problems.length || fdRetry ? { requeueAfter: 30_000 } : undefined;
  }

  /**
   * Cluster API infrastructure contract, status.failureDomains (copied to Cluster.status.failureDomains, where the
   * KubeadmControlPlane spreads its Machines): one control plane failure domain per zone of
   * spec.controlPlaneAvailabilityZones that NovaListAvailabilityZones lists as available (as CAPO's
   * OpenStackCluster controlPlaneAvailabilityZones). Unset: no failure domains and no call. Returns true to retry.
   */
  private async failureDomains(hc: HCSCluster, status: NonNullable<HCSCluster['status']>): Promise<boolean> {
    const want = hc.spec.controlPlaneAvailabilityZones ?? [];
    if (!want.length) {
      delete status.failureDomains;
      return false;
    }
    const key = `${hc.metadata.namespace ?? 'default'}/${hc.metadata.name}`;
    let zones: { zoneName: string; zoneState: { available: boolean } }[];
    try {
      if (!this.cloud.listAvailabilityZones) throw new Error('the cloud client cannot list availability zones (NovaListAvailabilityZones)');
      zones = await this.cloud.listAvailabilityZones();
    } catch (e) {
      const ce = asCloudError(e);
      this.rep.error('hcscluster.availability-zones', `HCSCluster ${key}: cannot list availability zones: ${ce ? `${ce.code} ${ce.message}` : stableMessage(errorMessage(e))}`, { cluster: key }, ['TPL-2']);
      return true; // status.failureDomains stays as it was
    }
    const available = new Set(zones.filter((z) => z.zoneState.available).map((z) => z.zoneName));
    const missing = want.filter((z) => !available.has(z));
    const fds: NonNullable<HCSClusterStatus['failureDomains']> = {};
    for (const z of [...new Set(want)].filter((x) => available.has(x)).sort()) fds[z] = { controlPlane: true };
    if (missing.length && JSON.stringify(Object.keys(status.failureDomains ?? {})) !== JSON.stringify(Object.keys(fds))) {
      this.rep.error('hcscluster.availability-zones', `HCSCluster ${key}: TPL-2: spec.controlPlaneAvailabilityZones ${missing.join(', ')} not available in HCS (available: ${[...available].sort().join(', ') || 'none'}): not a failure domain`, { cluster: key }, ['TPL-2']);
    }
    status.failureDomains = fds;
    return false;
  }

  /**
   * Write the fields this controller owns (ready, network, NetworkReady and
   * Ready conditions) onto the current object: other conditions (written by
   * the workload controller, OVN/KCP) are kept.
   */
  private async save(hc: HCSCluster, status: NonNullable<HCSCluster['status']>): Promise<void> {
    const mine = new Set(['NetworkReady', 'Ready']);
    await mutateStatus<HCSCluster>(this.ctx.mgmt, { kind: 'HCSCluster', namespace: hc.metadata.namespace, name: hc.metadata.name }, (cur) => {
      const st = (cur.status ??= {});
      const before = JSON.stringify(st);
      if (status.ready !== undefined) st.ready = status.ready;
      if (status.network !== undefined) st.network = status.network;
      if (status.failureDomains !== undefined) st.failureDomains = status.failureDomains;
      else delete st.failureDomains;
      const others = (st.conditions ?? []).filter((c) => !mine.has(c.type));
      st.conditions = [...(status.conditions ?? []).filter((c) => mine.has(c.type)), ...others];
      return JSON.stringify(st) !== before;
    });
  }
}

function mergeResolved(prev: HCSSubnet[], now: HCSSubnet[]): HCSSubnet[] {
  const out = [...prev];
  for (const s of now) if (!out.some((p) => p.id === s.id)) out.push(s);
  return out;
}
