/**
 * Discovery (/api, /apis, /api/v1, /apis/<group>/<version>) and the OpenAPI
 * v3 documents kubectl reads (/openapi/v3, /openapi/v3/apis/<g>/<v>).
 *
 * What kubectl 1.33 needs from OpenAPI: `apply`/`edit`/`patch` with the
 * default `--validate=strict` ask the OpenAPI v3 document of the group
 * version whether the PATCH operation of the kind takes the `fieldValidation`
 * query parameter; if so validation happens on the server (Strict: unknown
 * fields are rejected). `kubectl explain` reads the schemas under
 * components.schemas, found by their x-kubernetes-group-version-kind.
 * /openapi/v2 is not served (404): kubectl only uses it as a fallback for
 * strategic-merge metadata, and custom resources use JSON merge patches.
 */
import { crdForKind, type JSONSchemaProps } from '../../product/api/crds/index.js';
import { BUILTIN_GROUPS, RESOURCES, type ResourceInfo } from '../../core/kube/resources.js';
import { SCALE_KINDS } from './scale.js';

export const SERVER_VERSION = { major: '1', minor: '33', gitVersion: 'v1.33.0+hcs-testbed', gitCommit: '0000000000000000000000000000000000000000', gitTreeState: 'clean', buildDate: '2025-01-01T00:00:00Z', goVersion: 'go1.24.0', compiler: 'gc', platform: 'linux/amd64' };

/**
 * Built-in kinds in the `all` category, as the apiserver lists them (pods, services,
 * replicationcontrollers, deployments, replicasets, statefulsets, daemonsets, jobs,
 * cronjobs, horizontalpodautoscalers); namespaces, secrets, configmaps, events and
 * nodes are not: `kubectl get all -A` does not show them.
 */
export const ALL_CATEGORY = new Set(['Pod', 'Service', 'ReplicationController', 'Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'HorizontalPodAutoscaler']);

const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

export function groupVersions(): { group: string; version: string }[] {
  const seen = new Map<string, { group: string; version: string }>();
  for (const r of RESOURCES) seen.set(`${r.group}/${r.version}`, { group: r.group, version: r.version });
  return [...seen.values()];
}

export function resourcesOf(group: string, version: string): ResourceInfo[] {
  return RESOURCES.filter((r) => r.group === group && r.version === version);
}

export function apiVersions(serverAddress: string): unknown {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function apiGroup(group: string): unknown {
  const versions = groupVersions()
    .filter((gv) => gv.group === group)
    .map((gv) => ({ groupVersion: `${group}/${gv.version}`, version: gv.version }));
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions, preferredVersion: versions[0] };
}

export function apiGroupList(): unknown {
  const groups = [...new Set(groupVersions().map((gv) => gv.group).filter((g) => g !== ''))].sort();
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => apiGroup(g)) };
}

export function apiGroupInfo(group: string): unknown | undefined {
  return groupVersions().some((gv) => gv.group === group) ? apiGroup(group) : undefined;
}

export function apiResourceList(group: string, version: string): unknown | undefined {
  const rs = resourcesOf(group, version);
  if (rs.length === 0) return undefined;
  const resources: unknown[] = [];
  for (const r of rs) {
    const crd = crdForKind(r.kind);
    resources.push({
      name: r.plural,
      singularName: r.kind.toLowerCase(),
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.kind === 'Event' || r.kind === 'Pod' || r.kind === 'Deployment' ? VERBS : [...VERBS, 'deletecollection'].sort(),
      ...(r.shortNames ? { shortNames: r.shortNames } : {}),
      ...(crd?.spec.names.categories ? { categories: crd.spec.names.categories } : ALL_CATEGORY.has(r.kind) ? { categories: ['all'] } : {}),
      storageVersionHash: Buffer.from(`${r.group}/${r.version}/${r.kind}`).toString('base64').slice(0, 11),
    });
    if (r.statusSubresource) resources.push({ name: `${r.plural}/status`, singularName: '', namespaced: r.namespaced, kind: r.kind, verbs: ['get', 'patch', 'update'] });
    if (r.kind === 'Pod') {
      // pods/eviction as the apiserver lists it: kubectl drain looks for this entry (group policy, version v1, kind Eviction).
      resources.push({ name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] });
      resources.push({ name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] });
    }
    if (SCALE_KINDS.has(r.kind)) resources.push({ name: `${r.plural}/scale`, singularName: '', namespaced: r.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
}

// ---- OpenAPI v3 ----------------------------------------------------------------

function modelName(r: ResourceInfo): string {
  if (!r.group) return `io.k8s.api.core.${r.version}.${r.kind}`;
  if (r.group === 'apps') return `io.k8s.api.apps.${r.version}.${r.kind}`;
  return `${r.group.split('.').reverse().join('.')}.${r.version}.${r.kind}`;
}

const OBJECT_META: JSONSchemaProps = {
  type: 'object',
  description: 'Standard object metadata.',
  properties: {
    name: { type: 'string' },
    generateName: { type: 'string' },
    namespace: { type: 'string' },
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    generation: { type: 'integer', format: 'int64' },
    creationTimestamp: { type: 'string', format: 'date-time' },
    deletionTimestamp: { type: 'string', format: 'date-time' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
    finalizers: { type: 'array', items: { type: 'string' } },
    ownerReferences: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  },
};

/** The OpenAPI v3 document of one group version, or undefined. */
export function openApiV3(group: string, version: string): unknown | undefined {
  const rs = resourcesOf(group, version);
  if (rs.length === 0) return undefined;
  const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {
    'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': OBJECT_META,
    'io.k8s.apimachinery.pkg.apis.meta.v1.Patch': { type: 'object', description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.' },
    'io.k8s.apimachinery.pkg.apis.meta.v1.Status': { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  };
  const param = (name: string, in_: 'query' | 'path', description: string): unknown => ({ name, in: in_, description, ...(in_ === 'path' ? { required: true } : {}), schema: { type: 'string', uniqueItems: true } });
  const writeParams = [
    param('dryRun', 'query', 'When present, indicates that modifications should not be persisted.'),
    param('fieldManager', 'query', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
    param('fieldValidation', 'query', 'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.'),
  ];
  for (const r of rs) {
    const model = modelName(r);
    const gvk = { group: r.group, version: r.version, kind: r.kind };
    const ref = { $ref: `#/components/schemas/${model}` };
    const crdSchema = crdForKind(r.kind)?.spec.versions[0]?.schema.openAPIV3Schema;
    const base: JSONSchemaProps = crdSchema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    schemas[model] = {
      ...base,
      properties: { ...(base.properties ?? {}), metadata: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' } },
      'x-kubernetes-group-version-kind': [gvk],
    };
    const json = (schema: unknown): unknown => ({ content: { 'application/json': { schema } } });
    const op = (action: string, extra: Record<string, unknown> = {}): unknown => ({
      operationId: `${action}${r.kind}`,
      responses: { '200': { description: 'OK', ...(json(ref) as object) } },
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': gvk,
      ...extra,
    });
    const nsSeg = r.namespaced ? '/namespaces/{namespace}' : '';
    const pathParams = [...(r.namespaced ? [param('namespace', 'path', 'object name and auth scope, such as for teams and projects')] : []), param('name', 'path', `name of the ${r.kind}`)];
    const patchOp = op('patch', {
      parameters: [...writeParams, param('force', 'query', 'Force is going to "force" Apply requests.')],
      requestBody: {
        content: Object.fromEntries(
          ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml', ...(BUILTIN_GROUPS.has(r.group) ? ['application/strategic-merge-patch+json'] : [])].map((t) => [
            t,
            { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } },
          ]),
        ),
        required: true,
      },
    });
    paths[`${prefix}${nsSeg}/${r.plural}`] = {
      get: op('list', { parameters: [param('labelSelector', 'query', ''), param('fieldSelector', 'query', ''), param('watch', 'query', '')] }),
      post: op('post', { parameters: writeParams, requestBody: { ...(json(ref) as object), required: true } }),
      parameters: r.namespaced ? [param('namespace', 'path', 'object name and auth scope')] : [],
    };
    paths[`${prefix}${nsSeg}/${r.plural}/{name}`] = {
      get: op('get'),
      put: op('put', { parameters: writeParams, requestBody: { ...(json(ref) as object), required: true } }),
      patch: patchOp,
      delete: op('delete'),
      parameters: pathParams,
    };
    if (r.statusSubresource) {
      paths[`${prefix}${nsSeg}/${r.plural}/{name}/status`] = { get: op('get'), put: op('put', { parameters: writeParams }), patch: patchOp, parameters: pathParams };
    }
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion }, paths, components: { schemas } };
}

/** The /openapi/v3 index: one entry per group version. */
export function openApiV3Index(base: string): unknown {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const gv of groupVersions()) {
    const p = gv.group ? `apis/${gv.group}/${gv.version}` : `api/${gv.version}`;
    paths[p] = { serverRelativeURL: `${base}/openapi/v3/${p}?hash=${Buffer.from(p).toString('hex').slice(0, 32).toUpperCase()}` };
  }
  return { paths };
}
