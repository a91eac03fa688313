/**
 * Which resource a REST path names, as the apiserver's request info resolver
 * reads it (k8s.io/apiserver pkg/endpoints/request/requestinfo.go):
 * [namespaces/<ns>/]<plural>[/<name>[/<subresource>]], where
 * namespaces/<name>/<sub> is the Namespace itself when <sub> is not a
 * namespaced resource (namespaces/x/status, namespaces/x/finalize).
 */
import type { EmbeddedStore } from '../../../core/kube/embedded-store.js';
import { RESOURCES, type ResourceInfo } from '../../../core/kube/resources.js';
import type { Target } from '../http/context.js';

/** The route parameters of a resource path (the routes of plugins/resources.ts and plugins/watch.ts). */
export interface ResourceParams {
  group?: string;
  version?: string;
  namespace?: string;
  plural?: string;
  name?: string;
  sub?: string;
}

/** The path's segments after the group version, from the route's (decoded) parameters. */
export function segmentsOf(p: ResourceParams): string[] {
  const tail = [p.plural, p.name, p.sub].filter((s): s is string => s !== undefined);
  return p.namespace !== undefined ? ['namespaces', p.namespace, ...tail] : tail;
}

export function findResource(group: string, version: string, plural: string | undefined): ResourceInfo | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
}

/** The target of `segments` under group/version in `store`; undefined: no such resource (404). */
export function resolveTarget(store: EmbeddedStore, group: string, version: string, segments: string[]): Target | undefined {
  let rest = segments;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && findResource(group, version, rest[2])?.namespaced) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const info = findResource(group, version, rest[0]);
  if (!info || rest.length > 3) return undefined;
  if (namespace && !info.namespaced) return undefined;
  return { store, info, ...(namespace ? { namespace } : {}), ...(rest[1] ? { name: rest[1] } : {}), ...(rest[2] ? { sub: rest[2] } : {}) };
}

/** The target of a resource route's parameters (core: /api/v1, no group). */
export function targetOf(store: EmbeddedStore, p: ResourceParams): Target | undefined {
  return resolveTarget(store, p.group ?? '', p.version ?? 'v1', segmentsOf(p));
}

/** The routes of a resource path under each group version prefix (relative to a cluster's scope). */
export const RESOURCE_ROUTES: readonly string[] = ['/api/:version', '/apis/:group/:version'].flatMap((gv) => [
  `${gv}/:plural`,
  `${gv}/:plural/:name`,
  `${gv}/:plural/:name/:sub`,
  `${gv}/namespaces/:namespace/:plural`,
  `${gv}/namespaces/:namespace/:plural/:name`,
  `${gv}/namespaces/:namespace/:plural/:name/:sub`,
]);

/** The list routes (watch=true goes to plugins/watch.ts there). */
export const LIST_ROUTES: readonly string[] = ['/api/:version', '/apis/:group/:version'].flatMap((gv) => [`${gv}/:plural`, `${gv}/namespaces/:namespace/:plural`]);
