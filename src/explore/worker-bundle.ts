/**
 * The worker processes' code as one precompiled JavaScript file, cached on
 * disk, so that a worker starts without tsx.
 *
 * Through tsx (worker-entry.mjs) every start resolved and transpiled the ~140
 * TypeScript modules a run needs on tsx's loader thread: about 1 s of CPU per
 * worker (0.3 s from the bundle, node's own start included; bench/explore.ts
 * prints the start-up time). The bundle is built with esbuild (the
 * transpiler tsx itself uses) from src/explore/worker.ts, npm packages left
 * as imports (resolved from node_modules as usual), into
 * node_modules/.cache/hcs-testbed/. It is rebuilt when any of its inputs
 * changed: a manifest beside it lists every input file with its sha256,
 * checked on each use (~10 ms). Every module keeps its own `import.meta.url`
 * (replaced by the source file's URL when bundling), so paths the code
 * computes from it (the library, the OS Support Matrix) stay those of the
 * sources.
 *
 * Whatever goes wrong (esbuild missing, a read-only checkout, a failed build)
 * the caller falls back to the tsx entry: the bundle only makes starts faster.
 * Testbed plugins (`--plugin`) are TypeScript modules importing the sources,
 * so a pool with a plugin always uses the tsx entry.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE = join(ROOT, 'src/explore/worker.ts');
const CACHE_DIR = join(ROOT, 'node_modules/.cache/hcs-testbed');
export const BUNDLE = join(CACHE_DIR, 'explore-worker.mjs');
export const BUNDLE_MANIFEST = join(CACHE_DIR, 'explore-worker.json');
/** Bump when the build itself changes (options, the import.meta rewrite). */
const FORMAT = 1;

interface Manifest {
  format: number;
  node: string;
  esbuild: string;
  /** Input files relative to the repository root, with their sha256. */
  inputs: Record<string, string>;
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
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    packages: 'external',
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
  const tmp = `${BUNDLE}.${process.pid}.tmp`;
  writeFileSync(tmp, code);
  renameSync(tmp, BUNDLE);
  const manifest: Manifest = { format: FORMAT, node: process.version, esbuild: esbuild.version, inputs };
  writeFileSync(`${BUNDLE_MANIFEST}.${process.pid}.tmp`, JSON.stringify(manifest, null, 1));
  renameSync(`${BUNDLE_MANIFEST}.${process.pid}.tmp`, BUNDLE_MANIFEST);
  return BUNDLE;
}
