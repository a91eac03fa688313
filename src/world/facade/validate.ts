/**
 * Checks the facade makes on a request before anything is written, so that a
 * client's mistake is a 4xx Status and a refused write changes nothing:
 *
 * - body nesting depth (a 10,000-deep JSON document is a 400, not a stack overflow);
 * - metadata.labels / metadata.annotations values, Secret / ConfigMap data values
 *   must be strings (422 naming the field, as the apiserver's ObjectMeta
 *   validation and decoding refuse them), Secret data base64;
 * - an object whose kind has a spec keeps one: a merge patch {"spec": null}
 *   on a MachineDeployment is 422 `spec: Required value` (the object stays
 *   intact and writable);
 * - a create carrying metadata.resourceVersion is refused with the
 *   apiserver's own words (k8s.io/apiserver storage: "resourceVersion should
 *   not be set on objects to be created"; the apiserver answers it as a 500,
 *   e.g. operator-framework/java-operator-sdk#2033, fabric8io/kubernetes-client#734).
 */
import { schemaForKind } from '../../product/api/crds/index.js';
import { KubeApiError, type FieldCause } from '../../core/kube/errors.js';
import type { ResourceInfo } from '../../core/kube/resources.js';
import type { KubeObject } from '../../core/kube/types.js';

export const MAX_BODY_DEPTH = 1000;

/** Deepest nesting of objects and arrays in a JSON text (strings skipped), without parsing it. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91 /* { [ */) {
      if (++depth > max) max = depth;
    } else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/** Nesting depth of a parsed value (YAML bodies), iteratively. */
export function valueDepth(v: unknown, limit: number): number {
  let max = 0;
  const stack: [unknown, number][] = [[v, 1]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (typeof x !== 'object' || x === null) continue;
    if (d > max) max = d;
    if (max > limit) return max;
    for (const c of Array.isArray(x) ? x : Object.values(x)) if (typeof c === 'object' && c !== null) stack.push([c, d + 1]);
  }
  return max;
}

const describe = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

function stringMap(v: unknown, field: string, causes: FieldCause[]): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'object' || Array.isArray(v)) {
    causes.push({ field, message: `Invalid value: ${describe(v)}: must be a map of string keys to string values` });
    return;
  }
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (typeof x !== 'string') causes.push({ field: `${field}.${k}`, message: `Invalid value: ${JSON.stringify(x)}: must be a string (got ${describe(x)})` });
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Refuse non-string label, annotation and data values (422 Invalid, the field named). */
export function checkValueTypes(obj: KubeObject, info: ResourceInfo): void {
  const causes: FieldCause[] = [];
  const meta = obj.metadata as unknown;
  if (meta !== undefined && (typeof meta !== 'object' || meta === null || Array.isArray(meta))) causes.push({ field: 'metadata', message: `Invalid value: ${describe(meta)}: must be an object` });
  else {
    stringMap(obj.metadata?.labels, 'metadata.labels', causes);
    stringMap(obj.metadata?.annotations, 'metadata.annotations', causes);
    for (const k of ['name', 'namespace', 'generateName', 'resourceVersion'] as const) {
      const x = (obj.metadata as unknown as Record<string, unknown> | undefined)?.[k];
      if (x !== undefined && x !== null && typeof x !== 'string') causes.push({ field: `metadata.${k}`, message: `Invalid value: ${JSON.stringify(x)}: must be a string` });
    }
  }
  const o = obj as KubeObject & { data?: unknown; stringData?: unknown; binaryData?: unknown };
  if (info.kind === 'Secret' || info.kind === 'ConfigMap') {
    stringMap(o.data, 'data', causes);
    if (info.kind === 'Secret') {
      stringMap(o.stringData, 'stringData', causes);
      if (o.data && typeof o.data === 'object') {
        for (const [k, x] of Object.entries(o.data as Record<string, unknown>)) {
          if (typeof x === 'string' && !BASE64.test(x)) causes.push({ field: `data.${k}`, message: 'Invalid value: illegal base64 data' });
        }
      }
    } else stringMap(o.binaryData, 'binaryData', causes);
  }
  if (causes.length) throw KubeApiError.invalid(info.group ? `${info.kind}.${info.group}` : info.kind, obj.metadata?.name ?? '', causes);
}

/** Kinds whose schema gives spec required fields must keep a spec object. */
export function checkSpec(obj: KubeObject, info: ResourceInfo): void {
  const schema = schemaForKind(info.kind);
  const spec = schema?.properties?.spec;
  if (!spec || !(spec.required?.length)) return;
  const v = (obj as { spec?: unknown }).spec;
  if (v === undefined || v === null) throw KubeApiError.invalid(`${info.kind}.${info.group}`, obj.metadata?.name ?? '', [{ field: 'spec', message: 'Required value' }]);
  if (typeof v !== 'object' || Array.isArray(v)) throw KubeApiError.invalid(`${info.kind}.${info.group}`, obj.metadata?.name ?? '', [{ field: 'spec', message: `Invalid value: "${describe(v)}": spec in body must be of type object: "${describe(v)}"` }]);
}

/** A create may not carry metadata.resourceVersion (the apiserver's message and code). */
export function checkCreate(obj: KubeObject): void {
  const rv = obj.metadata?.resourceVersion;
  if (rv !== undefined && rv !== null && rv !== '' && rv !== '0') throw new KubeApiError('InternalError', 'resourceVersion should not be set on objects to be created');
}

/** Every check for an object about to be created or replaced. */
export function checkWrite(obj: KubeObject, info: ResourceInfo): void {
  checkValueTypes(obj, info);
  checkSpec(obj, info);
}
