/**
 * Cluster API's admission webhooks, for the kinds the testbed relies on, as
 * upstream states them (cluster-api v1.10: internal/webhooks/cluster.go and
 * machinedeployment.go; controlplane/kubeadm/internal/webhooks/
 * kubeadm_control_plane.go): defaulting of a MachineDeployment's strategy,
 * validation of maxSurge/maxUnavailable (MD-1), names that become label
 * values, and the KubeadmControlPlane rules (KCP-1, KCP-2, UPG-3; the KCP
 * controller enforces UPG-3 on its own as well, condition
 * VersionUpgradeAllowed). src/world/admission.ts installs them with the HCS
 * rules of src/product/api/admission.ts.
 */
import type { FieldCause } from '../../core/kube/errors.js';
import type { KubeObject } from '../../core/kube/types.js';
import type { KubeadmControlPlane, MachineDeployment } from '../../product/api/capi.js';
import { labelValueErrors } from '../../core/kube/object-meta.js';
import { minorSkipError, parseVersion } from './kcp.js';

/**
 * Cluster and MachineDeployment names become label values
 * (cluster.x-k8s.io/cluster-name, cluster.x-k8s.io/deployment-name), so
 * upstream's webhooks refuse names that are not valid label values
 * (internal/webhooks/cluster.go and machinedeployment.go, v1.10: "must be a
 * valid label value").
 */
function nameIsLabelValue(obj: KubeObject): FieldCause[] {
  const name = obj.metadata?.name ?? '';
  return labelValueErrors(name).map((e) => ({ field: 'metadata.name', message: `Invalid value: ${JSON.stringify(name.length > 80 ? name.slice(0, 80) + '...' : name)}: must be a valid label value: ${e}` }));
}

export function validateCluster(_op: 'CREATE' | 'UPDATE', obj: KubeObject): FieldCause[] {
  return nameIsLabelValue(obj);
}

/**
 * intstr.GetScaledValueFromIntOrPercent, as upstream's webhook
 * (internal/webhooks/machinedeployment.go, v1.10) applies it: an int, or a
 * string that is a percentage; a bare-digit string ("1") is invalid.
 */
const PERCENT = /^(\d+)%$/;

function isZero(v: number | string | undefined): boolean {
  return v === 0 || v === '0' || v === '0%';
}

/** Defaulting webhook: RollingUpdate with maxSurge 1 and maxUnavailable 0 unless set. */
export function defaultMachineDeployment(obj: KubeObject): void {
  const md = obj as MachineDeployment;
  if (!md.spec) return;
  md.spec.strategy ??= {};
  md.spec.strategy.type ??= 'RollingUpdate';
  if (md.spec.strategy.type === 'RollingUpdate') {
    md.spec.strategy.rollingUpdate ??= {};
    md.spec.strategy.rollingUpdate.maxSurge ??= 1;
    md.spec.strategy.rollingUpdate.maxUnavailable ??= 0;
  }
}

/**
 * The testbed's largest spec.replicas of a MachineDeployment, MachineSet or
 * KubeadmControlPlane: Kubernetes' largest supported cluster, 5,000 nodes
 * (kubernetes.io/docs/setup/best-practices/cluster-large: "No more than 5,000
 * nodes"). Cluster API sets no maximum, but every replica is a Machine, an
 * HCSMachine, a bootstrap config, a server and a Node held in this one
 * process: without a bound, 2147483647 grew serve's memory without end
 * (issue 32: 88 MB to 1.46 GB in 100 s). A larger value is a 422 naming the
 * field and this limit, nothing written.
 */
export const MAX_REPLICAS = 5000;

/** spec.replicas within MAX_REPLICAS (the testbed's limit, docs/kube.md). */
export function replicasWithinLimit(obj: KubeObject): FieldCause[] {
  const r = (obj as { spec?: { replicas?: unknown } }).spec?.replicas;
  if (typeof r !== 'number' || !Number.isInteger(r) || r <= MAX_REPLICAS) return [];
  return [{ field: 'spec.replicas', message: `Invalid value: ${r}: must be less than or equal to ${MAX_REPLICAS} (the testbed's limit: Kubernetes supports clusters of up to 5,000 nodes)` }];
}

export function validateMachineSet(_op: 'CREATE' | 'UPDATE', obj: KubeObject): FieldCause[] {
  return replicasWithinLimit(obj);
}

export function validateMachineDeployment(_op: 'CREATE' | 'UPDATE', obj: KubeObject): FieldCause[] {
  const md = obj as MachineDeployment;
  const causes: FieldCause[] = [...nameIsLabelValue(obj), ...replicasWithinLimit(obj)];
  const ru = md.spec?.strategy?.rollingUpdate;
  if (md.spec?.replicas !== undefined && (!Number.isInteger(md.spec.replicas) || md.spec.replicas < 0)) {
    causes.push({ field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(md.spec.replicas)}: must be a non-negative integer` });
  }
  if (!ru) return causes;
  for (const k of ['maxSurge', 'maxUnavailable'] as const) {
    const v = ru[k];
    if (v === undefined) continue;
    if (typeof v === 'number' ? !Number.isInteger(v) || v < 0 : !PERCENT.test(v)) {
      causes.push({ field: `spec.strategy.rollingUpdate.${k}`, message: `Invalid value: ${JSON.stringify(v)}: must be either an int or a percentage (a string must end in %)`, rule: 'MD-1' });
    }
  }
  if (isZero(ru.maxSurge) && isZero(ru.maxUnavailable)) {
    causes.push({ field: 'spec.strategy.rollingUpdate', message: 'Invalid value: maxSurge and maxUnavailable cannot both be zero', rule: 'MD-1' });
  }
  return causes;
}

export function validateKcp(op: 'CREATE' | 'UPDATE', obj: KubeObject, old: KubeObject | undefined): FieldCause[] {
  const causes: FieldCause[] = [];
  const kcp = obj as KubeadmControlPlane;
  const spec = kcp.spec;
  if (!spec || typeof spec !== 'object') return [{ field: 'spec', message: 'Required value' }];
  if (!parseVersion(spec.version)) causes.push({ field: 'spec.version', message: `Invalid value: ${JSON.stringify(spec.version)}: must be a valid semantic version` });
  const replicas = spec.replicas ?? 1;
  causes.push(...replicasWithinLimit(obj));
  if (replicas <= 0) causes.push({ field: 'spec.replicas', message: 'Forbidden: cannot be less than or equal to 0' });
  else if (replicas % 2 === 0) {
    // Only stacked (local) etcd is modelled.
    causes.push({ field: 'spec.replicas', message: 'Forbidden: cannot be an even number when etcd is stacked' });
  }
  const ms = spec.rolloutStrategy?.rollingUpdate?.maxSurge;
  if (ms !== undefined && ms !== 0 && ms !== 1 && ms !== '0' && ms !== '1') {
    causes.push({ field: 'spec.rolloutStrategy.rollingUpdate.maxSurge', message: `Invalid value: ${JSON.stringify(ms)}: must be either 0 or 1`, rule: 'KCP-1' });
  } else if ((ms === 0 || ms === '0') && replicas < 3) {
    // Upstream: scale-in-first rollouts need at least 3 replicas to keep etcd quorum.
    causes.push({ field: 'spec.rolloutStrategy.rollingUpdate.maxSurge', message: `Invalid value: 0: maxSurge 0 needs at least 3 replicas (have ${replicas})`, rule: 'KCP-1' });
  }
  if (!spec.machineTemplate?.infrastructureRef?.name) causes.push({ field: 'spec.machineTemplate.infrastructureRef', message: 'Required value', rule: 'KCP-2' });
  if (op === 'UPDATE' && old) {
    const prev = (old as KubeadmControlPlane).spec?.version;
    const skip = minorSkipError(prev, spec.version);
    if (skip) causes.push({ field: 'spec.version', message: skip, rule: 'UPG-3' });
  }
  return causes;
}
