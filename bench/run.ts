/**
 * `npm run bench`: every benchmark, each printing its figures. Nothing here
 * asserts a speed; targets are printed beside the measurements.
 *
 *   npm run bench                  # all
 *   npm run bench -- library       # one group: library | scale | mock-hcs
 *   BENCH_SCALE_N=200 npm run bench -- scale
 */
import { benchLibrary } from './library.js';
import { benchMockHcs } from './mock-hcs.js';
import { benchScale } from './scale.js';

interface BenchResult {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

const groups: Record<string, () => Promise<BenchResult[]>> = {
  library: () => benchLibrary(),
  'mock-hcs': () => benchMockHcs(),
  scale: () => benchScale(Number(process.env.BENCH_SCALE_N ?? 1000)),
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((w) => !groups[w]);
if (unknown.length) {
  console.error(`unknown benchmark group(s): ${unknown.join(', ')} (known: ${Object.keys(groups).join(', ')})`);
  process.exit(2);
}
console.log(`node ${process.version}, ${new Date().toISOString()}`);
for (const name of wanted.length ? wanted : Object.keys(groups)) {
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
