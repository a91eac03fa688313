/**
 * Structural OpenAPI v3 schemas (the subset CustomResourceDefinitions use)
 * and what the apiserver does with them on every write: prune unknown fields
 * (unless x-kubernetes-preserve-unknown-fields), then validate types,
 * required fields, enums and bounds. Messages follow kube-openapi's wording so
 * that `kubectl` output looks like a real cluster's.
 */
import type { FieldCause } from './errors.js';

export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps;
  required?: string[];
  enum?: (string | number | boolean)[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  nullable?: boolean;
  default?: unknown;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-map-type'?: 'granular' | 'atomic';
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  /**
   * CEL rules a real apiserver evaluates (the embedded store ignores them: the
   * same rules are enforced there by src/admission). Messages start with the
   * SPEC rule ID so that both backends name the rule.
   */
  'x-kubernetes-validations'?: ValidationRule[];
}

/** A CRD validation rule (apiextensions.k8s.io/v1 ValidationRule). */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A frozen object or array inside a write is a part of the stored object the
 * write left unchanged (the embedded store shares those, see share() in
 * embedded-store.ts): it was pruned and validated against the same schema
 * node when it was stored, so it is not walked again.
 */
const isStored = (v: unknown): boolean => typeof v === 'object' && v !== null && Object.isFrozen(v);

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/**
 * Remove fields the schema does not declare (in place). Returns the paths of
 * the removed fields (`spec.template.spec.foo`), which `fieldValidation=Strict`
 * turns into an error and `Warn` into warnings.
 */
export function prune(value: unknown, schema: JSONSchemaProps | undefined, path = ''): string[] {
  if (!schema || isStored(value)) return [];
  const out: string[] = [];
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((v, i) => out.push(...prune(v, schema.items, `${path}[${i}]`)));
    return out;
  }
  if (!isObj(value)) return out;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  for (const key of Object.keys(value)) {
    const p = join(path, key);
    const prop = schema.properties?.[key];
    if (prop) out.push(...prune(value[key], prop, p));
    else if (isObj(schema.additionalProperties)) out.push(...prune(value[key], schema.additionalProperties, p));
    else if (schema.additionalProperties === true || preserve || (embedded && ['apiVersion', 'kind', 'metadata'].includes(key))) continue;
    else if (schema.properties || schema.type === 'object') {
      delete value[key];
      out.push(p);
    }
  }
  return out;
}

/**
 * Largest magnitude a JSON number may have and still pass as an integer: the
 * apiserver decodes a number that is not an int64 literal (1e308, 2.5) as a
 * float64, and kube-openapi's type validator then takes it for an integer only
 * when swag/conv.IsFloat64AJSONInteger holds, i.e. |f| <= 2^53 and f whole
 * (kube-openapi pkg/validation/validate/type.go, typeValidator.Validate).
 * So `spec.replicas: 1e308` is refused with `must be of type integer: "number"`.
 */
const MAX_JSON_INTEGER = 2 ** 53;

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) <= MAX_JSON_INTEGER ? 'integer' : 'number';
  return typeof v;
}

function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
}

/** Validate a value against a structural schema; causes carry the apiserver's field paths and wording. */
export function validate(value: unknown, schema: JSONSchemaProps | undefined, path = ''): FieldCause[] {
  if (!schema || isStored(value)) return [];
  const causes: FieldCause[] = [];
  const t = typeName(value);
  const field = path || '<root>';
  if (value === undefined) return []; // absent (JS objects built in code may carry undefined keys)
  if (value === null) {
    if (schema.nullable || (!schema.type && !schema['x-kubernetes-int-or-string'])) return [];
    return [{ field, message: `Invalid value: "null": ${field} in body must be of type ${schema.type ?? 'object'}: "null"` }];
  }
  if (schema['x-kubernetes-int-or-string']) {
    if (t !== 'integer' && t !== 'string') causes.push({ field, message: `Invalid value: ${show(value)}: ${field} in body must be of type integer,string: "${t}"` });
    return causes;
  }
  if (schema.type) {
    const ok = schema.type === t || (schema.type === 'number' && t === 'integer');
    if (!ok) return [{ field, message: `Invalid value: "${t}": ${field} in body must be of type ${schema.type}: "${t}"` }];
  }
  if (schema.enum && !schema.enum.includes(value as string | number | boolean)) {
    causes.push({ field, message: `Unsupported value: ${show(value)}: supported values: ${schema.enum.map((e) => show(e)).join(', ')}` });
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) causes.push({ field, message: `Invalid value: ${value}: ${field} in body should be greater than or equal to ${schema.minimum}` });
    if (schema.maximum !== undefined && value > schema.maximum) causes.push({ field, message: `Invalid value: ${value}: ${field} in body should be less than or equal to ${schema.maximum}` });
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) causes.push({ field, message: `Invalid value: ${show(value)}: ${field} in body should be at least ${schema.minLength} chars long` });
    if (schema.maxLength !== undefined && value.length > schema.maxLength) causes.push({ field, message: `Too long: may not be longer than ${schema.maxLength}` });
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) causes.push({ field, message: `Invalid value: ${show(value)}: ${field} in body should match '${schema.pattern}'` });
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) causes.push({ field, message: `Invalid value: ${value.length}: ${field} in body should have at least ${schema.minItems} items` });
    if (schema.maxItems !== undefined && value.length > schema.maxItems) causes.push({ field, message: `Too many: ${value.length}: must have at most ${schema.maxItems} items` });
    value.forEach((v, i) => causes.push(...validate(v, schema.items, `${path}[${i}]`)));
  }
  if (isObj(value)) {
    for (const r of schema.required ?? []) if (value[r] === undefined || value[r] === null) causes.push({ field: join(path, r), message: 'Required value' });
    for (const [k, v] of Object.entries(value)) {
      const prop = schema.properties?.[k] ?? (isObj(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (prop) causes.push(...validate(v, prop, join(path, k)));
    }
  }
  return causes;
}

/** Walk a schema along a dotted path (`spec.template.spec`), for `kubectl explain`-like lookups. */
export function schemaAt(schema: JSONSchemaProps, path: string[]): JSONSchemaProps | undefined {
  let cur: JSONSchemaProps | undefined = schema;
  for (const p of path) {
    if (!cur) return undefined;
    if (cur.type === 'array') cur = cur.items;
    cur = cur?.properties?.[p] ?? (isObj(cur?.additionalProperties) ? (cur.additionalProperties as JSONSchemaProps) : undefined);
  }
  return cur;
}
