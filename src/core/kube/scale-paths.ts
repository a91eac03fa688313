/**
 * The scale subresource's replicas paths of a custom resource kind, validated on every write of the embedded
 * store as kube-apiserver validates them (src/core/kube/embedded-store.ts).
 */
import type { FieldCause } from './errors.js';
/** The replicas paths of a CRD's scale subresource (`.spec.replicas`, `.status.replicas`). */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
}

/**
 * A CRD with a scale subresource has the values at its replicas paths validated on every write, as
 * apiextensions-apiserver does (pkg/registry/customresource/validator.go, validateScale{Spec,Status}): when
 * present, an integer between 0 and 2^31-1; the cause is named by the JSON path (".status.replicas").
 */
export function replicasCauses(obj: Record<string, unknown>, path: string): FieldCause[] {
  let v: unknown = obj;
  for (const k of path.replace(/^\./, '').split('.')) {
    if (v === null || typeof v !== 'object') return [];
    v = (v as Record<string, unknown>)[k];
  }
  if (v === undefined || v === null) return [];
  const bad = (message: string): FieldCause[] => [{ field: path, message: `Invalid value: ${JSON.stringify(v)}: ${message}` }];
  if (typeof v !== 'number' || !Number.isInteger(v)) return bad('should be an integer');
  if (v < 0) return bad('should be greater than or equal to 0');
  if (v > 2147483647) return bad('should be less than or equal to 2147483647');
  return [];
}
