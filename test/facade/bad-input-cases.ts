/**
 * The cases of the bad-input suite (bad-input.test.ts), generated, not
 * listed: every string field of every CRD the facade serves (walked from its
 * schema, src/product/api/crds), and the ObjectMeta strings of every kind
 * (built-in kinds have no schema here: their names, labels and annotations
 * are what reaches file names, paths and labels), each set in an otherwise
 * valid object to values at its limit, one over, and with path characters.
 */
import type { JSONSchemaProps } from '../../src/core/kube/schema.js';
import { RESOURCES, type ResourceInfo } from '../../src/core/kube/resources.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { schemaForKind } from '../../src/product/api/crds/index.js';

export interface BadInput {
  info: ResourceInfo;
  /** The field set, dotted, [] for array items (metadata.labels.<key> for a label). */
  field: string;
  label: string;
  obj: KubeObject;
}

/** Values of a string with `maxLength` (if any): at the limit, one over, path characters, very long. */
export function stringValues(maxLength?: number): { label: string; value: string }[] {
  return [
    ...(maxLength !== undefined ? [{ label: `at its limit (${maxLength})`, value: 'a'.repeat(maxLength) }, { label: `one over (${maxLength + 1})`, value: 'a'.repeat(maxLength + 1) }] : []),
    { label: 'a slash', value: 'a/b' },
    { label: 'dot-dot', value: '../../etc/passwd' },
    { label: '%00', value: 'a%00b' },
    { label: 'a NUL', value: 'a\u0000b' },
    { label: 'very long (10,000)', value: 'L'.repeat(10_000) },
  ];
}

/** The smallest value `schema` accepts (required properties filled). */
export function minimal(schema: JSONSchemaProps | undefined): unknown {
  if (!schema) return {};
  if (schema.enum?.length) return schema.enum[0];
  if (schema['x-kubernetes-int-or-string']) return 1;
  switch (schema.type) {
    case 'string':
      return schema.format === 'date-time' ? '2026-01-01T00:00:00Z' : 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return Math.max(1, schema.minimum ?? 1);
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => minimal(schema.items));
    default: {
      const o: Record<string, unknown> = {};
      for (const r of schema.required ?? []) o[r] = minimal(schema.properties?.[r]);
      return o;
    }
  }
}

/** Every string field of `schema` (paths from the object's root; status and metadata left out). */
export function stringFields(schema: JSONSchemaProps, path: string[] = []): { path: string[]; schema: JSONSchemaProps }[] {
  if (schema.type === 'string') return [{ path, schema }];
  if (schema.type === 'array' && schema.items) return stringFields(schema.items, [...path, '[]']);
  const out: { path: string[]; schema: JSONSchemaProps }[] = [];
  for (const [k, s] of Object.entries(schema.properties ?? {})) {
    if (path.length === 0 && (k === 'status' || k === 'metadata' || k === 'apiVersion' || k === 'kind')) continue;
    out.push(...stringFields(s, [...path, k]));
  }
  if (typeof schema.additionalProperties === 'object' && schema.additionalProperties.type === 'string') out.push({ path: [...path, 'key'], schema: schema.additionalProperties });
  return out;
}

/** Set `value` at `path` in `obj` (a copy), creating what is missing from `schema`. */
export function setAt(obj: unknown, schema: JSONSchemaProps, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (head === '[]') {
    const arr = Array.isArray(obj) ? [...(obj as unknown[])] : [];
    const item = schema.items ?? {};
    arr[0] = setAt(arr.length ? arr[0] : minimal(item), item, rest, value);
    return arr;
  }
  const o = typeof obj === 'object' && obj !== null && !Array.isArray(obj) ? { ...(obj as Record<string, unknown>) } : {};
  const sub = schema.properties?.[head] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : {});
  o[head] = setAt(o[head] ?? minimal(sub), sub, rest, value);
  return o;
}

/** The ObjectMeta strings of any kind: the name, a label key and value, an annotation. */
function metaCases(info: ResourceInfo, base: KubeObject, name: (i: number) => string): BadInput[] {
  const out: BadInput[] = [];
  let i = 0;
  const add = (field: string, label: string, meta: (m: KubeObject['metadata']) => KubeObject['metadata']): void => {
    const m = { ...base.metadata, name: name(i++) };
    out.push({ info, field, label, obj: { ...base, metadata: meta(m) } });
  };
  for (const { label, value } of stringValues(253)) add('metadata.name', label, (m) => ({ ...m, name: value }));
  for (const { label, value } of stringValues(63)) add('metadata.labels', `value ${label}`, (m) => ({ ...m, labels: { ...m.labels, app: value } }));
  for (const { label, value } of stringValues(63)) add('metadata.labels', `key ${label}`, (m) => ({ ...m, labels: { ...m.labels, [value]: 'v' } }));
  for (const { label, value } of stringValues()) add('metadata.annotations', label, (m) => ({ ...m, annotations: { ...m.annotations, [`example.com/${label.replace(/\W+/g, '-')}`]: value } }));
  return out;
}

/** A valid object of a kind: from `bases` (the presets' manifests), else the CRD schema's minimal object, else a bare one. */
function baseObject(info: ResourceInfo, bases: readonly KubeObject[]): KubeObject {
  const given = bases.find((b) => b.kind === info.kind);
  const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
  if (given) return JSON.parse(JSON.stringify(given)) as KubeObject;
  const schema = schemaForKind(info.kind);
  const body = (schema ? minimal(schema) : {}) as Record<string, unknown>;
  return { ...body, apiVersion, kind: info.kind, metadata: { name: 'base', ...(info.namespaced ? { namespace: 'default' } : {}) } } as KubeObject;
}

/** Every case, for every kind the facade serves. */
export function badInputs(bases: readonly KubeObject[]): BadInput[] {
  const out: BadInput[] = [];
  for (const info of RESOURCES) {
    const base = baseObject(info, bases);
    const short = info.kind.toLowerCase().slice(0, 12);
    const name = (i: number): string => `bi-${short}-${i}`;
    const metas = metaCases(info, base, name);
    out.push(...metas);
    const schema = schemaForKind(info.kind);
    if (!schema) continue;
    let i = metas.length;
    for (const f of stringFields(schema)) {
      for (const { label, value } of stringValues(f.schema.maxLength)) {
        const obj = setAt(base, schema, f.path, value) as KubeObject;
        obj.metadata = { ...base.metadata, name: name(i++) };
        out.push({ info, field: f.path.join('.'), label, obj });
      }
    }
  }
  return out;
}
