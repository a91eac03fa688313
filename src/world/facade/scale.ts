/**
 * The /scale subresource (autoscaling/v1 Scale) of the kinds whose upstream
 * CRDs declare one: Cluster API's MachineDeployment and MachineSet and
 * KubeadmControlPlane, all with
 * `+kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector`
 * (kubernetes-sigs/cluster-api api/v1beta1 machinedeployment_types.go,
 * machineset_types.go; controlplane/kubeadm/api/v1beta1
 * kubeadm_control_plane_types.go). `kubectl scale machinedeployment` reads
 * and patches it.
 */
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import { KubeApiError } from '../../core/kube/errors.js';
import { applyJsonPatch, applyMergePatch } from '../../core/kube/patch.js';
import type { KubeObject } from '../../core/kube/types.js';
import { CRDS } from '../../product/api/crds/definitions.js';

/** The kinds whose CRD (src/product/api/crds/definitions.ts, one source with a real kube-apiserver's) declares /scale. */
export const SCALE_KINDS: ReadonlySet<string> = new Set(CRDS.filter((c) => c.spec.versions.some((v) => v.subresources?.scale)).map((c) => c.spec.names.kind));

export interface Scale {
  kind: 'Scale';
  apiVersion: 'autoscaling/v1';
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; creationTimestamp?: string };
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

type Scalable = KubeObject & { spec?: { replicas?: number }; status?: { replicas?: number; selector?: string } };

export function toScale(o: Scalable): Scale {
  const m = o.metadata;
  const selector = o.status?.selector;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: m.name, ...(m.namespace ? { namespace: m.namespace } : {}), ...(m.uid ? { uid: m.uid } : {}), ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}), ...(m.creationTimestamp ? { creationTimestamp: m.creationTimestamp } : {}) },
    spec: { replicas: o.spec?.replicas ?? 1 },
    status: { replicas: o.status?.replicas ?? 0, ...(selector ? { selector } : {}) },
  };
}

function replicasOf(scale: unknown, plural: string, name: string, patched: boolean): { replicas: number; resourceVersion?: string } {
  const s = scale as Partial<Scale> | null;
  if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new KubeApiError('BadRequest', 'the body must be an autoscaling/v1 Scale object');
  if (s.kind !== undefined && s.kind !== 'Scale') throw new KubeApiError('BadRequest', `the kind of the body must be Scale, got ${String(s.kind)}`);
  const r = s.spec?.replicas;
  // autoscaling/v1 ScaleSpec.replicas is an int32: the apiserver cannot decode a larger Scale, as its json decoder words it.
  // A PUT body is 400; a patch is applied to the Scale's JSON first, and the result that does not decode is 422 on the field
  // "patch" (checked side by side with kube-apiserver: test/facade/apiserver-parity.test.ts).
  if (typeof r === 'number' && Number.isSafeInteger(r) && (r > 2 ** 31 - 1 || r < -(2 ** 31))) {
    const decode = `json: cannot unmarshal number ${r} into Go struct field ScaleSpec.spec.replicas of type int32`;
    if (!patched) throw new KubeApiError('BadRequest', `Scale in version "v1" cannot be handled as a Scale: ${decode}`, [{ field: 'spec.replicas', message: `Invalid value: ${r}: must fit an int32` }]);
    const value = `Invalid value: ${JSON.stringify(JSON.stringify(scale))}: ${decode}`;
    throw new KubeApiError('Invalid', ` "" is invalid: patch: ${value}`, [{ field: 'patch', message: value }]);
  }
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 0) {
    throw new KubeApiError('Invalid', `Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value: ${JSON.stringify(r ?? null)}: must be greater than or equal to 0`, [{ field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(r ?? null)}: must be an integer greater than or equal to 0` }]);
  }
  void plural;
  const rv = s.metadata?.resourceVersion;
  return { replicas: r, ...(rv ? { resourceVersion: rv } : {}) };
}

/** Serve GET / PUT / PATCH of <resource>/<name>/scale. */
export async function serveScale(
  store: EmbeddedStore,
  ref: { kind: string; namespace?: string; name: string },
  plural: string,
  method: string,
  body: () => unknown,
  patchType: 'merge' | 'json' | undefined,
  wo: { dryRun?: boolean; warnings?: string[] },
): Promise<Scale> {
  const cur = store.getSync<Scalable>(ref);
  if (!cur) throw KubeApiError.notFound(plural, ref.name);
  if (method === 'GET') return toScale(cur);
  let next: unknown;
  if (method === 'PUT') next = body();
  else if (method === 'PATCH') {
    if (!patchType) throw new KubeApiError('UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json');
    const p = body();
    next = patchType === 'merge' ? applyMergePatch(toScale(cur), p) : applyJsonPatch(toScale(cur), p);
  } else throw new KubeApiError('MethodNotAllowed', 'the server does not allow this method on the requested resource');
  const { replicas, resourceVersion } = replicasOf(next, plural, ref.name, method === 'PATCH');
  if (resourceVersion && resourceVersion !== cur.metadata.resourceVersion) {
    throw new KubeApiError('Conflict', `Operation cannot be fulfilled on ${plural} "${ref.name}": the object has been modified; please apply your changes to the latest version and try again`);
  }
  const updated = await store.patch<Scalable>(ref, 'merge', { spec: { replicas } }, wo);
  return toScale(updated);
}
