/**
 * The `hcs-testbed` command as a user runs it: a fresh process each time
 * (bin/hcs-testbed.mjs), from the CLI's precompiled bundle and, for
 * comparison, from the sources through tsx (HCS_TESTBED_CLI_TSX=1). Wall time
 * and the CPU of the process and everything it started (its workers), as
 * the children's CPU the kernel adds to this process once they have exited.
 * Medians of BENCH_ROUNDS (default 3) alternated rounds; printed, never asserted.
 *
 *   npm run bench -- cli
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureCliBundle } from '../src/harness/cli/cli-bundle.js';
import { median } from './support/machine.js';

interface BenchResult {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

const BIN = fileURLToPath(new URL('../bin/hcs-testbed.mjs', import.meta.url));

/** CPU seconds of this process's exited children so far (Linux /proc: cutime + cstime; 0 elsewhere). */
function childrenCpu(): number {
  try {
    const st = readFileSync('/proc/self/stat', 'utf8');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return 0;
  }
}

async function once(args: string[], tsx: boolean): Promise<{ wall: number; cpu: number; code: number }> {
  const c0 = childrenCpu();
  const t0 = performance.now();
  const code = await new Promise<number>((resolve) => {
    const env = { ...process.env, ...(tsx ? { HCS_TESTBED_CLI_TSX: '1' } : {}) };
    execFile(process.execPath, [BIN, ...args], { env, maxBuffer: 64 << 20 }, (err) => resolve(err ? (typeof err.code === 'number' ? err.code : 1) : 0));
  });
  return { wall: (performance.now() - t0) / 1000, cpu: childrenCpu() - c0, code };
}

export async function benchCli(): Promise<BenchResult[]> {
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
  const bundled = await ensureCliBundle();
  if (!bundled) return [{ name: 'cli bundle', value: 0, unit: '', note: 'no bundle (esbuild missing or cache not writable): the CLI runs through tsx' }];
  await once(['--help'], false); // its V8 code cache, written by the first process that runs it
  const help: { b: number; t: number; bc: number; tc: number }[] = [];
  const lib: { w2: number; c2: number; w1: number; c1: number; code: number }[] = [];
  const l0 = `load ${loadavg()[0]!.toFixed(1)}`;
  for (let r = 0; r < rounds; r++) {
    const b = await once(['--help'], false);
    const t = await once(['--help'], true);
    help.push({ b: b.wall, t: t.wall, bc: b.cpu, tc: t.cpu });
    const two = await once(['run', 'scenarios', '--jobs', '2', '--out', 'out/bench-cli'], false);
    const one = await once(['run', 'scenarios', '--jobs', '1', '--out', 'out/bench-cli'], false);
    lib.push({ w2: two.wall, c2: two.cpu, w1: one.wall, c1: one.cpu, code: two.code || one.code });
  }
  const l1 = `load ${loadavg()[0]!.toFixed(1)}`;
  const m = <T>(xs: T[], f: (x: T) => number): number => median(xs.map(f));
  const all = <T>(xs: T[], f: (x: T) => number): string => (xs.length > 1 ? `; rounds: ${xs.map((x) => f(x).toFixed(2)).join(', ')}` : '');
  const failed = lib.some((x) => x.code !== 0) ? '; a scenario FAILED' : '';
  return [
    { name: 'hcs-testbed --help, from the bundle', value: m(help, (x) => x.b), unit: 's wall', note: `${m(help, (x) => x.bc).toFixed(2)} s CPU${all(help, (x) => x.b)}` },
    { name: 'hcs-testbed --help, through tsx', value: m(help, (x) => x.t), unit: 's wall', note: `${m(help, (x) => x.tc).toFixed(2)} s CPU${all(help, (x) => x.t)}` },
    {
      name: 'hcs-testbed run scenarios --jobs 2 (a fresh process)',
      value: m(lib, (x) => x.w2),
      unit: 's wall',
      note: `${m(lib, (x) => x.c2).toFixed(1)} s CPU with its workers; target < 4 s${all(lib, (x) => x.w2)}${failed}; median of ${rounds} rounds, ${l0} before, ${l1} after`,
    },
    { name: 'hcs-testbed run scenarios --jobs 1 (a fresh process)', value: m(lib, (x) => x.w1), unit: 's wall', note: `${m(lib, (x) => x.c1).toFixed(1)} s CPU${all(lib, (x) => x.w1)}${failed}` },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const r of await benchCli()) console.log(`${r.name}: ${r.value.toFixed(2)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
}
