/**
 * Which mutants a run takes: the files of stryker.config.mjs's MUTATE list, the lines a change touched (the
 * changed-lines run for CI), or one shard's slice of the files (the sharded run on Kubernetes).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A glob of the MUTATE list as a RegExp over repository-relative paths ('**' any folders, '*' within one). */
export function globRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      // '**/' matches zero or more folders
      re += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Whether `file` is in the MUTATE list (globs; '!' entries exclude). */
export function selected(file: string, globs: readonly string[]): boolean {
  let ok = false;
  for (const g of globs) {
    if (g.startsWith('!')) {
      if (globRegExp(g.slice(1)).test(file)) ok = false;
    } else if (globRegExp(g).test(file)) ok = true;
  }
  return ok;
}

/** Folders never searched for files to mutate (as Stryker's own defaults, plus the project's outputs). */
const SKIP = new Set(['node_modules', '.git', '.stryker-tmp', 'out', 'coverage', '.hcs-testbed']);

/** The files under `root` that the MUTATE list selects, sorted (a tree walk: the testbed image has no .git). */
export function mutatedFiles(root: string, globs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!SKIP.has(e.name)) walk(p);
      } else if (p.endsWith('.ts') && !p.endsWith('.d.ts') && selected(p, globs)) out.push(p);
    }
  };
  walk('');
  return out.sort();
}

/** Line ranges [start, end] (1-based, inclusive) of a unified diff's added or changed lines, per new-side file. */
export function changedRanges(diff: string): Map<string, [number, number][]> {
  const out = new Map<string, [number, number][]>();
  let file: string | undefined;
  for (const line of diff.split('\n')) {
    const f = /^\+\+\+ (?:b\/)?(.+)$/.exec(line);
    if (f) {
      file = f[1] === '/dev/null' ? undefined : f[1];
      continue;
    }
    const h = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (h && file) {
      const start = Number(h[1]);
      const count = h[2] === undefined ? 1 : Number(h[2]);
      // A pure deletion (count 0) changed the code between two lines: the line after it stands for it.
      const range: [number, number] = count === 0 ? [Math.max(1, start), Math.max(1, start) + 1] : [start, start + count - 1];
      out.set(file, [...(out.get(file) ?? []), range]);
    }
  }
  return out;
}

/**
 * Stryker `mutate` entries for the mutated files' lines changed since `base` (committed and not): `file:start-end`
 * per hunk (https://stryker-mutator.io/docs/stryker-js/configuration/#mutate-string). A mutant is tested when its
 * whole span lies in a changed hunk; a file new since `base` is taken whole.
 */
export function changedMutateEntries(root: string, base: string, globs: readonly string[]): string[] {
  const diff = execFileSync('git', ['diff', '--unified=0', '--no-color', '--no-ext-diff', base, '--', '.'], { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20 });
  const ranges = changedRanges(diff);
  const entries: string[] = [];
  for (const [file, rs] of [...ranges].sort(([a], [b]) => a.localeCompare(b))) {
    if (!file.endsWith('.ts') || !selected(file, globs)) continue;
    let isNew = false;
    try {
      execFileSync('git', ['cat-file', '-e', `${base}:${file}`], { cwd: root, stdio: 'ignore' });
    } catch {
      isNew = true;
    }
    if (isNew) entries.push(file);
    else for (const [s, e] of rs) entries.push(`${file}:${s}-${e}`);
  }
  return entries;
}

/** Greedy longest-processing-time split of weighted items into `count` slices (deterministic: ties by name). */
export function splitBalanced(weights: ReadonlyMap<string, number>, count: number): string[][] {
  if (!Number.isInteger(count) || count < 1) throw new Error(`shard count must be a positive integer, got ${count}`);
  const slices = Array.from({ length: count }, () => ({ load: 0, items: [] as string[] }));
  const items = [...weights].sort(([a, wa], [b, wb]) => wb - wa || a.localeCompare(b));
  for (const [name, w] of items) {
    let best = 0;
    for (let i = 1; i < count; i++) if (slices[i]!.load < slices[best]!.load) best = i;
    slices[best]!.load += w;
    slices[best]!.items.push(name);
  }
  return slices.map((s) => s.items.sort());
}

/**
 * The weight of each mutated file for the shard split: its mutant count from Stryker's own instrumenter, so every
 * index computes the same split from the same sources without talking to the others.
 */
export async function mutantCounts(root: string, files: readonly string[]): Promise<Map<string, number>> {
  const { Instrumenter } = (await import('@stryker-mutator/instrumenter')) as typeof import('@stryker-mutator/instrumenter');
  const silent = { isTraceEnabled: () => false, isDebugEnabled: () => false, isInfoEnabled: () => false, isWarnEnabled: () => false, isErrorEnabled: () => false, isFatalEnabled: () => false, trace() {}, debug() {}, info() {}, warn() {}, error() {}, fatal() {} };
  const ins = new Instrumenter(silent);
  const counts = new Map<string, number>();
  for (const f of files) {
    const r = await ins.instrument([{ name: f, mutate: true, content: readFileSync(join(root, f), 'utf8') }], { plugins: null, excludedMutations: [], ignorers: [], noHeader: true });
    counts.set(f, r.mutants.length);
  }
  return counts;
}
