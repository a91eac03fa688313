/**
 * The top of a V8 CPU profile (a `.cpuprofile` from `node --cpu-prof` or
 * BENCH_PROFILE=… in bench/scale.ts): functions by self time, with their
 * total (inclusive) time beside it, as a Markdown table for docs/performance.md.
 *
 *   npx tsx bench/profile-top.ts PROFILE.cpuprofile [--top N] [--by function|file|area] [--callers NAME] [--md]
 *
 * Self time is the sum of the sampling intervals (timeDeltas) that landed in
 * the function itself; total time counts a sample once for every distinct
 * function on its stack (recursion counted once). Functions are keyed by
 * name, file and line, so the same function reached by several call paths is
 * one row. Nothing here is asserted: it reads a profile and prints.
 *
 * Sources run through tsx are transformed with esbuild into one line each
 * (minifyWhitespace), so the profile's lines are all 1: a TypeScript file's
 * frame is mapped back to its source line by transforming the file again
 * with tsx's options (esbuild, keepNames, minifyWhitespace, a source map)
 * and reading the map at the frame's column.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface TopRow {
  key: string;
  selfMs: number;
  totalMs: number;
}

export type GroupBy = 'function' | 'file' | 'area';

/** Where a frame's code lives, relative to the working directory when it is under it (node_modules shortened). */
function place(url: string): string {
  if (!url) return '';
  let p = url;
  if (url.startsWith('file://')) {
    try {
      p = fileURLToPath(url);
    } catch {
      p = url;
    }
  }
  const nm = p.lastIndexOf('/node_modules/');
  if (nm >= 0) return p.slice(nm + 1);
  const r = relative(process.cwd(), p);
  return r.startsWith('..') ? p : r;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Generated (line, column) → source line (0-based), from a source map's mappings (one source). */
function decodeMappings(mappings: string): (line: number, col: number) => number | undefined {
  const lines: [number, number][][] = [];
  let srcLine = 0;
  for (const text of mappings.split(';')) {
    const segs: [number, number][] = [];
    let genCol = 0;
    for (const seg of text.split(',')) {
      if (!seg) continue;
      const vals: number[] = [];
      let v = 0;
      let shift = 0;
      for (const ch of seg) {
        const d = B64.indexOf(ch);
        v += (d & 31) << shift;
        if (d & 32) shift += 5;
        else {
          vals.push(v & 1 ? -(v >>> 1) : v >>> 1);
          v = 0;
          shift = 0;
        }
      }
      genCol += vals[0] ?? 0;
      if (vals.length >= 4) {
        srcLine += vals[2]!;
        segs.push([genCol, srcLine]);
      }
    }
    lines.push(segs);
  }
  return (line, col) => {
    const segs = lines[line];
    if (!segs?.length) return undefined;
    let lo = 0;
    let hi = segs.length - 1;
    if (segs[0]![0] > col) return segs[0]![1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (segs[mid]![0] <= col) lo = mid;
      else hi = mid - 1;
    }
    return segs[lo]![1];
  };
}

const sourceMaps = new Map<string, ((line: number, col: number) => number | undefined) | undefined>();

/** The source line (1-based) of a frame in a TypeScript file tsx loaded, else the frame's own line. */
function sourceLine(f: CallFrame): number {
  if (!f.url.startsWith('file://') || !/\.m?ts$/.test(f.url) || f.url.includes('/node_modules/')) return f.lineNumber + 1;
  if (!sourceMaps.has(f.url)) {
    let map: ((line: number, col: number) => number | undefined) | undefined;
    try {
      const file = fileURLToPath(f.url);
      // tsx's own transform options (its dist: target, sourcemap, minifyWhitespace, keepNames), so columns match.
      const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
      const r = esbuild.transformSync(readFileSync(file, 'utf8'), { target: `node${process.versions.node}`, loader: 'ts', format: 'esm', sourcemap: 'external', minifyWhitespace: true, keepNames: true, sourcefile: file });
      map = decodeMappings((JSON.parse(r.map) as { mappings: string }).mappings);
    } catch {
      map = undefined;
    }
    sourceMaps.set(f.url, map);
  }
  const line = sourceMaps.get(f.url)?.(f.lineNumber, f.columnNumber);
  return line === undefined ? f.lineNumber + 1 : line + 1;
}

/** A file's area: src/<folder>, mock-hcs, node_modules/<package>, node:<module> (crypto's parts as one). */
function areaOf(where: string): string {
  if (!where) return '';
  if (where.startsWith('node_modules/')) {
    const parts = where.split('/');
    return parts.slice(0, parts[1]!.startsWith('@') ? 3 : 2).join('/');
  }
  if (where.startsWith('node:')) return where.replace(/^node:internal\/(crypto|streams|modules)\/.*$/, 'node:$1').replace(/^node:internal\//, 'node:');
  const parts = where.split('/');
  return parts.length > 2 ? parts.slice(0, 2).join('/') : parts[0]!;
}

function keyOf(f: CallFrame, by: GroupBy): string {
  const where = place(f.url);
  // V8's own entries are named "(garbage collector)", "(program)", ...; a nameless native frame is "(native)".
  const own = f.functionName.startsWith('(') ? f.functionName : `(${f.functionName || 'native'})`;
  if (by === 'file') return where || own;
  if (by === 'area') return areaOf(where) || own;
  const name = f.functionName || '(anonymous)';
  return where ? `${name} ${where}:${sourceLine(f)}` : name;
}

/** Self and total milliseconds per function (or file), largest self time first. */
export function topOf(profile: CpuProfile, by: GroupBy = 'function'): { rows: TopRow[]; totalMs: number } {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    // timeDeltas[i] is the time before sample i; the interval a sample stands for is the next delta.
    const us = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
    if (us <= 0) continue;
    totalUs += us;
    const leaf = byId.get(profile.samples[i]!);
    if (!leaf) continue;
    const k = keyOf(leaf.callFrame, by);
    self.set(k, (self.get(k) ?? 0) + us);
    const seen = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame;
      if (f.functionName === '(root)') continue;
      const kk = keyOf(f, by);
      if (seen.has(kk)) continue;
      seen.add(kk);
      total.set(kk, (total.get(kk) ?? 0) + us);
    }
  }
  const rows = [...self.entries()].map(([key, s]) => ({ key, selfMs: s / 1000, totalMs: (total.get(key) ?? s) / 1000 }));
  rows.sort((a, b) => b.selfMs - a.selfMs || a.key.localeCompare(b.key));
  return { rows, totalMs: totalUs / 1000 };
}

/**
 * Who calls the functions whose key contains `needle`: for each sample whose
 * leaf (self time) is such a function, the first frame up its stack outside
 * that function's area (src/core/kube for the store, mock-hcs, a package: the
 * caller that used it, not its own helpers), by milliseconds.
 */
export function callersOf(profile: CpuProfile, needle: string): TopRow[] {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const ms = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const us = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
    const leaf = byId.get(profile.samples[i]!);
    if (!leaf || us <= 0 || !keyOf(leaf.callFrame, 'function').includes(needle)) continue;
    let id = parent.get(leaf.id);
    const area = areaOf(place(leaf.callFrame.url));
    while (id !== undefined && areaOf(place(byId.get(id)!.callFrame.url)) === area) id = parent.get(id);
    const k = id === undefined ? '(top)' : keyOf(byId.get(id)!.callFrame, 'function');
    ms.set(k, (ms.get(k) ?? 0) + us / 1000);
  }
  return [...ms.entries()].map(([key, v]) => ({ key, selfMs: v, totalMs: v })).sort((a, b) => b.selfMs - a.selfMs);
}

export function formatTop(rows: TopRow[], totalMs: number, n: number, md: boolean, what = 'function'): string {
  const pct = (ms: number): string => `${((100 * ms) / totalMs).toFixed(1)} %`;
  const top = rows.slice(0, n);
  if (md) {
    const lines = [`| # | self ms | self | total | ${what} |`, '| ---: | ---: | ---: | ---: | --- |'];
    top.forEach((r, i) => lines.push(`| ${i + 1} | ${r.selfMs.toFixed(0)} | ${pct(r.selfMs)} | ${pct(r.totalMs)} | \`${r.key.replace(/\|/g, '\\|')}\` |`));
    lines.push(`\nprofile: ${(totalMs / 1000).toFixed(2)} s sampled; top ${top.length} = ${pct(top.reduce((a, r) => a + r.selfMs, 0))} of it`);
    return lines.join('\n');
  }
  const lines = top.map((r, i) => `${String(i + 1).padStart(3)}  ${r.selfMs.toFixed(0).padStart(7)} ms  ${pct(r.selfMs).padStart(7)}  total ${pct(r.totalMs).padStart(7)}  ${r.key}`);
  lines.push(`profile: ${(totalMs / 1000).toFixed(2)} s sampled`);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const opt = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const file = args.find((a, i) => !a.startsWith('--') && !['--top', '--by', '--callers'].includes(args[i - 1] ?? ''));
  const by = (opt('--by') ?? 'function') as GroupBy;
  if (!file || !['function', 'file', 'area'].includes(by)) {
    console.error('usage: npx tsx bench/profile-top.ts PROFILE.cpuprofile [--top N] [--by function|file|area] [--callers NAME] [--md]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const { rows, totalMs } = topOf(profile, by);
  const needle = opt('--callers');
  const n = Number(opt('--top') ?? 10);
  if (needle) console.log(formatTop(callersOf(profile, needle), totalMs, n, args.includes('--md'), `caller of ${needle}`));
  else console.log(formatTop(rows, totalMs, n, args.includes('--md'), by));
}
