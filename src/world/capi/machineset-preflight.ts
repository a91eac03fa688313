/**
 * MachineSet preflight checks, as cluster-api v1.10.10
 * internal/controllers/machineset/machineset_preflight.go runs them before a
 * scale up (read, not copied). Feature gate MachineSetPreflightChecks: beta
 * since v1.9, default on (feature/feature.go); the core manager's
 * `--machineset-preflight-checks` flag enables all of them by default.
 *
 * With a control plane (Cluster spec.controlPlaneRef) whose spec.version is
 * set, a scale up waits while any of these fail:
 * - ControlPlaneIsStable: the control plane is provisioning (no
 *   status.version yet) or upgrading (spec.version > status.version,
 *   internal/contract/controlplane.go IsProvisioning / IsUpgrading);
 * - KubernetesVersionSkew: the MachineSet's version is a newer minor than the
 *   control plane's spec.version, or more than 3 minors older (2 below 1.28);
 * - KubeadmVersionSkew: with a KubeadmConfigTemplate bootstrap, the minors
 *   must be equal (kubeadm joins only the control plane's minor);
 * - ControlPlaneVersionSkew applies to ClusterClass clusters only (not modelled).
 * The annotation machineset.cluster.x-k8s.io/skip-preflight-checks
 * (comma-separated names, or "All") skips them.
 */
import type { MachineSet } from '../../product/api/capi.js';

export const ANN_SKIP_PREFLIGHT_CHECKS = 'machineset.cluster.x-k8s.io/skip-preflight-checks';
export const PREFLIGHT_FAILED_REQUEUE_MS = 15_000;

export type PreflightCheck = 'ControlPlaneIsStable' | 'KubernetesVersionSkew' | 'KubeadmVersionSkew' | 'ControlPlaneVersionSkew';

/** What the checks read of the control plane (the contract fields spec.version and status.version). */
export interface ControlPlaneView {
  kind: string;
  namespace?: string;
  name: string;
  specVersion?: string;
  statusVersion?: string;
}

export interface Semver {
  major: number;
  minor: number;
  patch: number;
  pre: string;
}

/** semver.ParseTolerant (blang/semver): an optional "v", missing minor/patch as 0; build metadata ignored. */
export function parseTolerant(v: string): Semver {
  const s = v.trim().replace(/^v/, '');
  const m = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(s);
  if (!m) throw new Error(`failed to parse version ${JSON.stringify(v)}`);
  return { major: Number(m[1]), minor: Number(m[2] ?? 0), patch: Number(m[3] ?? 0), pre: m[4] ?? '' };
}

function formatSemver(v: Semver): string {
  return `${v.major}.${v.minor}.${v.patch}${v.pre ? `-${v.pre}` : ''}`;
}

/** Compare: numeric major.minor.patch, then a release above its pre-releases (pre-releases compared as strings). */
export function compareSemver(a: Semver, b: Semver): number {
  for (const k of ['major', 'minor', 'patch'] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  if (a.pre === b.pre) return 0;
  if (!a.pre) return 1;
  if (!b.pre) return -1;
  return a.pre < b.pre ? -1 : 1;
}

function skipped(ms: MachineSet): Set<string> {
  const v = ms.metadata.annotations?.[ANN_SKIP_PREFLIGHT_CHECKS] ?? '';
  return new Set(v === '' ? [] : v.split(',').map((x) => x.trim()));
}

const KUBELET_SKEW_THREE = parseTolerant('1.28.0');

/**
 * runPreflightChecks for "Scale up": the messages of the failed checks
 * (empty: go ahead). `controlPlane` undefined means the Cluster has no
 * controlPlaneRef. Throws on versions that do not parse, as upstream returns
 * an error.
 */
export function scaleUpPreflightChecks(ms: MachineSet, controlPlane: ControlPlaneView | undefined, enabled = true): string[] {
  if (!enabled) return [];
  const skip = skipped(ms);
  if (skip.has('All') || !controlPlane || controlPlane.specVersion === undefined) return [];
  const ref = `${controlPlane.kind} ${controlPlane.namespace ? `${controlPlane.namespace}/` : ''}${controlPlane.name}`;
  const cp = parseTolerant(controlPlane.specVersion);
  const out: string[] = [];
  if (!skip.has('ControlPlaneIsStable')) {
    if (!controlPlane.statusVersion) out.push(`${ref} is provisioning ("ControlPlaneIsStable" preflight check failed)`);
    else if (compareSemver(cp, parseTolerant(controlPlane.statusVersion)) >= 1) out.push(`${ref} is upgrading ("ControlPlaneIsStable" preflight check failed)`);
  }
  const version = ms.spec.template.spec.version;
  if (version !== undefined) {
    const msv = parseTolerant(version);
    if (!skip.has('KubernetesVersionSkew')) {
      const skew = compareSemver(cp, KUBELET_SKEW_THREE) < 0 ? 2 : 3;
      if (msv.minor > cp.minor) {
        out.push(`MachineSet version (${formatSemver(msv)}) and ControlPlane version (${formatSemver(cp)}) do not conform to the kubernetes version skew policy as MachineSet version is higher than ControlPlane version ("KubernetesVersionSkew" preflight check failed)`);
      } else if (msv.minor < cp.minor - skew) {
        out.push(`MachineSet version (${formatSemver(msv)}) and ControlPlane version (${formatSemver(cp)}) do not conform to the kubernetes version skew policy as MachineSet version is more than ${skew} minor versions older than the ControlPlane version ("KubernetesVersionSkew" preflight check failed)`);
      }
    }
    const boot = ms.spec.template.spec.bootstrap?.configRef;
    // A reference without apiVersion (accepted by the model, which defaults it when cloning) counts as CABPK's.
    const kubeadm = boot?.kind === 'KubeadmConfigTemplate' && (boot.apiVersion === undefined || boot.apiVersion.split('/')[0] === 'bootstrap.cluster.x-k8s.io');
    if (!skip.has('KubeadmVersionSkew') && kubeadm && msv.minor !== cp.minor) {
      out.push(`MachineSet version (${formatSemver(msv)}) and ControlPlane version (${formatSemver(cp)}) do not conform to kubeadm version skew policy as kubeadm only supports joining with the same major+minor version as the control plane ("KubeadmVersionSkew" preflight check failed)`);
    }
  }
  return out;
}
