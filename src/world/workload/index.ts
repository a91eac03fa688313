/**
 * Workload-cluster simulation (docs/workload.md): the OS Support Matrix
 * (UPG-4), the AppRelease controller (OVN-4..6) and the version checks of the
 * control plane components (KCP-3, KCP-4).
 */
import type { ControllerContext } from '../../core/runtime/context.js';
import { setupAppReleaseController, type AppReleaseController, type AppReleaseTimings } from './apprelease.js';
import { defaultOsSupportMatrix, type OsSupportMatrix } from '../../product/matrix/matrix.js';
import { setupSystemPodsController, type SystemPodsController } from './system-pods.js';

export * from '../../product/matrix/matrix.js';
export * from './apprelease.js';
export * from '../../product/matrix/versions.js';
export * from './pods.js';
export * from './system-pods.js';
export * from './management.js';
export * from './drain.js';
export * from './kube-ovn-health.js';

export interface WorkloadControllers {
  appRelease: AppReleaseController;
  systemPods: SystemPodsController;
}

/** Register the workload-cluster controllers (AppRelease, system pods) on ctx.manager. */
export function setupWorkloadControllers(ctx: ControllerContext, opts: { matrix?: OsSupportMatrix; appReleaseTimings?: Partial<AppReleaseTimings> } = {}): WorkloadControllers {
  const matrix = opts.matrix ?? defaultOsSupportMatrix();
  return {
    appRelease: setupAppReleaseController(ctx, { matrix, ...(opts.appReleaseTimings ? { timings: opts.appReleaseTimings } : {}) }),
    systemPods: setupSystemPodsController(ctx, { matrix }),
  };
}
