/**
 * What a Go webhook does before any rule: it decodes the object into its Go
 * type. Cluster API's webhooks (and a provider's, built the same way with
 * controller-runtime) answer a value their type cannot hold with 400
 * BadRequest: controller-runtime pkg/webhook/admission/defaulter_custom.go
 * (and validator_custom.go) `if err := h.decoder.Decode(req, obj); err != nil
 * { return Errored(http.StatusBadRequest, err) }`, and the apiserver passes
 * the denial on as `admission webhook "<name>" denied the request: <error>`.
 *
 * kube-apiserver itself accepts an integer beyond the int32 range in a CRD
 * field of format int32 (kube-openapi pkg/validation/validate/type.go checks
 * no range; test/facade/apiserver-parity.test.ts shows it on the real one),
 * so 2147483648 in a MachineDeployment's spec.replicas is refused by the
 * defaulting webhook's decoding: `json: cannot unmarshal number 2147483648
 * into Go struct field MachineDeploymentSpec.spec.replicas of type int32`
 * (Go names the innermost struct; here <Kind>Spec for the fields of spec,
 * else the kind). Values beyond 2^53 are not integers to the schema (it
 * refuses them first, 422).
 */
import { KubeApiError } from '../core/kube/errors.js';
import { resourceForKind } from '../core/kube/resources.js';
import type { JSONSchemaProps } from '../core/kube/schema.js';
import type { KubeObject } from '../core/kube/types.js';
import type { Defaulter } from '../core/kube/embedded-store.js';
import { schemaForKind } from '../product/api/crds/index.js';

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };

/** The first integer of `value` beyond the int32 range where `schema` says format int32: its path and value. */
export function int32Overflow(value: unknown, schema: JSONSchemaProps | undefined, path: string[] = []): { path: string[]; value: number } | undefined {
  if (!schema || value === null || value === undefined) return undefined;
  if (typeof value === 'number') {
    const out = schema.type === 'integer' && schema.format === 'int32' && Number.isSafeInteger(value) && (value < INT32.min || value > INT32.max);
    return out ? { path, value } : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const r = int32Overflow(value[i], schema.items as JSONSchemaProps | undefined, [...path, String(i)]);
      if (r) return r;
    }
    return undefined;
  }
  if (typeof value !== 'object') return undefined;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const sub = schema.properties?.[k] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    const r = int32Overflow(v, sub, [...path, k]);
    if (r) return r;
  }
  return undefined;
}

/** The defaulting webhook's decode of `kind` (named as Cluster API names its webhooks: default.<kind>.<group>). */
export function webhookDecode(kind: string): Defaulter {
  const schema = schemaForKind(kind);
  const { group } = resourceForKind(kind);
  const webhook = `default.${kind.toLowerCase()}.${group}`;
  return (obj: KubeObject) => {
    const bad = int32Overflow(obj, schema);
    if (!bad) return;
    const struct = bad.path.length === 2 && bad.path[0] === 'spec' ? `${kind}Spec` : kind;
    throw new KubeApiError('BadRequest', `admission webhook "${webhook}" denied the request: json: cannot unmarshal number ${bad.value} into Go struct field ${struct}.${bad.path.join('.')} of type int32`, [{ field: bad.path.join('.'), message: `Invalid value: ${bad.value}: must fit an int32 (${INT32.min} to ${INT32.max})` }]);
  };
}
