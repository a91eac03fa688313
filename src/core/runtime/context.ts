import type { Clock } from '../clock.js';
import { rfc3339 } from '../clock.js';
import type { EventLog, EventSource } from '../events.js';
import type { Rng } from '../rng.js';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../kube/types.js';
import type { Manager } from './manager.js';

/**
 * Where a client outside the process reaches a workload cluster's API server
 * (what goes into the `<cluster>-kubeconfig` Secret). The HTTP facade
 * registers itself when it listens; without it the Cluster's
 * spec.controlPlaneEndpoint is used, as upstream does.
 */
export interface WorkloadEndpoint {
  server: string;
  /** PEM of the CA that signed the server's certificate (default: the cluster CA). */
  certificateAuthorityData?: string;
  insecureSkipTlsVerify?: boolean;
  /** A bearer token the server accepts, added to the kubeconfig's user. */
  token?: string;
}

/** Access to the simulated (or real) workload clusters' APIs. */
export interface WorkloadClusters {
  /** The workload cluster's API (created on first use in the embedded backend). */
  client(namespace: string, clusterName: string): KubeClient;
  /** Known workload clusters as "namespace/name". */
  names(): string[];
  /** The served endpoint of a workload cluster's API, when one is served (see WorkloadEndpoint). */
  endpoint?(namespace: string, clusterName: string): WorkloadEndpoint | undefined;
  /** Called whenever the served endpoints change (a facade started or stopped). */
  onEndpointsChange?(listener: () => void): void;
}

export interface LogLine {
  t: string;
  level: 'info' | 'error';
  controller: string;
  msg: string;
  [k: string]: unknown;
}

/**
 * Structured controller logs, one stream per controller deployment
 * (OPS-3: `kubectl logs -n cpaas-system deployment/hcs-controller-manager`).
 */
export class ControllerLogs {
  private readonly lines = new Map<string, LogLine[]>();
  private readonly listeners = new Set<(deployment: string, line: LogLine) => void>();

  constructor(private readonly clock: Clock) {}

  /** Called with every line from now on (`kubectl logs -f`, the live dashboard). */
  subscribe(l: (deployment: string, line: LogLine) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  logger(deployment: string, controller: string): Logger {
    const push = (level: LogLine['level'], msg: string, kv?: Record<string, unknown>): void => {
      const arr = this.lines.get(deployment) ?? [];
      this.lines.set(deployment, arr);
      const line: LogLine = { t: rfc3339(this.clock.now()), level, controller, msg, ...kv };
      arr.push(line);
      for (const l of this.listeners) l(deployment, line);
    };
    return {
      info: (msg, kv) => push('info', msg, kv),
      error: (msg, kv) => push('error', msg, kv),
    };
  }

  /** Log lines of a deployment (e.g. "hcs-controller-manager"), as JSON lines like a zap logger prints them. */
  text(deployment: string): string {
    return (this.lines.get(deployment) ?? []).map((l) => JSON.stringify(l)).join('\n');
  }

  deployments(): string[] {
    return [...this.lines.keys()].sort();
  }
}

export interface Logger {
  info(msg: string, kv?: Record<string, unknown>): void;
  error(msg: string, kv?: Record<string, unknown>): void;
}

/** Kubernetes Events (shown by `kubectl describe`) plus a copy in the run's event log. */
export class EventRecorder {
  private seq = 0;
  constructor(
    private readonly client: KubeClient,
    private readonly events: EventLog,
    private readonly clock: Clock,
  ) {}

  async record(
    source: EventSource,
    component: string,
    obj: KubeObject,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
    rules?: string[],
  ): Promise<void> {
    this.events.record({
      source,
      type: `event.${reason}`,
      message: `${obj.kind} ${obj.metadata.namespace ? obj.metadata.namespace + '/' : ''}${obj.metadata.name}: ${reason}: ${message}`,
      data: { kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace, eventType: type, reason },
      ...(rules ? { rules } : {}),
    });
    await this.client.create(kubeEvent(obj, `${obj.metadata.name}.${(++this.seq).toString(16).padStart(8, '0')}`, component, type, reason, message, rfc3339(this.clock.now())));
  }
}

/** Everything a controller needs, passed in explicitly (no globals). */
export interface ControllerContext {
  clock: Clock;
  rng: Rng;
  events: EventLog;
  /** The management cluster API. */
  mgmt: KubeClient;
  workloads: WorkloadClusters;
  manager: Manager;
  logs: ControllerLogs;
  recorder: EventRecorder;
}

/**
 * A core/v1 Event about obj, as a recorder writes it (count 1, first = last
 * timestamp). Shared by the in-process recorder and the provider process's
 * one, which names events per process and annotates the rules.
 */
export function kubeEvent(
  obj: KubeObject,
  name: string,
  component: string,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
  now: string,
  annotations?: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: obj.metadata.namespace ?? 'default', ...(annotations ? { annotations } : {}) },
    involvedObject: { kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace, uid: obj.metadata.uid, apiVersion: obj.apiVersion },
    type,
    reason,
    message,
    source: { component },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  } as KubeObject;
}
