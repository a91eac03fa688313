/**
 * What a request may ask beyond its verb, checked before anything is done:
 *
 * - Impersonation (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-*`;
 *   `kubectl --as`): the facade has no authorizer to evaluate another user's
 *   permissions, so it refuses, with the Status the apiserver's impersonation
 *   filter answers when the requester may not impersonate (403 Forbidden,
 *   `users "x" is forbidden: User "y" cannot impersonate resource "users" in
 *   API group "" at the cluster scope`), or 400 when groups or extras come
 *   without a user (k8s.io/apiserver pkg/endpoints/filters/impersonation.go:
 *   "requested ... without impersonating a user"). Never silently as admin.
 * - `kubectl auth can-i` (SelfSubjectAccessReview) and `auth can-i --list`
 *   (SelfSubjectRulesReview), authorization.k8s.io/v1: every authenticated
 *   user may do everything here (the token and the client certificate are
 *   both cluster admins: system:masters, kubeadm:cluster-admins), and the
 *   answers say so.
 * - `dryRun`: the query parameter (every verb) and DeleteOptions.dryRun (the
 *   body kubectl sends with `delete --dry-run=server`); the only value is
 *   "All" (k8s.io/apimachinery pkg/apis/meta/v1/validation ValidateDryRun),
 *   anything else is 422, never a real write.
 */
import type { FastifyRequest } from 'fastify';
import { KubeApiError } from '../../core/kube/errors.js';
import type { Identity } from './auth.js';

/** A refusal the facade answers as a Status (code, reason, message, details). */
export interface Refusal {
  code: number;
  reason: 'Forbidden' | 'BadRequest';
  message: string;
  details?: { name?: string; kind?: string };
}

/** The Impersonate-* headers of a request (lower-cased names). */
function impersonationHeaders(req: Pick<FastifyRequest, 'headers'>): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(req.headers)) {
    if (!k.toLowerCase().startsWith('impersonate-') || v === undefined) continue;
    for (const x of Array.isArray(v) ? v : [v]) out.push([k.toLowerCase(), x]);
  }
  return out;
}

/** undefined: no impersonation asked; otherwise the refusal. */
export function impersonationRefusal(req: Pick<FastifyRequest, 'headers'>, who: Identity): Refusal | undefined {
  const h = impersonationHeaders(req);
  if (h.length === 0) return undefined;
  const user = h.find(([k]) => k === 'impersonate-user')?.[1];
  if (user === undefined) {
    const asked = h.map(([k, v]) => `${k}=${v}`).join(', ');
    return { code: 400, reason: 'BadRequest', message: `requested [${asked}] without impersonating a user` };
  }
  return {
    code: 403,
    reason: 'Forbidden',
    message: `users ${JSON.stringify(user)} is forbidden: User ${JSON.stringify(who.username)} cannot impersonate resource "users" in API group "" at the cluster scope: the hcs-testbed facade does not support impersonation (it has no authorizer for another user's permissions; docs/kube.md)`,
    details: { name: user, kind: 'users' },
  };
}

const ALLOWED_REASON = 'hcs-testbed: every authenticated user is a cluster admin (no RBAC; docs/kube.md)';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews: the review, answered (201). */
export function selfSubjectAccessReview(body: unknown, _who: Identity): Obj {
  const spec = isObj(body) && isObj(body.spec) ? body.spec : undefined;
  const ra = spec?.resourceAttributes;
  const nra = spec?.nonResourceAttributes;
  if (!spec || (ra === undefined) === (nra === undefined) || (ra !== undefined && !isObj(ra)) || (nra !== undefined && !isObj(nra))) {
    throw KubeApiError.invalid('SelfSubjectAccessReview.authorization.k8s.io', '', [
      { field: 'spec.resourceAttributes', message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified' },
    ]);
  }
  return { kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', metadata: { creationTimestamp: null }, spec, status: { allowed: true, reason: ALLOWED_REASON } };
}

/** POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews (`kubectl auth can-i --list`). */
export function selfSubjectRulesReview(body: unknown): Obj {
  const spec = isObj(body) && isObj(body.spec) ? body.spec : {};
  return {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec,
    status: { resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }], incomplete: false },
  };
}

/**
 * Whether a request is a dry run: the `dryRun` query values plus, for a
 * delete, DeleteOptions.dryRun from the body. `verb` names the options kind in
 * the error (CreateOptions, PatchOptions, UpdateOptions, DeleteOptions).
 */
export function isDryRun(query: URLSearchParams, verb: 'Create' | 'Patch' | 'Update' | 'Delete', bodyValues: unknown = undefined): boolean {
  const values: unknown[] = [...query.getAll('dryRun')];
  if (bodyValues !== undefined && bodyValues !== null) {
    if (!Array.isArray(bodyValues)) throw KubeApiError.invalid(`${verb}Options.meta.k8s.io`, '', [{ field: 'dryRun', message: `Invalid value: ${JSON.stringify(bodyValues)}: must be a list of strings` }]);
    values.push(...(bodyValues as unknown[]));
  }
  const bad = values.filter((v) => v !== 'All');
  if (bad.length) throw KubeApiError.invalid(`${verb}Options.meta.k8s.io`, '', [{ field: 'dryRun', message: `Unsupported value: ${JSON.stringify(values)}: supported values: "All"` }]);
  return values.length > 0;
}

/** A DELETE's body as DeleteOptions (absent: {}); what is not a JSON object is a 400. */
export function deleteOptions(body: unknown): { dryRun?: unknown } {
  if (body === undefined) return {};
  if (!isObj(body)) throw new KubeApiError('BadRequest', 'the body of a delete must be a DeleteOptions object');
  if (body.kind !== undefined && body.kind !== 'DeleteOptions') throw new KubeApiError('BadRequest', `the body of a delete must be a DeleteOptions object, not ${JSON.stringify(body.kind)}`);
  return body;
}
