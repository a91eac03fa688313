/**
 * The worker processes' code as one precompiled JavaScript file, cached on
 * disk, so that a worker starts without tsx.
 *
 * Through tsx (worker-entry.mjs) every start resolved and transpiled the ~140
 * TypeScript modules a run needs on tsx's loader thread: about 1 s of CPU per
 * worker (bench/explore.ts prints the start-up time). The bundle is built
 * with esbuild (the transpiler tsx itself uses) from src/explore/worker.ts
 * into node_modules/.cache/hcs-testbed/. It is rebuilt when any of its inputs
 * changed: a manifest beside it lists every input file with its sha256,
 * checked on each use (~10 ms). Every module keeps its own `import.meta.url`
 * (replaced by the source file's URL when bundling), so paths the code
 * computes from it (the library, the OS Support Matrix) stay those of the
 * sources.
 *
 * Start-up CPU: the npm packages are bundled too (one CommonJS file; as
 * separate modules, resolving, reading and compiling fastify, yaml and the
 * Ajv compiler took ~0.3 s of CPU per worker, half the run of a short
 * scenario), and the file is compiled with V8's code cache: the entry
 * (`explore-worker.mjs`, what a pool forks) runs the code through
 * vm.Script with the cached data of an earlier worker, and a worker that
 * found none (or found it rejected: other V8 flags) writes it when it exits,
 * with the bytecode of every function its runs compiled. The code file and
 * its cache are named by the code's sha256, so a cache is only ever read with
 * the very source it was made from; a rebuild removes the old ones.
 *
 * Whatever goes wrong (esbuild missing, a read-only checkout, a failed build)
 * the caller falls back to the tsx entry: the bundle only makes starts faster.
 * Testbed plugins (`--plugin`) are TypeScript modules importing the sources,
 * so a pool with a plugin always uses the tsx entry.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE = join(ROOT, 'src/explore/worker.ts');
const CACHE_DIR = join(ROOT, 'node_modules/.cache/hcs-testbed');
/** The entry a pool forks: loads the code file with V8's code cache. */
export const BUNDLE = join(CACHE_DIR, 'explore-worker.mjs');
export const BUNDLE_MANIFEST = join(CACHE_DIR, 'explore-worker.json');
/** Bump when the build itself changes (options, the import.meta rewrite, the entry). */
const FORMAT = 2;

interface Manifest {
  format: number;
  node: string;
  esbuild: string;
  /** The code file (in the cache directory), named by its sha256. */
  code: string;
  /** Input files relative to the repository root, with their sha256. */
  inputs: Record<string, string>;
}

/** The code file of the current bundle (what BUNDLE runs), or undefined when there is none. */
export function bundleCodeFile(): string | undefined {
  try {
    const m = JSON.parse(readFileSync(BUNDLE_MANIFEST, 'utf8')) as Manifest;
    return m.format === FORMAT ? join(CACHE_DIR, m.code) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The entry's text: run the CommonJS code in this context (as node's own
 * loader would, with a require of its own), compiled with the cached data
 * when there is some; when there was none or V8 rejected it, write it at exit
 * (a worker exits when its pool disconnects), through a temporary file, so a
 * concurrent worker never reads half of one.
 */
function entryText(code: string, cache: string): string {
  return `// Built by src/explore/worker-bundle.ts: the worker's code with V8's code cache. Do not edit.
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
    } catch { /* no cache: the next worker compiles from source */ }
  });
}
const module = { exports: {} };
script.runInThisContext().call(module.exports, module.exports, createRequire(code), module, code, dirname(code));
`;
}

function sha256(file: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

function upToDate(esbuildVersion: string): boolean {
  if (!existsSync(BUNDLE)) return false;
  const code = bundleCodeFile();
  if (!code || !existsSync(code)) return false;
  let m: Manifest;
  try {
    m = JSON.parse(readFileSync(BUNDLE_MANIFEST, 'utf8')) as Manifest;
  } catch {
    return false;
  }
  if (m.format !== FORMAT || m.node !== process.version || m.esbuild !== esbuildVersion) return false;
  return Object.entries(m.inputs).every(([f, h]) => sha256(join(ROOT, f)) === h);
}

let pending: Promise<string | undefined> | undefined;

/**
 * The path of an up-to-date bundle of the worker (built now if needed), or
 * undefined when it cannot be had (then use worker-entry.mjs). Built at most
 * once per process; concurrent processes each write their own temporary file
 * and rename it into place.
 */
export function workerBundle(): Promise<string | undefined> {
  if (process.env.HCS_TESTBED_WORKER_TSX === '1') return Promise.resolve(undefined); // debugging: always the sources through tsx
  pending ??= ensureWorkerBundle().catch(() => undefined);
  return pending;
}

/** Check the cached bundle against its inputs and rebuild it if any changed (every call; workerBundle() does it once per process). */
export async function ensureWorkerBundle(): Promise<string | undefined> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined;
  }
  if (upToDate(esbuild.version)) return BUNDLE;
  const rewriteImportMeta: import('esbuild').Plugin = {
    name: 'import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        const contents = text.includes('import.meta.url') ? text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)) : text;
        return { contents, loader: 'ts' };
      });
    },
  };
  const result = await esbuild.build({
    entryPoints: [SOURCE],
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${process.versions.node.split('.')[0]}`,
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [rewriteImportMeta],
    banner: { js: `// Built by src/explore/worker-bundle.ts from ${relative(ROOT, SOURCE)}; rebuilt when an input changes. Do not edit.` },
  });
  const code = result.outputFiles[0]?.text;
  if (!code) return undefined;
  const inputs: Record<string, string> = {};
  for (const f of Object.keys(result.metafile.inputs)) {
    const abs = resolve(ROOT, f);
    const h = sha256(abs);
    if (!h) return undefined;
    inputs[relative(ROOT, abs)] = h;
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  const id = createHash('sha256').update(code).digest('hex').slice(0, 24);
  const codeName = `explore-worker-${id}.cjs`;
  const write = (file: string, text: string): void => {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  };
  write(join(CACHE_DIR, codeName), code);
  write(BUNDLE, entryText(join(CACHE_DIR, codeName), join(CACHE_DIR, `explore-worker-${id}.v8cache`)));
  const manifest: Manifest = { format: FORMAT, node: process.version, esbuild: esbuild.version, code: codeName, inputs };
  write(BUNDLE_MANIFEST, JSON.stringify(manifest, null, 1));
  // Earlier builds' code and caches (a worker already running has read its code).
  for (const f of readdirSync(CACHE_DIR)) {
    if (/^explore-worker-[0-9a-f]+\.(cjs|v8cache)$/.test(f) && !f.startsWith(`explore-worker-${id}.`)) rmSync(join(CACHE_DIR, f), { force: true });
  }
  return BUNDLE;
}
