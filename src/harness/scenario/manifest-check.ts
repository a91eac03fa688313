/**
 * What `run` would refuse in a manifest, found before running (validate):
 * a missing file, invalid YAML, an unknown kind or apiVersion, a field of the
 * wrong type for its CRD's structural schema. Admission rules that depend on
 * the live state (DISK-4 immutability, POOL-4 bindings) are checked when the
 * step runs.
 */
import { statSync } from 'node:fs';
import { InputError } from '../../core/errors.js';
import { schemaForKind, validate as validateSchema } from '../../product/api/crds/index.js';
import { loadManifestPath } from '../manifests/index.js';

const cache = new Map<string, { key: string; errors: InputError[] }>();

function stamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.mtimeMs}:${st.size}`;
  } catch {
    return 'missing';
  }
}

/** Errors of the manifests at `path` (a file or a directory), each naming file, line and field. */
export function checkManifestPath(path: string): InputError[] {
  const key = stamp(path);
  const hit = cache.get(path);
  if (hit && hit.key === key && !statIsDir(path)) return hit.errors;
  const errors: InputError[] = [];
  try {
    for (const m of loadManifestPath(path)) {
      const schema = schemaForKind(m.obj.kind);
      if (!schema) continue;
      for (const c of validateSchema(m.obj, schema)) {
        if (c.message === 'Required value') continue; // defaults and admission decide; the apply names it
        errors.push(new InputError(`${m.obj.kind} ${m.obj.metadata.name}: ${c.message}`, m.file, m.lineOf(c.field), c.field));
      }
    }
  } catch (e) {
    if (e instanceof InputError) errors.push(e);
    else throw e;
  }
  cache.set(path, { key, errors });
  return errors;
}

function statIsDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
