/**
 * The checks every write goes through before the store sees it (nothing is
 * written when one fails): the body is the kind of the URL, the namespace
 * exists (NamespaceLifecycle), a patch leaves a valid object (previewPatch),
 * and server-side apply's create-or-merge.
 */
import type { Clock } from '../../../core/clock.js';
import type { WriteOptions } from '../../../core/kube/client.js';
import type { EmbeddedStore } from '../../../core/kube/embedded-store.js';
import { KubeApiError } from '../../../core/kube/errors.js';
import { applyJsonPatch, applyMergePatch } from '../../../core/kube/patch.js';
import { BUILTIN_GROUPS, type ResourceInfo } from '../../../core/kube/resources.js';
import type { KubeObject } from '../../../core/kube/types.js';
import { isDryRun } from '../access.js';
import type { Query } from '../http/context.js';
import { qualified, status, type HttpStatus } from '../http/status.js';
import { withApplyEntry, type ManagedFieldsEntry } from '../managed-fields.js';
import { checkCreate, checkWrite } from '../validate.js';

export type Ref = { kind: string; namespace?: string | undefined; name: string };

export function writeOptions(q: Query, params: URLSearchParams, verb: 'Create' | 'Patch' | 'Update', warnings: string[]): WriteOptions {
  const fv = q.fieldValidation;
  return {
    ...(isDryRun(params, verb) ? { dryRun: true } : {}),
    ...(fv === 'Strict' || fv === 'Warn' || fv === 'Ignore' ? { fieldValidation: fv } : {}),
    warnings,
  };
}

/**
 * NamespaceLifecycle admission, as the apiserver runs it on every create of
 * a namespaced object: the namespace must exist (404 NotFound namespaces
 * "x") and not be terminating (403 Forbidden,
 * k8s.io/apiserver pkg/admission/plugin/namespace/lifecycle).
 */
export function namespaceAdmits(store: EmbeddedStore, ns: string): void {
  const n = store.getSync({ kind: 'Namespace', name: ns });
  if (!n) throw status(404, 'NotFound', `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' });
  if (n.metadata.deletionTimestamp) throw status(403, 'Forbidden', `unable to create new content in namespace ${ns} because it is being terminated`, { name: ns, kind: 'namespaces', causes: [{ reason: 'NamespaceTerminating', message: `namespace ${ns} is being terminated`, field: 'metadata.namespace' }] });
}

/** Apply a patch to a copy first: what it would write must pass checkWrite, or nothing is written (a 422, not a 500 after the fact). */
export function previewPatch(store: EmbeddedStore, info: ResourceInfo, ref: Ref, type: 'json' | 'merge', p: unknown): void {
  const cur = store.getSync(ref as { kind: string; namespace?: string; name: string });
  if (!cur) throw KubeApiError.notFound(info.plural, ref.name);
  let next: unknown;
  try {
    next = type === 'merge' ? applyMergePatch(cur, p) : applyJsonPatch(cur, p);
  } catch {
    return; // the store answers a patch that does not apply with its own error
  }
  if (typeof next !== 'object' || next === null || Array.isArray(next)) throw status(422, 'Invalid', `${qualified(info)} "${ref.name}" is invalid: the patch does not leave an object`);
  // A patch cannot take away or change what the object is ({"kind": null} was a 500 after the fact).
  for (const f of ['kind', 'apiVersion'] as const) {
    const was = (cur as unknown as Record<string, unknown>)[f];
    const now = (next as Record<string, unknown>)[f];
    if (now !== was) throw status(422, 'Invalid', `${qualified(info)} "${ref.name}" is invalid: ${f}: Invalid value: ${JSON.stringify(now ?? null)}: a patch may not remove or change ${f} (it is ${JSON.stringify(was)})`, { name: ref.name, group: info.group, kind: info.kind, causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(now ?? null)}: may not be removed or changed`, field: f }] });
  }
  checkWrite(next as KubeObject, info);
}

export function unsupportedMedia(): HttpStatus {
  return status(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`);
}

/** The body is an object of the URL's kind and version, in the URL's namespace. */
export function checkBody(body: KubeObject, info: ResourceInfo, namespace: string | undefined): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw status(400, 'BadRequest', 'the request body must be a JSON object');
  if (!body.metadata || typeof body.metadata !== 'object') body.metadata = { name: '' };
  const av = info.group ? `${info.group}/${info.version}` : info.version;
  if (body.kind !== info.kind || (body.apiVersion && body.apiVersion !== av)) {
    throw status(400, 'BadRequest', `the API version in the data (${body.apiVersion ?? ''}) does not match the expected API version (${av}) or kind ${body.kind ?? '""'} is not ${info.kind}`);
  }
  if (namespace && body.metadata.namespace && body.metadata.namespace !== namespace) {
    throw status(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
  }
}

/** A simplified server-side apply: create, or merge the applied fields into the live object (managedFields: managed-fields.ts). */
export async function serverSideApply(store: EmbeddedStore, clock: Clock, info: ResourceInfo, ref: { kind: string; namespace?: string; name: string }, body: KubeObject, wo: WriteOptions, manager: string): Promise<KubeObject> {
  checkBody(body, info, ref.namespace);
  const cur = store.getSync(ref);
  type WithFields = { managedFields?: ManagedFieldsEntry[] };
  if (!cur) {
    if (ref.namespace) namespaceAdmits(store, ref.namespace);
    checkCreate(body);
    checkWrite(body, info);
    const managedFields = withApplyEntry(undefined, manager, body, clock.now());
    return store.create({ ...body, metadata: { ...body.metadata, name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}), managedFields } as KubeObject['metadata'] }, wo);
  }
  const { apiVersion: _a, kind: _k, ...rest } = body;
  const managedFields = withApplyEntry((cur.metadata as WithFields).managedFields, manager, body, clock.now());
  const p = applyMergePatch({}, { ...rest, metadata: { ...(rest.metadata ?? {}), managedFields } });
  checkWrite(applyMergePatch(cur, p) as KubeObject, info);
  return store.patch(ref, 'merge', p, wo);
}

/**
 * Kinds whose update must carry metadata.resourceVersion: every custom
 * resource (apiextensions-apiserver pkg/registry/customresource/strategy.go:
 * AllowUnconditionalUpdate is false) and, of the built-in kinds served here,
 * VolumeAttachment (kubernetes pkg/registry/storage/volumeattachment/strategy.go);
 * the others allow an unconditional update.
 */
export function requiresResourceVersion(info: ResourceInfo): boolean {
  return !BUILTIN_GROUPS.has(info.group) || info.kind === 'VolumeAttachment';
}

/**
 * A PUT without metadata.resourceVersion of such a kind: 422, as the generic
 * registry answers (k8s.io/apiserver pkg/registry/generic/registry/store.go
 * Update: field.Invalid(metadata.resourceVersion, 0, "must be specified for an update"),
 * the kind named by its resource). Nothing is written (issue 32.5).
 */
export function checkConditionalUpdate(body: KubeObject, info: ResourceInfo): void {
  if (!requiresResourceVersion(info) || (body.metadata.resourceVersion ?? '') !== '') return;
  const causes = [{ field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' }];
  throw KubeApiError.invalid(qualified(info), body.metadata.name, causes);
}
