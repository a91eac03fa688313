/**
 * `npm run bench`: every benchmark, each printing its figures. Nothing here
 * asserts a speed; targets are printed beside the measurements.
 *
 *   npm run bench                  # all
 *   npm run bench -- library       # one group: library | scale | fleet | mock-hcs | mock-hcs-growth | explore | servers | cli | capture | yaml | dashboard | upstream | upstream-generated | mutants | mutation
 *   BENCH_SERVERS_SECONDS=20 npm run bench -- servers   # hostile socket crowds against a listening mock-hcs (bench/servers.ts)
 *   npm run bench -- facade-load   # serve under issue 32's loads: huge replicas, unauthenticated bodies, 20,000 idle sockets, slowloris (bench/facade-load.ts; opt-in, ~5 min)
 *   unshare -n sh -c 'ip link set lo up && exec npm run bench -- upstream'   # the upstream managers' rollout (bench/upstream.ts)
 *   BENCH_SCALE_N=200 npm run bench -- scale
 *   BENCH_FLEET=20x50 npm run bench -- fleet   # clusters x machines per cluster (default 100x100, opt-in: minutes on this machine)
 *   npm run bench -- mutants       # the mutant catalogue's kill table (bench/mutants.ts; several minutes)
 *   npm run bench -- mutation      # StrykerJS over the product code, the library as its test (bench/mutation.ts; opt-in, not in a plain run; `stryker` is the same group)
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { benchCapture } from './capture.js';
import { benchCli } from './cli.js';
import { benchDashboard } from './dashboard.js';
import { benchExplore } from './explore.js';
import { benchFacadeLoad } from './facade-load.js';
import { benchLibrary } from './library.js';
import { benchMockHcs } from './mock-hcs.js';
import { benchMockHcsGrowth } from './mock-hcs-growth.js';
import { benchMutants } from './mutants.js';
import { benchMutation } from './mutation.js';
import { benchServers } from './servers.js';
import { benchUpstream } from './upstream.js';
import { benchUpstreamGenerated } from './upstream-generated.js';
import { benchYaml } from './yaml.js';

interface BenchResult {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

/**
 * A benchmark script (scale.ts, fleet.ts) in a fresh node process with this
 * one's flags: its peak memory (max RSS) is then its own, not that of the
 * groups run before it.
 */
function inChild(file: string, args: string[], nodeFlags: string[] = []): Promise<BenchResult[]> {
  const script = fileURLToPath(new URL(file, import.meta.url));
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...process.execArgv, ...nodeFlags, script, ...args, '--json'], { maxBuffer: 16 << 20, env: process.env }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${file} failed: ${stderr.trim() || err.message}`));
      const lines = stdout.trim().split('\n');
      const line = lines.pop() ?? '';
      // Anything else it printed (BENCH_VERBOSE's per-controller figures) is shown as it came.
      if (lines.length) console.log(lines.join('\n'));
      try {
        resolve(JSON.parse(line) as BenchResult[]);
      } catch {
        reject(new Error(`${file} printed no result: ${stdout.slice(-500)}`));
      }
    });
  });
}

const groups: Record<string, () => Promise<BenchResult[]>> = {
  library: () => benchLibrary(),
  'mock-hcs': () => benchMockHcs(),
  'mock-hcs-growth': () => benchMockHcsGrowth(),
  servers: () => benchServers(),
  scale: () => inChild('./scale.ts', [String(Number(process.env.BENCH_SCALE_N ?? 1000))]),
  // V8's default old-space limit here is ~4.1 GiB (heap_size_limit on a 24 GiB machine); the 100 x 100 fleet's heap
  // approaches it and the collector then runs almost without pause (provisioning did not end in 8 min; with room, in
  // 105 s and 3.4 GiB peak RSS). The limit is room, not use: the peak memory is printed as measured.
  fleet: () => inChild('./fleet.ts', [process.env.BENCH_FLEET ?? '100x100'], ['--max-old-space-size=12288']),
  explore: () => benchExplore(),
  cli: () => benchCli(),
  capture: () => benchCapture(),
  yaml: () => benchYaml(),
  dashboard: () => benchDashboard(),
  upstream: () => benchUpstream(),
  'upstream-generated': () => benchUpstreamGenerated(),
  mutants: () => benchMutants(),
  mutation: () => benchMutation(),
  stryker: () => benchMutation(),
  'facade-load': () => benchFacadeLoad(),
};
/** Groups run only when named (they fetch a tool from the registry, or take long). */
const OPT_IN = new Set(['mutation', 'stryker', 'fleet', 'facade-load']);

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((w) => !groups[w]);
if (unknown.length) {
  console.error(`unknown benchmark group(s): ${unknown.join(', ')} (known: ${Object.keys(groups).join(', ')})`);
  process.exit(2);
}
console.log(`node ${process.version}, ${new Date().toISOString()}`);
for (const name of wanted.length ? wanted : Object.keys(groups).filter((g) => !OPT_IN.has(g))) {
  console.log(`\n== ${name}`);
  const t0 = performance.now();
  try {
    for (const r of await groups[name]!()) {
      const v = Number.isInteger(r.value) ? String(r.value) : r.value.toFixed(2);
      console.log(`  ${r.name}: ${v} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
    }
  } catch (e) {
    console.log(`  FAILED: ${(e as Error).message}`);
    process.exitCode = 1;
  }
  console.log(`  (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}
