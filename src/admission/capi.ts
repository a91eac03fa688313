/**
 * Admission for Cluster API resources, as upstream's webhooks do it
 * (cluster-api internal/webhooks/machinedeployment.go: defaulting of the
 * strategy and validation of maxSurge/maxUnavailable).
 */
import type { MachineDeployment } from '../product/api/capi.js';
import type { FieldCause } from '../core/kube/errors.js';
import type { KubeObject } from '../core/kube/types.js';
import { labelValueErrors } from '../core/kube/object-meta.js';

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

export function validateMachineDeployment(_op: 'CREATE' | 'UPDATE', obj: KubeObject): FieldCause[] {
  const md = obj as MachineDeployment;
  const causes: FieldCause[] = nameIsLabelValue(obj);
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
