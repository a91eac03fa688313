/**
 * AppRelease (app.alauda.io/v1): the resource through which the platform
 * installs and upgrades a chart in a workload cluster (Kube-OVN, OVN-1 ...
 * OVN-5). The types and the reading of a release that both the provider
 * (src/product/provider/kubeovn.ts) and the workload cluster's controller
 * (src/world/workload/apprelease.ts, which models the phases) need.
 */
import type { Typed } from '../../core/kube/types.js';

export const APPRELEASE_API_VERSION = 'app.alauda.io/v1';

export type AppReleasePhase = 'Downloading' | 'Installing' | 'Upgrading' | 'Syncing' | 'HealthChecking' | 'Success' | 'DownloadFailed' | 'DeployFailed' | 'NotReady';
export const TRANSIENT_PHASES: readonly AppReleasePhase[] = ['Downloading', 'Installing', 'Upgrading', 'Syncing', 'HealthChecking'];
export const FAILED_PHASES: readonly AppReleasePhase[] = ['DownloadFailed', 'DeployFailed', 'NotReady'];

export interface AppReleaseChartSource {
  /** Chart name in the repository, e.g. acp/chart-cpaas-kube-ovn. */
  name: string;
  releaseName: string;
  targetRevision: string;
}
export interface AppReleaseSpec {
  destination?: { namespace?: string };
  source: { charts: AppReleaseChartSource[] };
  values?: Record<string, unknown>;
}
export interface AppReleaseCondition {
  type: 'Validate' | 'Sync' | 'Health' | string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}
export interface AppReleaseChartStatus {
  /** The chart revision Helm has applied. Moves to the target at HealthChecking, before the pods are verified (OVN-6). */
  installedRevision?: string;
  phase: AppReleasePhase;
  /** The revision this phase works towards. */
  targetRevision?: string;
  message?: string;
  lastTransitionTime?: string;
}
export interface AppReleaseStatus {
  /** Keyed by chart name. */
  charts?: Record<string, AppReleaseChartStatus>;
  conditions?: AppReleaseCondition[];
  observedGeneration?: number;
  /** Fingerprint of the values last synced (Syncing when it changes). */
  valuesHash?: string;
}
export type AppRelease = Typed<AppReleaseSpec, AppReleaseStatus>;

/** The first chart of the release and its status. */
export function chartOf(ar: AppRelease): { source?: AppReleaseChartSource; status?: AppReleaseChartStatus } {
  const source = ar.spec.source?.charts?.[0];
  return { ...(source ? { source } : {}), ...(source && ar.status?.charts?.[source.name] ? { status: ar.status.charts[source.name] } : {}) };
}
