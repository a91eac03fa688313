/**
 * Precompiled bundles of the TypeScript sources, cached on disk, so that a
 * process starts without tsx: the `hcs-testbed` CLI (src/harness/cli/cli-bundle.ts,
 * loaded by bin/hcs-testbed.mjs) and the explore / `run --jobs` worker
 * (src/harness/explore/worker-bundle.ts).
 *
 * Through tsx every start resolves and transpiles the TypeScript modules a
 * command needs on tsx's loader thread, and node resolves, reads and compiles
 * the npm packages one file at a time: about 1 s of CPU for a worker, 2.5 s
 * for the CLI's `--help` (`npm run bench -- explore` prints the start-ups).
 * A bundle is built with esbuild (the transpiler tsx itself uses) into one
 * CommonJS file with the npm packages inside (except `external` ones), and run
 * with V8's code cache: the entry (`<name>.mjs`) compiles the code through
 * vm.Script with the cached data of an earlier process, and a process that
 * found none (or found it rejected: other V8 flags) writes it when it exits,
 * with the bytecode of every function it compiled. The code file and its cache
 * are named by the code's sha256, so a cache is only read with the very source
 * it was made from; a rebuild removes the old ones. Every module keeps its own
 * `import.meta.url` (replaced by the source file's URL when bundling), so the
 * paths the code computes from it (the library, the OS Support Matrix, the
 * worker entry) stay those of the sources.
 *
 * A bundle is rebuilt when any input changed (fresh.mjs: the manifest lists
 * every input file). Whatever goes wrong (esbuild missing, a read-only
 * checkout, a failed build) the caller falls back to tsx: a bundle only makes
 * starts faster, never changes what runs.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundlePaths, CACHE_DIR, FORMAT, freshBundle, ROOT, sha256, type InputRecord, type Manifest } from './fresh.mjs';

export { bundlePaths, CACHE_DIR, freshBundle, readManifest } from './fresh.mjs';

export interface BundleSpec {
  /** The files' prefix in the cache directory (`cli`, `explore-worker`). */
  name: string;
  /** The entry module, relative to the repository root. */
  source: string;
  /** Packages left to node's require at run time (esbuild's own binary lookup, tsx's loader). */
  external?: string[];
}

/**
 * The entry's text: run the CommonJS code in this context (as node's own
 * loader would, with a require of its own), compiled with the cached data
 * when there is some; when there was none or V8 rejected it, write it at exit,
 * through a temporary file, so a concurrent process never reads half of one.
 * Its default export is the code's `module.exports`.
 */
function entryText(name: string, code: string, cache: string): string {
  return `// Built by src/harness/bundle/build.ts (bundle "${name}"): the code with V8's code cache. Do not edit.
import { createRequire } from 'node:module';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import vm from 'node:vm';
const code = ${JSON.stringify(code)};
const cache = ${JSON.stringify(cache)};
let cachedData;
try { cachedData = readFileSync(cache); } catch { cachedData = undefined; }
const wrapped = '(function (exports, require, module, __filename, __dirname) { ' + readFileSync(code, 'utf8') + '\\n});';
const script = new vm.Script(wrapped, { filename: code, cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
if (cachedData === undefined || script.cachedDataRejected) {
  process.once('exit', () => {
    try {
      const tmp = cache + '.' + process.pid + '.tmp';
      writeFileSync(tmp, script.createCachedData());
      renameSync(tmp, cache);
    } catch { /* no cache: the next process compiles from source */ }
  });
}
const module = { exports: {} };
script.runInThisContext().call(module.exports, module.exports, createRequire(code), module, code, dirname(code));
export default module.exports;
`;
}

function record(file: string): InputRecord | undefined {
  const h = sha256(file);
  if (!h) return undefined;
  const st = statSync(file);
  return { sha256: h, size: st.size, mtimeMs: st.mtimeMs };
}

function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/** `import.meta.url` in a module's text (see the plugin below for why not the plain string). */
const IMPORT_META_URL = /\bimport\.meta\.url\b/;

/**
 * The entry of an up-to-date bundle (built now if an input changed), or
 * undefined when it cannot be had. Concurrent processes each write their own
 * temporary files and rename them into place.
 */
export async function ensureBundle(spec: BundleSpec): Promise<string | undefined> {
  const fresh = freshBundle(spec.name);
  if (fresh) return fresh;
  let esbuild: typeof import('esbuild');
  try {
    // require, not import(): inside a bundle (the CLI's copy of this module) a dynamic import goes through vm's
    // importModuleDynamically, which a function compiled from V8's code cache does not keep in Node 20: the import
    // failed there, and the workers silently ran through tsx instead of the bundle the CLI should have rebuilt.
    esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  } catch {
    return undefined;
  }
  const rewriteImportMeta: import('esbuild').Plugin = {
    name: 'import-meta-url',
    setup(b) {
      // Sources and packages alike (fresh.mjs, ESM-only packages): esbuild's CommonJS output would leave `import.meta` empty.
      b.onLoad({ filter: /\.(ts|mts|js|mjs)$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        // A regular expression, not the plain string: this file is bundled into the CLI too, and the plugin rewrote
        // its own string literals there (the CLI's copy then looked for a file URL, left every other module's
        // import.meta empty, and the worker bundle it built crashed on start).
        if (!IMPORT_META_URL.test(text)) return undefined;
        return { contents: text.replace(new RegExp(IMPORT_META_URL.source, 'g'), JSON.stringify(pathToFileURL(args.path).href)), loader: /\.m?ts$/.test(args.path) ? 'ts' : 'js' };
      });
    },
  };
  const source = join(ROOT, spec.source);
  const result = await esbuild.build({
    entryPoints: [source],
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${process.versions.node.split('.')[0]}`,
    write: false,
    metafile: true,
    logLevel: 'silent',
    external: spec.external ?? [],
    plugins: [rewriteImportMeta],
    banner: { js: `// Built by src/harness/bundle/build.ts from ${spec.source}; rebuilt when an input changes. Do not edit.` },
  });
  // A shebang line (src/harness/cli/main.ts) would not parse inside the entry's function wrapper.
  const code = result.outputFiles[0]?.text.replace(/^#!.*/, (line) => `// ${line}`);
  if (!code) return undefined;
  const inputs: Record<string, InputRecord> = {};
  for (const f of Object.keys(result.metafile.inputs)) {
    const abs = resolve(ROOT, f);
    const r = record(abs);
    if (!r) return undefined;
    inputs[relative(ROOT, abs)] = r;
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  const id = createHash('sha256').update(code).digest('hex').slice(0, 24);
  const codeName = `${spec.name}-${id}.cjs`;
  const { entry, manifest } = bundlePaths(spec.name);
  writeAtomic(join(CACHE_DIR, codeName), code);
  writeAtomic(entry, entryText(spec.name, join(CACHE_DIR, codeName), join(CACHE_DIR, `${spec.name}-${id}.v8cache`)));
  const m: Manifest = { format: FORMAT, node: process.version, esbuild: esbuild.version, code: codeName, inputs };
  writeAtomic(manifest, JSON.stringify(m, null, 1));
  // Earlier builds' code and caches (a process already running has read its code).
  const earlier = new RegExp(`^${spec.name}-[0-9a-f]+\\.(cjs|v8cache)$`);
  for (const f of readdirSync(CACHE_DIR)) {
    if (earlier.test(f) && !f.startsWith(`${spec.name}-${id}.`)) rmSync(join(CACHE_DIR, f), { force: true });
  }
  return entry;
}
