/**
 * ObjectMeta validation as the apiserver applies it on every create and
 * update (k8s.io/apimachinery pkg/api/validation/objectmeta.go,
 * ValidateObjectMetaAccessor, with pkg/util/validation for the formats):
 *
 * - metadata.name of a custom resource (and of the built-in kinds the testbed
 *   stores) is an RFC 1123 subdomain, at most 253 characters
 *   (apiextensions-apiserver's customResourceStrategy validates with
 *   NameIsDNSSubdomain);
 * - a Namespace's name is an RFC 1123 label, at most 63 characters;
 * - label keys are qualified names (an optional DNS-subdomain prefix of at
 *   most 253 characters, then a name part of at most 63) and label values at
 *   most 63 characters of [A-Za-z0-9._-], starting and ending alphanumeric;
 * - annotations take at most 256 KiB in all (TotalAnnotationSizeLimitB).
 *
 * Names and label values reach file names, paths and other objects' labels in
 * the testbed; a name past these bounds was once written into a kubeconfig
 * file name and crashed `hcs-testbed serve` with ENAMETOOLONG (issue 32). The
 * wording follows the apiserver's so that kubectl prints what a real cluster
 * prints.
 */
import type { FieldCause } from './errors.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
export const LABEL_VALUE_MAX = 63;
export const QUALIFIED_NAME_MAX = 63;
export const TOTAL_ANNOTATION_SIZE_MAX = 256 * 1024;

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const tooLong = (max: number): string => `must be no more than ${max} characters`;
/** The value shown in a message: long values are cut, as nothing is gained by echoing 300 KiB back. */
const shown = (v: string): string => JSON.stringify(v.length > 300 ? `${v.slice(0, 300)}...` : v);

/** validation.IsDNS1123Subdomain: the problems, none when valid. */
export function dns1123SubdomainErrors(v: string): string[] {
  const out: string[] = [];
  if (v.length > DNS1123_SUBDOMAIN_MAX) out.push(tooLong(DNS1123_SUBDOMAIN_MAX));
  if (!DNS1123_SUBDOMAIN.test(v)) out.push(SUBDOMAIN_MSG);
  return out;
}

/** validation.IsDNS1123Label. */
export function dns1123LabelErrors(v: string): string[] {
  const out: string[] = [];
  if (v.length > DNS1123_LABEL_MAX) out.push(tooLong(DNS1123_LABEL_MAX));
  if (!DNS1123_LABEL.test(v)) out.push(LABEL_MSG);
  return out;
}

/** validation.IsValidLabelValue. */
export function labelValueErrors(v: string): string[] {
  const out: string[] = [];
  if (v.length > LABEL_VALUE_MAX) out.push(tooLong(LABEL_VALUE_MAX));
  if (!LABEL_VALUE.test(v)) out.push(VALUE_MSG);
  return out;
}

/** validation.IsQualifiedName (label and annotation keys). */
export function qualifiedNameErrors(v: string): string[] {
  const parts = v.split('/');
  let name = v;
  const out: string[] = [];
  if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) out.push('prefix part must be non-empty');
    else for (const e of dns1123SubdomainErrors(prefix)) out.push(`prefix part ${e}`);
  } else if (parts.length > 2) {
    return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"];
  }
  if (name.length === 0) out.push('name part must be non-empty');
  else if (name.length > QUALIFIED_NAME_MAX) out.push(`name part ${tooLong(QUALIFIED_NAME_MAX)}`);
  if (name.length > 0 && !QUALIFIED_NAME.test(name)) out.push(QUALIFIED_MSG);
  return out;
}

/**
 * Kinds whose names need only be valid path segments (pkg/apis/rbac/validation:
 * ValidateRBACName = path.IsValidPathSegmentName), as kubeadm's
 * `kubeadm:get-nodes` ClusterRole shows.
 */
const PATH_SEGMENT_NAMED = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

/** path.IsValidPathSegmentName (k8s.io/apimachinery pkg/api/validation/path). */
export function pathSegmentNameErrors(v: string): string[] {
  if (v === '.' || v === '..') return [`may not be '${v}'`];
  const out: string[] = [];
  for (const bad of ['/', '%']) if (v.includes(bad)) out.push(`may not contain '${bad}'`);
  return out;
}

interface MetaLike {
  name?: string;
  generateName?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/**
 * The ObjectMeta problems of an object about to be stored, as FieldCauses
 * (empty when valid). `checkName`: false on update (the name is the stored
 * object's and cannot change).
 */
export function objectMetaCauses(kind: string, meta: MetaLike, checkName = true): FieldCause[] {
  const causes: FieldCause[] = [];
  if (checkName && typeof meta.name === 'string') {
    const errs = kind === 'Namespace' ? dns1123LabelErrors(meta.name) : PATH_SEGMENT_NAMED.has(kind) ? pathSegmentNameErrors(meta.name) : dns1123SubdomainErrors(meta.name);
    for (const e of errs) causes.push({ field: 'metadata.name', message: `Invalid value: ${shown(meta.name)}: ${e}` });
  }
  if (checkName && typeof meta.namespace === 'string' && meta.namespace !== '') {
    for (const e of dns1123LabelErrors(meta.namespace)) causes.push({ field: 'metadata.namespace', message: `Invalid value: ${shown(meta.namespace)}: ${e}` });
  }
  if (meta.labels !== undefined && meta.labels !== null) {
    if (typeof meta.labels !== 'object' || Array.isArray(meta.labels)) causes.push({ field: 'metadata.labels', message: 'Invalid value: must be a map of strings' });
    else
      for (const [k, v] of Object.entries(meta.labels)) {
        for (const e of qualifiedNameErrors(k)) causes.push({ field: 'metadata.labels', message: `Invalid value: ${shown(k)}: ${e}` });
        if (typeof v !== 'string') causes.push({ field: `metadata.labels`, message: `Invalid value: ${shown(String(v))}: must be a string` });
        else for (const e of labelValueErrors(v)) causes.push({ field: 'metadata.labels', message: `Invalid value: ${shown(v)}: ${e}` });
      }
  }
  if (meta.annotations !== undefined && meta.annotations !== null) {
    if (typeof meta.annotations !== 'object' || Array.isArray(meta.annotations)) causes.push({ field: 'metadata.annotations', message: 'Invalid value: must be a map of strings' });
    else {
      let total = 0;
      for (const [k, v] of Object.entries(meta.annotations)) {
        for (const e of qualifiedNameErrors(k.toLowerCase())) causes.push({ field: 'metadata.annotations', message: `Invalid value: ${shown(k)}: ${e}` });
        total += k.length + (typeof v === 'string' ? v.length : 0);
      }
      if (total > TOTAL_ANNOTATION_SIZE_MAX) causes.push({ field: 'metadata.annotations', message: `Too long: must have at most ${TOTAL_ANNOTATION_SIZE_MAX} bytes` });
    }
  }
  return causes;
}
