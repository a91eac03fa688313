/**
 * Simulated Cluster API core (cluster.x-k8s.io v1beta1) and the kubeadm
 * bootstrap provider. See docs/capi.md for what is modelled and the upstream
 * files each controller follows.
 */
import type { ControllerContext } from '../../core/runtime/context.js';
import { setupClusterController } from './cluster.js';
import { setupKubeadmBootstrapController } from './kubeadm-bootstrap.js';
import { setupMachineController } from './machine.js';
import { setupMachineDeploymentController } from './machinedeployment.js';
import { setupMachineSetController } from './machineset.js';
import { setupKubeadmControlPlaneController } from './kcp.js';

export { ClusterReconciler, CLUSTER_CONTROLLER, setupClusterController } from './cluster.js';
export { MachineDeploymentReconciler, MACHINEDEPLOYMENT_CONTROLLER, setupMachineDeploymentController } from './machinedeployment.js';
export { MachineSetReconciler, MACHINESET_CONTROLLER, setupMachineSetController } from './machineset.js';
export { MachineReconciler, MACHINE_CONTROLLER, setupMachineController, computePhase, DEFAULT_NODE_DELETION_TIMEOUT_MS } from './machine.js';
export {
  KubeadmControlPlaneReconciler,
  KCP_CONTROLLER,
  KCP_DEPLOYMENT,
  setupKubeadmControlPlaneController,
  decideKcp,
  aggregateMessage,
  preflightChecks,
  selectMachineForScaleDown,
  etcdHasQuorum,
  minorSkipError,
  LABEL_CONTROL_PLANE_NAME,
  ANN_KUBEADM_CLUSTER_CONFIGURATION,
  ANN_RESTORE_ETCD_QUORUM,
  ANN_ETCD_MEMBER_UNHEALTHY,
  ANN_CONTROL_PLANE_COMPONENTS_UNHEALTHY,
  CONTROL_PLANE_CONFIGMAP,
  type KcpAction,
  type KcpMachineView,
  type EtcdMemberRecord,
} from './kcp.js';
export { validateKcp } from './admission.js';
export * as rolloutPlanner from './rollout-planner.js';
export { ANN_DISABLE_MACHINE_CREATE } from './machineset.js';
export { KubeadmConfigReconciler, KUBEADMCONFIG_CONTROLLER, setupKubeadmBootstrapController } from './kubeadm-bootstrap.js';
export { caCertHash } from '../../core/pki/index.js';
export {
  renderJoinCloudInit,
  renderJoinConfiguration,
  renderInitCloudInit,
  renderInitConfiguration,
  JOIN_CONFIG_PATH,
  INIT_CONFIG_PATH,
  CA_CERT_PATH,
  CA_KEY_PATH,
  KUBEADM_JOIN_COMMAND,
  KUBEADM_INIT_COMMAND,
  KUBEADM_API_VERSION,
} from './cloudinit.js';
export { machinesToDelete, deletePriority, isMachineHealthy } from './delete-policy.js';
export * as mdutil from './mdutil.js';
export {
  ANN_REVISION,
  ANN_REVISION_HISTORY,
  ANN_DESIRED_REPLICAS,
  ANN_MAX_REPLICAS,
  ANN_DRAIN_BLOCKED,
  ANN_EXCLUDE_NODE_DRAINING,
  ANN_EXCLUDE_WAIT_FOR_VOLUME_DETACH,
  SECRET_TYPE_CLUSTER,
  CAPI_DEPLOYMENT,
  CAPBK_DEPLOYMENT,
} from './util.js';

/** Register every Cluster API controller with ctx.manager and its watches on ctx.mgmt (Nodes of workload clusters are watched lazily). */
export function setupCapiControllers(ctx: ControllerContext): void {
  setupClusterController(ctx);
  setupMachineDeploymentController(ctx);
  setupMachineSetController(ctx);
  setupMachineController(ctx);
  setupKubeadmBootstrapController(ctx);
  setupKubeadmControlPlaneController(ctx);
}
