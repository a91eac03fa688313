/**
 * A small schema language for custom resources: each builder gives the
 * OpenAPI v3 schema a CRD carries (JSONSchemaProps, key order as the CRDs
 * have always been written) and, as a phantom type, the TypeScript type of the
 * values it admits — so one description yields both the CRD and the type the
 * code reads (`type HCSMachineSpec = Infer<typeof hcsMachineSpec>`; issue 33,
 * "one source per fact").
 *
 * Optional by default, as in the schema. An object's `required` keys are
 * required by the schema and the type. Its `assured` keys are required by the
 * type only: something else guarantees them (admission names the rule, or
 * the provider is the only writer), and the description says what.
 */
import type { JSONSchemaProps } from './schema.js';

declare const VALUE: unique symbol;

/** A schema and, as a phantom, the type of the values it describes. */
export interface Schema<V> {
  readonly json: JSONSchemaProps;
  readonly [VALUE]?: V;
}

/** The type a schema describes. */
export type Infer<S> = S extends Schema<infer V> ? V : never;

type Props = Record<string, Schema<unknown>>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The object type of `P`: keys in `R` (required) or `A` (assured) present, the others optional. */
export type ObjectOf<P extends Props, R extends keyof P, A extends keyof P> = Simplify<
  { -readonly [K in R | A]-?: Infer<P[K]> } & { -readonly [K in Exclude<keyof P, R | A>]?: Infer<P[K]> }
>;

const schema = <V>(json: JSONSchemaProps): Schema<V> => ({ json });
const described = (description?: string): { description?: string } => (description ? { description } : {});

export function string(description?: string, extra: Partial<JSONSchemaProps> = {}): Schema<string> {
  return schema({ type: 'string', ...described(description), ...extra });
}

/** A string from `values` (the schema's enum). */
export function oneOf<const T extends string>(values: readonly T[], description?: string): Schema<T> {
  return schema({ type: 'string', ...described(description), enum: [...values] });
}

export function int(description?: string, extra: Partial<JSONSchemaProps> = {}): Schema<number> {
  return schema({ type: 'integer', format: 'int32', ...described(description), ...extra });
}

export function int64(): Schema<number> {
  return schema({ type: 'integer', format: 'int64' });
}

export function bool(description?: string): Schema<boolean> {
  return schema({ type: 'boolean', ...described(description) });
}

/** RFC 3339 time, as a string. */
export function dateTime(description?: string): Schema<string> {
  return string(description, { format: 'date-time' });
}

export function array<V>(items: Schema<V>, description?: string, extra: Partial<JSONSchemaProps> = {}): Schema<V[]> {
  return schema({ type: 'array', ...described(description), items: items.json, ...extra });
}

/** String keys to `values` (additionalProperties). */
export function map<V>(values: Schema<V>, description?: string): Schema<Record<string, V>> {
  return schema({ type: 'object', ...described(description), additionalProperties: values.json });
}

/** String keys to strings. */
export function stringMap(description?: string): Schema<Record<string, string>> {
  return schema({ type: 'object', ...described(description), additionalProperties: { type: 'string' } });
}

export function intOrString(description?: string): Schema<number | string> {
  return schema({ 'x-kubernetes-int-or-string': true, ...described(description) });
}

/** Any object, kept as given (x-kubernetes-preserve-unknown-fields). */
export function preserved(description?: string): Schema<Record<string, unknown>> {
  return schema({ type: 'object', ...described(description), 'x-kubernetes-preserve-unknown-fields': true });
}

/** An object schema, with its property names and the keys its type requires beyond the schema (for admission to check). */
export interface ObjectSchema<V, A extends string = string> extends Schema<V> {
  readonly keys: readonly string[];
  readonly assured: readonly A[];
}

export function object<const P extends Props, const R extends keyof P & string = never, const A extends keyof P & string = never>(
  properties: P,
  o: {
    required?: readonly R[];
    /** Keys the type requires although the schema does not; `assuredBy` says what guarantees them. */
    assured?: readonly A[];
    assuredBy?: string;
    description?: string;
    extra?: Partial<JSONSchemaProps>;
  } = {},
): ObjectSchema<ObjectOf<P, R, A>, A> {
  if (o.assured?.length && !o.assuredBy) throw new Error(`schema: assured keys ${o.assured.join(', ')} need assuredBy (what guarantees them)`);
  const props: Record<string, JSONSchemaProps> = {};
  for (const [k, v] of Object.entries(properties)) props[k] = v.json;
  const json: JSONSchemaProps = { type: 'object', ...described(o.description), properties: props, ...(o.required?.length ? { required: [...o.required] } : {}), ...(o.extra ?? {}) };
  return { json, keys: Object.keys(properties), assured: [...(o.assured ?? [])] };
}

/** The same values, with more schema keywords (validations, bounds, preserve-unknown-fields) after the others. */
export function withExtra<V>(s: Schema<V>, extra: Partial<JSONSchemaProps>): Schema<V> {
  return schema({ ...s.json, ...extra });
}

/**
 * The schema `s`, read as the type `V` declared elsewhere (e.g. Cluster API's
 * Condition, whose status is 'True' | 'False' | 'Unknown' where the schema
 * says string): use it only where `V` is what `s` admits or something else
 * guarantees the difference.
 */
export function as<V>(s: Schema<unknown>): Schema<V> {
  return schema(s.json);
}
