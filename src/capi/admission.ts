/**
 * Admission rules for KubeadmControlPlane, as upstream's validating webhook
 * (controlplane/kubeadm/internal/webhooks/kubeadm_control_plane.go) states
 * the ones the testbed relies on. The lead installs it with
 * `store.addValidator('KubeadmControlPlane', validateKcp)`; the KCP controller
 * enforces UPG-3 on its own as well (condition VersionUpgradeAllowed).
 */
import type { KubeadmControlPlane } from '../product/api/capi.js';
import type { FieldCause } from '../core/kube/errors.js';
import type { KubeObject } from '../core/kube/types.js';
import { minorSkipError, parseVersion } from './kcp.js';

export function validateKcp(op: 'CREATE' | 'UPDATE', obj: KubeObject, old: KubeObject | undefined): FieldCause[] {
  const causes: FieldCause[] = [];
  const kcp = obj as KubeadmControlPlane;
  const spec = kcp.spec;
  if (!spec || typeof spec !== 'object') return [{ field: 'spec', message: 'Required value' }];
  if (!parseVersion(spec.version)) causes.push({ field: 'spec.version', message: `Invalid value: ${JSON.stringify(spec.version)}: must be a valid semantic version` });
  const replicas = spec.replicas ?? 1;
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
