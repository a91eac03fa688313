/**
 * The provider's workload-side duties per HCSCluster, kept apart from the
 * network resolution of the HCSCluster controller:
 *
 * - the cni-kube-ovn AppRelease (OVN-1, OVN-2, OVN-3, see kubeovn.ts),
 *   condition KubeOvnReleaseReady;
 * - version consistency against the OS Support Matrix (KCP-3 control plane
 *   spec and what it actually runs, KCP-4 MachineDeployment vs its VM
 *   template's image), condition VersionsConsistent plus a Warning event on
 *   the offending object, once per change.
 *
 * Conditions are merged into the HCSCluster status with optimistic
 * concurrency (the HCSCluster controller owns the other fields).
 */
import { CONTROL_PLANE_CONFIGMAP, type Cluster, type Condition, type KubeadmControlPlane, type MachineDeployment } from '../api/capi.js';
import type { HCSCluster, HCSMachineTemplate } from '../api/hcs.js';
import { listShared } from '../../core/kube/client.js';
import type { KubeObject, ObjectRef } from '../../core/kube/types.js';
import type { ControllerContext } from '../../core/runtime/context.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import type { OsSupportMatrix } from '../matrix/matrix.js';
import { checkControlPlaneSpec, checkDeployedControlPlane, checkWorkerVersions, type DeployedControlPlane, type VersionProblem } from '../matrix/versions.js';
import { COND_KUBE_OVN, KUBE_OVN_APPRELEASE, KUBE_OVN_NAMESPACE, clusterForHCSCluster, reconcileKubeOvnRelease } from './kubeovn.js';
import { Reporter, getCondition, mutateStatus, setCondition } from './util.js';

export const CLUSTER_WORKLOAD_CONTROLLER = 'hcscluster-workload';
export const COND_VERSIONS = 'VersionsConsistent';

export class HCSClusterWorkloadController implements Controller {
  readonly name = CLUSTER_WORKLOAD_CONTROLLER;
  private readonly rep: Reporter;
  /** Workload clusters whose AppReleases we watch (a deleted cni-kube-ovn is re-created). */
  private readonly watched = new Set<string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly matrix: OsSupportMatrix,
  ) {
    this.rep = new Reporter(ctx, CLUSTER_WORKLOAD_CONTROLLER);
  }

  async reconcile(key: string): Promise<Result | void> {
    const [namespace, name] = key.split('/') as [string, string];
    const hc = await this.ctx.mgmt.get<HCSCluster>({ kind: 'HCSCluster', namespace, name });
    if (!hc || hc.metadata.deletionTimestamp) return;
    const cluster = await clusterForHCSCluster(this.ctx.mgmt, hc);
    if (!cluster) return;
    const now = this.ctx.clock.now();
    const conds: Condition[] = [];
    const events: { obj: KubeObject; type: 'Normal' | 'Warning'; reason: string; message: string; rules: string[] }[] = [];
    const prevConds = hc.status?.conditions ?? [];
    let requeue: number | undefined;

    // ---- Kube-OVN AppRelease (OVN-1..3)
    if (hc.status?.ready) {
      this.watchWorkload(key, namespace, cluster.metadata.name);
      const out = await reconcileKubeOvnRelease(this.ctx, cluster);
      const prev = getCondition(prevConds, COND_KUBE_OVN);
      const arName = `${KUBE_OVN_NAMESPACE}/${KUBE_OVN_APPRELEASE}`;
      switch (out.kind) {
        case 'waiting':
          conds.push({ type: COND_KUBE_OVN, status: 'False', reason: out.reason, message: out.message });
          if (prev?.reason !== out.reason) {
            this.rep.info('hcscluster.kube-ovn-waiting', `HCSCluster ${key}: ${out.message}`, { cluster: key }, out.rules);
            if (out.reason !== 'WaitingForControlPlane') events.push({ obj: hc, type: 'Warning', reason: out.reason, message: out.message, rules: out.rules });
          }
          requeue = 30_000;
          break;
        case 'created':
          conds.push({ type: COND_KUBE_OVN, status: 'True', reason: 'Created', message: `AppRelease ${arName} targetRevision ${out.targetRevision}` });
          this.rep.info('hcscluster.kube-ovn-created', `HCSCluster ${key}: created AppRelease ${arName} in workload cluster ${cluster.metadata.name} (releaseName cpaas-kube-ovn, chart acp/chart-cpaas-kube-ovn, targetRevision ${out.targetRevision} from annotation cpaas.io/kube-ovn-version)`, { cluster: key, targetRevision: out.targetRevision }, ['OVN-1']);
          events.push({ obj: cluster, type: 'Normal', reason: 'KubeOvnAppReleaseCreated', message: `created AppRelease ${arName} with targetRevision ${out.targetRevision}`, rules: ['OVN-1'] });
          break;
        case 'values-updated':
          conds.push({ type: COND_KUBE_OVN, status: 'True', reason: 'ValuesSynced', message: `AppRelease ${arName} targetRevision ${out.targetRevision}` });
          this.rep.info('hcscluster.kube-ovn-values', `HCSCluster ${key}: updated spec.values of AppRelease ${arName} (targetRevision ${out.targetRevision} left as it is)`, { cluster: key }, ['OVN-2']);
          break;
        case 'unchanged': {
          const message = out.annotationDiffers
            ? `Cluster annotation cpaas.io/kube-ovn-version=${out.annotationDiffers} differs from AppRelease ${arName} targetRevision ${out.targetRevision}: the provider does not move the chart; patch the AppRelease's spec.source.charts[0].targetRevision on the workload cluster (OVN-3)`
            : `AppRelease ${arName} targetRevision ${out.targetRevision}`;
          conds.push({ type: COND_KUBE_OVN, status: 'True', reason: out.annotationDiffers ? 'AnnotationNotApplied' : 'Reconciled', message });
          if (out.annotationDiffers && prev?.message !== message) {
            this.rep.info('hcscluster.kube-ovn-annotation', `HCSCluster ${key}: ${message}`, { cluster: key, annotation: out.annotationDiffers, targetRevision: out.targetRevision }, ['OVN-3']);
            events.push({ obj: cluster, type: 'Normal', reason: 'KubeOvnAnnotationNotApplied', message, rules: ['OVN-3'] });
          }
          break;
        }
      }
    }

    // ---- versions (KCP-3, KCP-4)
    const problems = await this.versionProblems(cluster);
    const prevV = getCondition(prevConds, COND_VERSIONS);
    if (problems.length) {
      const message = problems.map((p) => `${p.rule}: ${p.object}: ${p.field}: ${p.message}`).join('; ');
      const rules = [...new Set(problems.map((p) => p.rule))].sort();
      conds.push({ type: COND_VERSIONS, status: 'False', reason: 'VersionMismatch', message });
      if (prevV?.message !== message) {
        this.rep.error('hcscluster.version-mismatch', `HCSCluster ${key}: ${message}`, { cluster: key }, rules);
        for (const p of problems) {
          const target = await this.objectOf(p, namespace);
          events.push({ obj: target ?? hc, type: 'Warning', reason: 'VersionMismatch', message: `${p.rule}: ${p.field}: ${p.message}`, rules: [p.rule] });
        }
      }
    } else {
      conds.push({ type: COND_VERSIONS, status: 'True', reason: 'MatchesOSSupportMatrix' });
      if (prevV && prevV.status !== 'True') this.rep.info('hcscluster.versions-consistent', `HCSCluster ${key}: control plane and worker versions match the OS Support Matrix again`, { cluster: key }, ['KCP-3', 'KCP-4']);
    }

    await mutateStatus<HCSCluster>(this.ctx.mgmt, { kind: 'HCSCluster', namespace, name }, (cur) => {
      const st = (cur.status ??= {});
      const cs = (st.conditions ??= []);
      let changed = false;
      for (const c of conds) changed = setCondition(cs, c, now) || changed;
      return changed;
    });
    for (const e of events) await this.rep.k8sEvent(e.obj, e.type, e.reason, e.message, e.rules);
    return requeue !== undefined ? { requeueAfter: requeue } : undefined;
  }

  private watchWorkload(hcKey: string, ns: string, clusterName: string): void {
    const ck = `${ns}/${clusterName}`;
    if (this.watched.has(ck)) return;
    this.watched.add(ck);
    this.ctx.workloads.client(ns, clusterName).watch('AppRelease', (e) => {
      if (e.type === 'DELETED' && e.object.metadata.name === KUBE_OVN_APPRELEASE) this.ctx.manager.enqueue(CLUSTER_WORKLOAD_CONTROLLER, hcKey);
    }, { shared: true });
  }

  private async versionProblems(cluster: Cluster): Promise<VersionProblem[]> {
    const ns = cluster.metadata.namespace ?? 'default';
    const out: VersionProblem[] = [];
    const cpRef = cluster.spec.controlPlaneRef;
    if (cpRef?.kind === 'KubeadmControlPlane') {
      const kcp = await this.ctx.mgmt.get<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace: cpRef.namespace ?? ns, name: cpRef.name });
      if (kcp) {
        const tRef = kcp.spec.machineTemplate?.infrastructureRef;
        const tpl = tRef?.kind === 'HCSMachineTemplate' ? await this.ctx.mgmt.get<HCSMachineTemplate>({ kind: 'HCSMachineTemplate', namespace: tRef.namespace ?? ns, name: tRef.name }) : undefined;
        out.push(...checkControlPlaneSpec(kcp, tpl, this.matrix));
        const deployed = await this.deployed(ns, cluster.metadata.name, kcp.metadata.name);
        if (deployed) out.push(...checkDeployedControlPlane(kcp.metadata.name, deployed, this.matrix).filter((p) => !out.some((q) => q.message === p.message)));
      }
    }
    // This cluster's MachineDeployments only, read shared (the namespace holds every cluster's; checkWorkerVersions only reads).
    const mds = await listShared<MachineDeployment>(this.ctx.mgmt, 'MachineDeployment', { namespace: ns });
    for (const md of mds.filter((m) => m.spec.clusterName === cluster.metadata.name)) {
      const tRef = md.spec.template.spec.infrastructureRef;
      const tpl = tRef?.kind === 'HCSMachineTemplate' ? await this.ctx.mgmt.get<HCSMachineTemplate>({ kind: 'HCSMachineTemplate', namespace: tRef.namespace ?? ns, name: tRef.name }) : undefined;
      out.push(...checkWorkerVersions(md, tpl, this.matrix));
    }
    return out;
  }

  /** The KCP controller's record of what the control plane runs (kube-system/testbed-control-plane). */
  private async deployed(ns: string, cluster: string, kcpName: string): Promise<DeployedControlPlane | undefined> {
    if (!this.ctx.workloads.names().includes(`${ns}/${cluster}`)) return undefined;
    const cm = await this.ctx.workloads.client(ns, cluster).get<KubeObject & { data?: Record<string, string> }>({ kind: 'ConfigMap', ...CONTROL_PLANE_CONFIGMAP });
    if (!cm?.data || (cm.data.controlPlaneName && cm.data.controlPlaneName !== kcpName)) return undefined;
    let members: DeployedControlPlane['etcdMembers'] = [];
    try {
      members = JSON.parse(cm.data.etcdMembers ?? '[]') as DeployedControlPlane['etcdMembers'];
    } catch {
      members = [];
    }
    return {
      ...(cm.data.kubernetesVersion ? { kubernetesVersion: cm.data.kubernetesVersion } : {}),
      ...(cm.data.dnsImageTag ? { dnsImageTag: cm.data.dnsImageTag } : {}),
      etcdMembers: members ?? [],
    };
  }

  private async objectOf(p: VersionProblem, ns: string): Promise<KubeObject | undefined> {
    const m = /^(KubeadmControlPlane|MachineDeployment) ([^/]+)\/(.+)$/.exec(p.object);
    if (!m) return undefined;
    const ref: ObjectRef = { kind: m[1]!, namespace: m[2] ?? ns, name: m[3]! };
    return this.ctx.mgmt.get(ref);
  }
}
