/**
 * apps/v1 Deployments and core/v1 Pods standing for the controller processes
 * (capi-controller-manager, hcs-controller-manager, ...), so that
 * `kubectl logs -n cpaas-system deployment/hcs-controller-manager` resolves a
 * pod through the deployment's selector, as on a real cluster, and the pod's
 * log subresource returns ControllerLogs.text(<deployment>) (OPS-3).
 */
import { createHash } from 'node:crypto';
import { rfc3339, type Clock } from '../../core/clock.js';
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import type { KubeObject } from '../../core/kube/types.js';

export const CONTROLLER_NAMESPACE = 'cpaas-system';
/** Annotation on the pods: the ControllerLogs stream their log comes from. */
export const ANN_LOG_STREAM = 'hcs-testbed.io/log-stream';
export const KNOWN_CONTROLLER_DEPLOYMENTS = [
  'capi-controller-manager',
  'capi-kubeadm-bootstrap-controller-manager',
  'capi-kubeadm-control-plane-controller-manager',
  'hcs-controller-manager',
];

function hash(s: string, n: number): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const h = createHash('sha256').update(s).digest();
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[h[i]! % alphabet.length];
  return out;
}

export function controllerPodName(deployment: string): string {
  return `${deployment}-${hash(deployment, 10)}-${hash(deployment + '/pod', 5)}`;
}

/** Namespaces every cluster has (kubectl looks the namespace up to explain a NotFound). */
export const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease', CONTROLLER_NAMESPACE];

export async function ensureNamespaces(store: EmbeddedStore, names: string[] = DEFAULT_NAMESPACES): Promise<void> {
  for (const name of names) {
    if (store.getSync({ kind: 'Namespace', name })) continue;
    await store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'kubernetes.io/metadata.name': name } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } } as KubeObject);
  }
}

/** Create (once) the Deployment and Pod of each named controller deployment. */
export async function ensureControllerObjects(store: EmbeddedStore, deployments: string[], clock: Clock, namespace = CONTROLLER_NAMESPACE): Promise<void> {
  for (const name of deployments) {
    if (store.getSync({ kind: 'Deployment', namespace, name })) continue;
    const labels = { 'control-plane': 'controller-manager', 'app.kubernetes.io/name': name };
    const container = { name: 'manager', image: `registry.hcs-testbed.local/${name}:simulated`, args: ['--leader-elect'] };
    await store.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace, labels },
      spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [container] } } },
      status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1, observedGeneration: 1 },
    } as KubeObject);
    const started = rfc3339(clock.now());
    await store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: controllerPodName(name), namespace, labels, annotations: { [ANN_LOG_STREAM]: name, 'kubectl.kubernetes.io/default-container': 'manager' } },
      spec: { containers: [container], nodeName: 'management-control-plane', restartPolicy: 'Always' },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: started }],
        containerStatuses: [{ name: 'manager', ready: true, started: true, restartCount: 0, image: container.image, imageID: '', state: { running: { startedAt: started } } }],
        startTime: started,
      },
    } as KubeObject);
  }
}
