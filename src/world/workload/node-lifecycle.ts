/**
 * The cloud controller manager's node lifecycle controller in each workload
 * cluster, what a real HCS site runs beside Cluster API: a Node that is not
 * Ready and whose server no longer exists is deleted
 * (k8s.io/cloud-provider controllers/nodelifecycle: InstanceExistsByProviderID
 * false → delete, monitored every 5 s).
 *
 * It runs whichever Cluster API reconciles (the model or the upstream
 * managers): Cluster API itself never deletes the Node of a cluster without
 * an active control plane Machine (upstream machine_controller.go
 * isDeleteNodeAllowed → errNoControlPlaneNodes; the model follows it,
 * src/world/capi/machine-delete-gate.ts), so in the worker fixture (control plane
 * outside Cluster API) this is what removes a deleted Machine's Node.
 */
import type { Node } from '../../product/api/core.js';
import { nodeReady } from '../../product/api/core.js';
import type { Hypervisor } from '../../../mock-hcs/src/index.js';
import { listShared } from '../../core/kube/client.js';
import { providerIDFor } from '../../product/provider/labels.js';
import { META_CLUSTER, META_MACHINE, META_NAMESPACE } from '../../product/api/metadata.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import type { ControllerContext } from '../../core/runtime/context.js';
import { splitKey } from '../../core/kube/types.js';

export const NODE_LIFECYCLE_CONTROLLER = 'cloud-node-lifecycle';
/** k8s.io/cloud-provider node lifecycle controller's default monitor period. */
export const NODE_MONITOR_PERIOD_MS = 5_000;


class NodeLifecycle implements Controller {
  readonly name = NODE_LIFECYCLE_CONTROLLER;
  constructor(
    private readonly ctx: ControllerContext,
    private readonly hv: Hypervisor,
    private readonly workloadKeys: () => string[],
  ) {}

  async reconcile(): Promise<Result | void> {
    // The servers are read only when some Node is not Ready (most periods none is): the cloud's servers, as
    // "namespace|providerID" of the Machine each was made for.
    let live: Set<string> | undefined;
    const liveServers = (): Set<string> => {
      if (live) return live;
      live = new Set<string>();
      for (const { metadata: md } of this.hv.listServerMetadata()) {
        if (md[META_CLUSTER] && md[META_MACHINE]) live.add(`${md[META_NAMESPACE] ?? ''}|${providerIDFor(md[META_CLUSTER], md[META_MACHINE])}`);
      }
      return live;
    };
    for (const key of this.workloadKeys()) {
      const { namespace, name } = splitKey(key);
      const wl = this.ctx.workloads.client(namespace, name);
      for (const n of await listShared<Node>(wl, 'Node')) {
        const pid = n.spec?.providerID;
        if (!pid || nodeReady(n) || liveServers().has(`${namespace}|${pid}`)) continue;
        await wl.delete({ kind: 'Node', name: n.metadata.name }, { ignoreNotFound: true });
        this.ctx.events.record({ source: 'workload', type: 'node.deleted-by-cloud', message: `Node ${n.metadata.name} of ${key}: server of ${pid} no longer exists, deleted (cloud node lifecycle)`, data: { cluster: name, node: n.metadata.name } });
      }
    }
    return { requeueAfter: NODE_MONITOR_PERIOD_MS };
  }
}

/** Register the node lifecycle controller and start its monitor loop. */
export function setupNodeLifecycle(ctx: ControllerContext, hypervisor: Hypervisor, workloadKeys: () => string[]): void {
  ctx.manager.register(new NodeLifecycle(ctx, hypervisor, workloadKeys));
  ctx.manager.enqueue(NODE_LIFECYCLE_CONTROLLER, 'all');
}
