/**
 * `hcs-testbed explore SCENARIO [options]` — see docs/explore.md.
 */
import { writeFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseDuration } from '../../core/clock.js';
import { errorMessage, InputError } from '../../core/errors.js';
import { explore, type ExploreReport } from '../explore/explore.js';
import { defaultJobs } from '../explore/pool.js';
import { describeItem } from '../explore/schedule.js';
import { loadScenario } from '../scenario/parse.js';
import { writeScenarioFrom } from '../explore/bundle.js';
import { readBundleFile } from '../capture/bundle-file.js';

export const EXPLORE_HELP = `hcs-testbed explore SCENARIO [options]

Runs one scenario many times with other seeds and random schedules of cloud
faults and controller crashes, drawn from what its baseline run exercised
(the cloud operations it called, the controllers that reconciled, the events
its log holds). Failures (invariant violations, failed steps, runs that error
or stall) are grouped by signature; each is shrunk to a minimal schedule
(delta debugging, re-run to confirm) and written as
  OUT/finding-N.yaml   the scenario with that seed and schedule (hcs-testbed run OUT/finding-N.yaml)
  OUT/finding-N/       a bundle: scenario.yaml + the manifests it needs, events.jsonl,
                       snapshot.json (servers, volumes, attachments, pool entries), finding.json;
                       hcs-testbed run OUT/finding-N replays it byte for byte (same event log)

Options:
  --runs N             most exploration runs (default 100)
  --time DURATION      wall-time budget, e.g. 90s, 10m (stops early; then the run count depends on the machine)
  --seed N             exploration seed (default 1): same seed + --runs → same runs, findings and files
  --jobs N             worker processes (default: the machine's cores, ${defaultJobs()} here)
  --max-items N        most faults/crashes in one generated schedule (default 4)
  --max-findings N     distinct findings to shrink and write (default 5)
  --progress-every N   a progress line (runs/s, ETA, findings so far) on stderr every N runs (default 10)
  --out DIR            where findings go (default out/explore/<scenario name>)
  --from BUNDLE        explore from a captured state (hcs-testbed capture; docs/incident.md): the scenario's
                       steps run on a testbed started from the bundle (written as scenario-from-bundle.yaml
                       in --out, every path absolute)
  --plugin MODULE      a testbed plugin (options()/prepare(testbed)) loaded by every worker, e.g. a
                       planted bug (test/explore/mutant-plugin.ts); replay its bundles with run --plugin
  --json               print the report as JSON on stdout instead of the summary
  --help

Exit codes: 0 no finding, 1 findings, 2 bad input.
`;

function int(v: string | undefined, name: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new InputError(`must be an integer >= ${min}, got "${v}"`, undefined, undefined, `--${name}`);
  return n;
}

export function summaryText(r: ExploreReport): string {
  const lines = [`explored ${r.scenario}: ${r.runs} runs on ${r.jobs} workers in ${(r.wallMs / 1000).toFixed(1)}s (${r.runsPerSecond.toFixed(2)} runs/s), seed ${r.seed}`];
  lines.push(`baseline: ${r.baseline.ok ? 'passed' : `FAILED — ${r.baseline.failure?.signature}`}`);
  if (r.findings.length === 0) lines.push('no findings');
  r.findings.forEach((f, i) => {
    lines.push(`finding ${i + 1}: ${f.signature} — ${f.hits} of ${r.runs} runs, first run ${f.firstRun} (seed ${f.seed})`);
    lines.push(`  ${f.failure.error.split('\n')[0]!.slice(0, 400)}`);
    if (f.shrunk) {
      lines.push(`  shrunk from ${f.schedule.length} to ${f.shrunk.length} faults/crashes in ${f.shrinkTests} runs${f.confirmed ? ' (confirmed)' : ' (NOT confirmed)'}:`);
      for (const it of f.shrunk) lines.push(`    - ${describeItem(it)}`);
      if (f.shrunk.length === 0) lines.push('    (none: the seed alone fails)');
    }
    if (f.yaml) lines.push(`  replay: hcs-testbed run ${f.yaml}`);
    if (f.bundle) lines.push(`  bundle: ${f.bundle}/ (${f.bundleReproduced ? 'reproduces' : 'does NOT reproduce'}; ${f.bundleIdentical ? 'event log identical on replay' : 'event log DIFFERS on replay'})`);
  });
  return lines.join('\n') + '\n';
}

export async function exploreMain(argv: string[], write: (s: string) => void, writeErr: (s: string) => void = (s) => process.stderr.write(s)): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        runs: { type: 'string' },
        time: { type: 'string' },
        seed: { type: 'string' },
        jobs: { type: 'string' },
        'max-items': { type: 'string' },
        'max-findings': { type: 'string' },
        'progress-every': { type: 'string' },
        out: { type: 'string' },
        plugin: { type: 'string' },
        from: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    write(`error: ${errorMessage(e)}\n\n${EXPLORE_HELP}`);
    return 2;
  }
  const o = parsed.values;
  if (o.help) {
    write(EXPLORE_HELP);
    return 0;
  }
  let opts;
  try {
    if (parsed.positionals.length !== 1) throw new InputError(`explore takes exactly one scenario file, got ${parsed.positionals.length}`);
    const file = parsed.positionals[0]!;
    let st;
    try {
      st = statSync(file);
    } catch {
      throw new InputError('no such file', file);
    }
    if (!st.isFile()) throw new InputError('explore takes a scenario file, not a directory', file);
    let explored = file;
    if (o.from !== undefined) {
      // The scenario, starting from the captured bundle (docs/incident.md): written beside the findings, every path absolute.
      const dest = join(o.out ?? join('out', 'explore', loadScenario(file).name), 'scenario-from-bundle.yaml');
      try {
        readBundleFile(o.from);
      } catch (e) {
        throw new InputError(errorMessage(e), undefined, undefined, '--from');
      }
      writeScenarioFrom(file, o.from, dest);
      explored = dest;
    }
    loadScenario(explored);
    let timeMs: number | undefined;
    if (o.time !== undefined) {
      try {
        timeMs = parseDuration(o.time);
      } catch (e) {
        throw new InputError(errorMessage(e), undefined, undefined, '--time');
      }
    }
    const seed = o.seed === undefined ? 1 : Number(o.seed);
    if (!Number.isInteger(seed)) throw new InputError(`must be an integer, got "${o.seed}"`, undefined, undefined, '--seed');
    opts = {
      file: explored,
      seed,
      runs: int(o.runs, 'runs', 1) ?? (timeMs !== undefined ? Number.MAX_SAFE_INTEGER : 100),
      ...(timeMs !== undefined ? { timeMs } : {}),
      jobs: int(o.jobs, 'jobs', 1) ?? defaultJobs(),
      ...(o['max-items'] !== undefined ? { maxItems: int(o['max-items'], 'max-items', 1)! } : {}),
      ...(o['max-findings'] !== undefined ? { maxFindings: int(o['max-findings'], 'max-findings', 0)! } : {}),
      ...(o['progress-every'] !== undefined ? { progressEvery: int(o['progress-every'], 'progress-every', 1)! } : {}),
      ...(o.out !== undefined ? { out: o.out } : {}),
      ...(o.plugin !== undefined ? { plugin: o.plugin } : {}),
      log: (l: string) => writeErr(l + '\n'),
    };
  } catch (e) {
    write(`error: ${errorMessage(e)}\n`);
    return 2;
  }
  let report: ExploreReport;
  try {
    report = await explore(opts);
  } catch (e) {
    write(`error: ${errorMessage(e)}\n`);
    return e instanceof InputError ? 2 : 1;
  }
  const out = opts.out ?? join('out', 'explore', loadScenario(opts.file).name);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'report.json'), JSON.stringify(report, null, 2) + '\n');
  write(o.json ? JSON.stringify(report, null, 2) + '\n' : summaryText(report) + `report: ${join(out, 'report.json')}\n`);
  return report.findings.length ? 1 : 0;
}
