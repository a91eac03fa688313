import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../core/errors.js';
import type { KubeClient } from '../../core/kube/client.js';
import { canonicalMessage, isConflict, KubeApiError } from '../../core/kube/errors.js';
import { resourceForKind, RESOURCES, apiVersionOf } from '../../core/kube/resources.js';
import type { KubeObject } from '../../core/kube/types.js';
import { parseYamlDocuments, type SourceDoc } from './source.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

export interface Manifest {
  obj: KubeObject;
  file: string;
  line: number;
  /** Resolve a field path of this manifest to its line (for admission errors). */
  lineOf(field: string): number;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Turn "spec.configs[1].persistentDisks[0].slot" into a YAML path. */
export function fieldToPath(field: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of field.split('.')) {
    const m = /^([^[]+)((?:\[\d+\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    out.push(m[1]!);
    for (const idx of m[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

function checkShape(src: SourceDoc, v: unknown): KubeObject {
  if (!isObj(v)) throw src.error([], 'a manifest must be a mapping with apiVersion, kind and metadata');
  if (typeof v.kind !== 'string' || !v.kind) throw src.error(['kind'], 'is required');
  let info;
  try {
    info = resourceForKind(v.kind);
  } catch {
    throw src.error(['kind'], `unknown kind "${v.kind}" (known: ${RESOURCES.map((r) => r.kind).join(', ')})`);
  }
  if (typeof v.apiVersion !== 'string') throw src.error(['apiVersion'], `is required (${apiVersionOf(info)})`);
  if (v.apiVersion !== apiVersionOf(info)) throw src.error(['apiVersion'], `"${v.apiVersion}" is not served for ${v.kind}; use ${apiVersionOf(info)}`);
  if (!isObj(v.metadata)) throw src.error(['metadata'], 'is required (a mapping with name)');
  if (typeof v.metadata.name !== 'string' || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(v.metadata.name)) {
    throw src.error(['metadata', 'name'], `must be a lowercase RFC 1123 name, got ${JSON.stringify(v.metadata.name)}`);
  }
  return v as unknown as KubeObject;
}

/** Read a (multi-document) manifest file. Errors name the file, line and field. */
export function loadManifestFile(file: string, text?: string): Manifest[] {
  return parseYamlDocuments(file, text).flatMap((src) => {
    const value = src.value();
    const items = isObj(value) && value.kind === 'List' && Array.isArray(value.items) ? value.items : [value];
    return items.map((v, i) => {
      const obj = checkShape(src, v);
      const prefix = isObj(value) && value.kind === 'List' ? ['items', i] : [];
      return { obj, file, line: src.lineOf(prefix), lineOf: (field: string) => src.lineOf([...prefix, ...fieldToPath(field)]) };
    });
  });
}

/** `kubectl apply -f PATH`: a file, or every .yaml/.yml/.json file of a directory in name order. */
export function loadManifestPath(path: string): Manifest[] {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    throw new InputError('file or directory not found', path);
  }
  if (!isDir) return loadManifestFile(path);
  const files = readdirSync(path).filter((f) => /\.(ya?ml|json)$/.test(f)).sort();
  if (files.length === 0) throw new InputError('directory holds no .yaml, .yml or .json manifests', path);
  return files.flatMap((f) => loadManifestFile(join(path, f)));
}

export function inlineManifest(v: unknown, file: string, line: number): Manifest {
  if (!isObj(v) || typeof v.kind !== 'string' || !isObj(v.metadata)) {
    throw new InputError('an inline manifest needs apiVersion, kind and metadata.name', file, line);
  }
  return { obj: v as unknown as KubeObject, file, line, lineOf: () => line };
}

export interface ApplyResult {
  action: 'created' | 'configured' | 'unchanged';
  obj: KubeObject;
}

/**
 * Conflicts an apply retries before it gives up, as kubectl does: its client-side apply
 * re-reads the live object and patches again up to `maxPatchRetry` (5) times when the
 * patch meets a 409 Conflict (k8s.io/kubectl/pkg/cmd/apply/patcher.go). Here the write
 * is an update with the live resourceVersion, so another client's write between the read
 * and it (a provider process writing the same object's status) is such a conflict.
 */
export const APPLY_CONFLICT_RETRIES = 5;

/**
 * `kubectl apply` for one object: create it, or update the live object from
 * the manifest (spec and labels/annotations replaced, status kept), recording
 * the last-applied-configuration annotation as client-side apply does. A write
 * that conflicts with another client's is read and made again (APPLY_CONFLICT_RETRIES).
 */
export async function applyObject(client: KubeClient, input: KubeObject, defaultNamespace?: string): Promise<ApplyResult> {
  const info = resourceForKind(input.kind);
  const obj = structuredClone(input);
  if (info.namespaced && !obj.metadata.namespace) obj.metadata.namespace = defaultNamespace ?? 'default';
  const applied = structuredClone(obj) as KubeObject;
  delete (applied as { status?: unknown }).status;
  obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), [LAST_APPLIED]: JSON.stringify(applied) };
  for (let attempt = 0; ; attempt++) {
    try {
      return await applyOnce(client, obj);
    } catch (e) {
      if (!isConflict(e) || attempt >= APPLY_CONFLICT_RETRIES) throw e;
    }
  }
}

async function applyOnce(client: KubeClient, obj: KubeObject): Promise<ApplyResult> {
  const live = await client.get({ kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name });
  if (!live) {
    const created = await client.create(obj);
    return { action: 'created', obj: created };
  }
  const next: KubeObject = { ...structuredClone(obj), metadata: { ...live.metadata, labels: obj.metadata.labels, annotations: { ...(live.metadata.annotations ?? {}), ...obj.metadata.annotations } } };
  if (live.status !== undefined) next.status = live.status;
  const before = live.metadata.resourceVersion;
  const updated = await client.update(next);
  return { action: updated.metadata.resourceVersion === before ? 'unchanged' : 'configured', obj: updated };
}

/** An apply error that names the file, the manifest's line (or the offending field's) and the rule. */
export function applyError(m: Manifest, e: unknown): InputError {
  if (e instanceof KubeApiError) {
    const cause = e.causes[0];
    const line = cause ? m.lineOf(cause.field) : m.line;
    return new InputError(canonicalMessage(e), m.file, line, cause?.field);
  }
  return new InputError(`${m.obj.kind} ${m.obj.metadata.name}: ${(e as Error).message}`, m.file, m.line);
}
