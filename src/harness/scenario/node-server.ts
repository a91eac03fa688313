/**
 * Whether a Node exists, compared with its server's state (issue 37; HCS-1:
 * the cloud's server states; what the site's cloud node lifecycle controller,
 * src/world/workload/node-lifecycle.ts, and Cluster API do with a Node). At
 * every quiescent instant, from the objects and the cloud only:
 *
 * - a Node is tied to its server through the infrastructure: the HCSMachine
 *   whose spec.providerID is the Node's holds the server in spec.serverId
 *   (remembered by the Node's uid, so it survives the HCSMachine);
 * - HCS-1: a Node whose server still exists — ACTIVE, or stopped (SHUTOFF):
 *   a stopped instance is not a deleted one (k8s.io/cloud-provider
 *   controllers/nodelifecycle: InstanceExistsByProviderID true → the Node is
 *   kept; InstanceShutdownByProviderID only taints it) — is never deleted
 *   while its Machine lives (not being deleted): nothing may remove it then;
 * - HCS-1: a Node whose server is gone (no longer listed, or DELETED) and
 *   which is not Ready is deleted within NODE_GONE_MS (the lifecycle
 *   controller monitors every 5 s; Cluster API deletes a Machine's Node itself).
 */
import type { HCSMachine } from '../../product/api/hcs.js';
import type { Machine } from '../../product/api/capi.js';
import { nodeReady, type Node } from '../../product/api/core.js';
import { listShared } from '../../core/kube/client.js';
import type { ContractFinding } from './disk-reuse.js';
import type { StateSource } from './world.js';

/** How long a NotReady Node may outlive its server (virtual ms). */
export const NODE_GONE_MS = 60_000;

interface Known {
  cluster: string;
  name: string;
  serverId: string;
  machine?: string;
}

export class NodeServerTracker {
  /** Node uid -> its cluster, name, server and Machine. */
  private readonly known = new Map<string, Known>();
  /** Node uid -> since when (virtual ms) its server is gone while it is NotReady. */
  private readonly orphanSince = new Map<string, number>();

  constructor(private readonly world: StateSource) {}

  /** A Node outliving its server is being timed: judge again when time passes, even if nothing changed. */
  pending(): boolean {
    return this.orphanSince.size > 0;
  }

  async findings(): Promise<ContractFinding[]> {
    const w = this.world;
    const now = w.clock.now();
    const out: ContractFinding[] = [];
    const byPid = new Map<string, HCSMachine>();
    for (const hm of await listShared<HCSMachine>(w.mgmt, 'HCSMachine')) if (hm.spec.providerID && hm.spec.serverId) byPid.set(`${hm.metadata.namespace}|${hm.spec.providerID}`, hm);
    const machines = await listShared<Machine>(w.mgmt, 'Machine');
    const machineOf = new Map<string, Machine>();
    for (const m of machines) {
      const ir = m.spec.infrastructureRef;
      if (ir?.name) machineOf.set(`${m.metadata.namespace}/${ir.name}`, m as Machine);
    }
    const serverState = (id: string): string | undefined => {
      const s = w.cloud.server(id);
      return s && s.status !== 'DELETED' ? s.status : undefined;
    };
    for (const key of w.workloads.names()) {
      const [ns] = key.split('/') as [string, string];
      const nodes = await listShared<Node>(w.workloads.client(ns, key.slice(ns.length + 1)), 'Node');
      const present = new Set<string>();
      for (const n of nodes) {
        const uid = n.metadata.uid;
        if (!uid) continue;
        present.add(uid);
        const hm = n.spec?.providerID ? byPid.get(`${ns}|${n.spec.providerID}`) : undefined;
        if (hm && !this.known.has(uid)) {
          const m = machineOf.get(`${ns}/${hm.metadata.name}`);
          this.known.set(uid, { cluster: key, name: n.metadata.name, serverId: hm.spec.serverId!, ...(m ? { machine: m.metadata.name } : {}) });
        }
        const k = this.known.get(uid);
        if (!k) continue;
        if (serverState(k.serverId) === undefined && !nodeReady(n)) {
          const since = this.orphanSince.get(uid) ?? now;
          this.orphanSince.set(uid, since);
          if (now - since >= NODE_GONE_MS) {
            out.push({ rule: 'HCS-1', key: `HCS-1/node-outlives-server/${uid}`, message: `Node ${n.metadata.name} of ${key} is NotReady and its server ${k.serverId} is gone for ${Math.round((now - since) / 1000)}s, but the Node still exists (the cloud node lifecycle deletes the Node of a server that no longer exists)`, refs: [n.metadata.name, k.serverId] });
          }
        } else this.orphanSince.delete(uid);
      }
      for (const [uid, k] of [...this.known]) {
        if (k.cluster !== key || present.has(uid)) continue;
        this.known.delete(uid);
        this.orphanSince.delete(uid);
        const state = serverState(k.serverId);
        const m = k.machine ? machines.find((x) => x.metadata.namespace === ns && x.metadata.name === k.machine) : undefined;
        if (state !== undefined && m && !m.metadata.deletionTimestamp) {
          out.push({ rule: 'HCS-1', key: `HCS-1/node-deleted/${uid}`, message: `Node ${k.name} of ${key} was deleted while its server ${k.serverId} is ${state} and its Machine ${k.machine} lives: a ${state === 'SHUTOFF' ? 'stopped' : 'running'} server's Node is kept (cloud node lifecycle: InstanceExistsByProviderID true)`, refs: [k.name, k.serverId, k.machine!] });
        }
      }
    }
    return out;
  }
}
