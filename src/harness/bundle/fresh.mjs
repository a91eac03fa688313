// Which precompiled bundles of the TypeScript sources are still those of the
// sources (src/harness/bundle/build.ts writes them). Plain JavaScript: bin/hcs-testbed.mjs
// reads it before any TypeScript loader is registered.
//
// A bundle `<name>` lives in node_modules/.cache/hcs-testbed/ as
//   <name>.mjs          the entry: runs the code with V8's code cache (see build.ts)
//   <name>-<id>.cjs     the code (<id>: its sha256), with <name>-<id>.v8cache beside it
//   <name>.json         the manifest: format, node and esbuild versions, the code
//                       file, and every input file (sources and the npm packages'
//                       files) with its sha256, size and mtime.
// An input whose size and mtime are those recorded is taken as unchanged
// (a stat: the ~1,600 inputs of the CLI are checked in a few ms); one whose
// mtime moved (a fresh clone, a checkout) is hashed and compared.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/**
 * Keyed by the checkout's root: a bundle has the checkout's absolute paths
 * baked in (import.meta.url of its modules, where data files are read from),
 * so two checkouts that share node_modules (git worktrees with a symlinked
 * node_modules) must not take each other's bundles. Both would pass the
 * freshness check, as their sources hash the same, and the second would read
 * the first one's scenarios and data.
 */
export const CACHE_DIR = join(ROOT, 'node_modules/.cache/hcs-testbed', createHash('sha256').update(ROOT).digest('hex').slice(0, 12));
/** Bump when the build itself changes (options, the import.meta rewrite, the entry, the manifest). */
export const FORMAT = 3;

export function bundlePaths(name) {
  return { entry: join(CACHE_DIR, `${name}.mjs`), manifest: join(CACHE_DIR, `${name}.json`) };
}

/** The version of the installed esbuild (what a bundle was built with), or undefined. */
export function esbuildVersion() {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules/esbuild/package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

export function sha256(file) {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

export function readManifest(name) {
  try {
    const m = JSON.parse(readFileSync(bundlePaths(name).manifest, 'utf8'));
    return m && m.format === FORMAT ? m : undefined;
  } catch {
    return undefined;
  }
}

function unchanged(file, rec) {
  let st;
  try {
    st = statSync(file);
  } catch {
    return false;
  }
  if (st.size !== rec.size) return false;
  return st.mtimeMs === rec.mtimeMs || sha256(file) === rec.sha256;
}

/** The entry of bundle `name` when it is up to date with its inputs, node and esbuild; else undefined. */
export function freshBundle(name) {
  const m = readManifest(name);
  if (!m || m.node !== process.version || m.esbuild !== esbuildVersion()) return undefined;
  const { entry } = bundlePaths(name);
  if (!existsSync(entry) || !existsSync(join(CACHE_DIR, m.code))) return undefined;
  for (const [f, rec] of Object.entries(m.inputs)) if (!unchanged(join(ROOT, f), rec)) return undefined;
  return entry;
}
