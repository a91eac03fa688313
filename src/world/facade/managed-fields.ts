/**
 * metadata.managedFields for server-side apply (kubectl apply --server-side):
 * one `operation: Apply` entry per field manager, with the fields it applied
 * in FieldsV1 form (`f:<field>` per object key, as the apiserver records
 * them). Simplified: a list is owned whole (`f:<list>: {}`), without the
 * apiserver's per-item `k:{…}` / `v:…` keys, and there is no conflict
 * detection between managers (docs/kube.md "What is not served").
 */
import { rfc3339 } from '../../core/clock.js';
import { KubeApiError } from '../../core/kube/errors.js';
import type { KubeObject } from '../../core/kube/types.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
}

type Json = Record<string, unknown>;

function fieldsOf(v: Json): Json {
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) {
    out[`f:${k}`] = typeof x === 'object' && x !== null && !Array.isArray(x) && Object.keys(x).length ? fieldsOf(x as Json) : {};
  }
  return out;
}

/** The FieldsV1 set of an applied configuration (apiVersion, kind, name and namespace are not fields anyone owns). */
export function appliedFields(body: KubeObject): Json {
  const { apiVersion: _a, kind: _k, metadata, ...rest } = body as KubeObject & Json;
  const { name: _n, namespace: _ns, resourceVersion: _rv, managedFields: _mf, ...meta } = (metadata ?? {}) as unknown as Json;
  return fieldsOf({ ...(Object.keys(meta).length ? { metadata: meta } : {}), ...rest });
}

/** fieldManager is required for apply, as the apiserver says. */
export function requireFieldManager(fieldManager: string | undefined): string {
  if (!fieldManager) throw new KubeApiError('Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', [{ field: 'fieldManager', message: 'Required value: is required for apply patch' }]);
  return fieldManager;
}

/** The object's managedFields after `manager` applied `body` at `nowMs`. */
export function withApplyEntry(current: ManagedFieldsEntry[] | undefined, manager: string, body: KubeObject, nowMs: number): ManagedFieldsEntry[] {
  const entry: ManagedFieldsEntry = { manager, operation: 'Apply', apiVersion: body.apiVersion, time: rfc3339(nowMs), fieldsType: 'FieldsV1', fieldsV1: appliedFields(body) };
  return [...(current ?? []).filter((e) => !(e.manager === manager && e.operation === 'Apply')), entry];
}
