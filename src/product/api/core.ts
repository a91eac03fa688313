/** Kubernetes core/v1 types used by the testbed (Node, Secret, Namespace). */
import type { KubeObject, Typed } from '../../core/kube/types.js';

export interface NodeCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}
export interface NodeSpec {
  providerID?: string;
  unschedulable?: boolean;
  taints?: { key: string; value?: string; effect: string }[];
}
export interface NodeStatus {
  conditions?: NodeCondition[];
  addresses?: { type: string; address: string }[];
  nodeInfo?: { kubeletVersion: string; osImage?: string; kernelVersion?: string; containerRuntimeVersion?: string };
  volumesAttached?: { name: string; devicePath: string }[];
}
export type Node = Typed<NodeSpec, NodeStatus>;

export interface Secret extends KubeObject {
  type?: string;
  /** base64-encoded values, as on the wire. */
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export function nodeReady(n: Node): boolean {
  return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export function secretValue(s: Secret, key: string): string | undefined {
  const v = s.data?.[key];
  if (v !== undefined) return Buffer.from(v, 'base64').toString('utf8');
  return s.stringData?.[key];
}

/** A `kubernetes.io/tls`-shaped Secret's certificate and key (tls.crt, tls.key), when it holds both. */
export function tlsPairOf(s: Secret | undefined): { certPem: string; keyPem: string } | undefined {
  const certPem = s && secretValue(s, 'tls.crt');
  const keyPem = s && secretValue(s, 'tls.key');
  return certPem && keyPem ? { certPem, keyPem } : undefined;
}
