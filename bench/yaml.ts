/**
 * YAML input at scale (src/core/yaml-limits.ts): a scenario file and a
 * ConfigMap manifest with a mapping of 20k, 40k and 80k keys, parsed and
 * checked as `validate` does. Linear means each doubling about doubles the
 * time; before the duplicate-key check moved to a hash set the `yaml`
 * package's own check made it quadratic (3.9 / 12.7 / 46.2 s). Each figure is
 * the best of three in this process (the first run pays for the JIT).
 * Run alone: `npx tsx bench/yaml.ts`.
 */
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { loadManifestFile } from '../src/harness/manifests/manifests.js';
import { loadScenario } from '../src/harness/scenario/parse.js';
import type { BenchResult } from './library.js';

const SIZES = [20_000, 40_000, 80_000];

function keys(n: number, indent: string): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(`${indent}key-${i}: "value number ${i}"\n`);
  return lines.join('');
}

function best(fn: (i: number) => void): number {
  let min = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    fn(i);
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

export function benchYaml(): Promise<BenchResult[]> {
  const out: BenchResult[] = [];
  for (const kind of ['scenario', 'manifest'] as const) {
    const times: number[] = [];
    for (const n of SIZES) {
      // A scenario file with the mapping under a field validate rejects (after parsing and checking it all), and a ConfigMap's data.
      const text =
        kind === 'scenario'
          ? `name: big\nseed: 1\nsteps:\n  - advance: 1s\nextra:\n  big:\n${keys(n, '    ')}`
          : `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: default\ndata:\n${keys(n, '  ')}`;
      // Another file name each time: src/harness/manifests/source.ts reuses the parse of an unchanged file.
      const ms = best((i) => {
        const file = `big-${kind}-${n}-${i}.yaml`;
        if (kind === 'manifest') {
          loadManifestFile(file, text);
          return;
        }
        try {
          loadScenario(file, text);
        } catch {
          // `extra` is an unknown field: one error, reported after the whole file was parsed and checked
        }
      });
      times.push(ms);
      out.push({
        name: `yaml: ${kind} with a ${n / 1000}k-key mapping`,
        value: ms,
        unit: 'ms',
        note: `${(text.length / 1e6).toFixed(2)} MB${times.length > 1 ? `, ×${(ms / times[times.length - 2]!).toFixed(2)} for 2× keys (linear: ~2)` : ''}`,
      });
    }
  }
  out.push({ name: 'yaml: load average (1 min) while measuring', value: loadavg()[0]!, unit: '' });
  return Promise.resolve(out);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const r of await benchYaml()) console.log(`${r.name}: ${r.value.toFixed(2)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
}
