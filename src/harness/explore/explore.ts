/**
 * `hcs-testbed explore SCENARIO`: run one scenario many times with seeds and
 * random fault/crash schedules drawn from what its baseline run exercised,
 * on worker processes; group the failures by signature; shrink each to a
 * 1-minimal schedule (ddmin, re-running to confirm); write a replayable
 * scenario and a bundle per finding. See docs/explore.md.
 *
 * Deterministic given `seed` and `runs`: run i's seed and schedule come from
 * (seed, i) alone, findings are ordered by their first run, and shrinking
 * picks candidates in a fixed order. A `timeMs` budget stops early (how many
 * runs fit depends on the machine).
 */
import { join } from 'node:path';
import { SeededRng } from '../../core/rng.js';
import { loadScenario } from '../scenario/parse.js';
import { writeFinding } from './bundle.js';
import { generateSchedule } from './generate.js';
import { loadPlugin } from './plugin.js';
import { WorkerPool, type Reply } from './pool.js';
import type { Failure, Profile, RunSummary } from './run-one.js';
import { describeItem, type ScheduleItem } from './schedule.js';
import { ddmin } from './shrink.js';

export interface ExploreOptions {
  file: string;
  /** Exploration seed: fixes every run's seed and schedule. */
  seed: number;
  /** Most runs (default 100). */
  runs?: number;
  /** Wall-time budget in ms (stop dispatching runs after it). */
  timeMs?: number;
  jobs: number;
  /** Testbed plugin module (a mutant), loaded by the workers and for the bundle run. */
  plugin?: string;
  /** Where findings go (default out/explore/<scenario name>). */
  out?: string;
  /** Most faults/crashes in one generated schedule (default 4). */
  maxItems?: number;
  /** Draw the adversarial cloud too (throttling, list lag; GenerateOptions.adversarial). */
  adversarial?: boolean;
  /** Distinct findings to shrink and write (default 5). */
  maxFindings?: number;
  /** A progress line every this many runs (default 10). */
  progressEvery?: number;
  /** Progress and status lines (stderr). */
  log?: (line: string) => void;
}

export interface Finding {
  signature: string;
  /** Run index (from 0) that first hit it, and how many runs hit it. */
  firstRun: number;
  hits: number;
  seed: number;
  schedule: ScheduleItem[];
  failure: Failure;
  shrunk?: ScheduleItem[];
  shrinkTests?: number;
  /** The shrunk schedule failed the same way when re-run, with the same event log twice. */
  confirmed?: boolean;
  yaml?: string;
  bundle?: string;
  /** The bundle's own run reproduced the signature, and a worker's replay of the bundle had the same event log. */
  bundleReproduced?: boolean;
  bundleIdentical?: boolean;
}

export interface ExploreReport {
  scenario: string;
  seed: number;
  jobs: number;
  runs: number;
  wallMs: number;
  /** Exploration runs per second (the baseline and shrinking excluded). */
  runsPerSecond: number;
  baseline: { ok: boolean; failure?: Failure; profile: Profile };
  findings: Finding[];
}

/** Run i's seed and schedule, from the exploration seed alone. */
export function plannedRun(seed: number, i: number, profile: Profile, maxItems?: number, adversarial = false): { seed: number; schedule: ScheduleItem[] } {
  const rng = new SeededRng((Math.imul(seed, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca77)) | 0);
  const runSeed = 1 + rng.int(2 ** 31 - 2);
  return { seed: runSeed, schedule: generateSchedule(rng.fork('schedule'), profile, { ...(maxItems !== undefined ? { maxItems } : {}), ...(adversarial ? { adversarial } : {}) }) };
}

function summaryOf(r: Reply): RunSummary {
  if ('summary' in r) return r.summary;
  const error = 'error' in r ? r.error : 'unexpected answer from the worker';
  return { ok: false, failure: { signature: `worker: ${error.split('\n')[0]!.slice(0, 160)}`, error }, events: 0, eventsHash: '', virtualMs: 0, wallMs: 0 };
}

function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

export async function explore(o: ExploreOptions): Promise<ExploreReport> {
  const log = o.log ?? (() => undefined);
  const scenario = loadScenario(o.file);
  const out = o.out ?? join('out', 'explore', scenario.name);
  const runs = o.runs ?? 100;
  const every = Math.max(1, o.progressEvery ?? 10);
  if (o.plugin) await loadPlugin(o.plugin); // bad plugins fail here, before any worker starts
  const pool = new WorkerPool({ jobs: o.jobs, ...(o.plugin ? { plugin: o.plugin } : {}) });
  const wall0 = performance.now();
  try {
    // 1. Baseline: what the scenario exercises.
    // On every worker at once: it warms them all up (the runs/s that follow are those of warm workers) and checks
    // that the scenario is deterministic (the same event log everywhere) before any finding is trusted.
    const bases = await Promise.all(Array.from({ length: pool.size }, () => pool.run({ type: 'explore', file: o.file, seed: scenario.seed, schedule: [], profile: true })));
    const base = summaryOf(bases[0]!);
    if (bases.some((b) => summaryOf(b).eventsHash !== base.eventsHash)) log(`explore: WARNING: the baseline's event log differs between workers — the scenario is not deterministic; findings may not replay`);
    if (!base.profile) throw new Error(`the baseline run of ${o.file} did not complete: ${base.failure?.error ?? 'no profile'}`);
    const profile = base.profile;
    log(`explore ${scenario.name}: baseline ${base.ok ? 'passed' : `FAILED (${base.failure!.signature})`}; ${profile.calls.length} cloud operations (${profile.calls.reduce((s, c) => s + c.count, 0)} calls), ${profile.controllers.length} controllers, ${profile.anchors.length} event types to crash after; ${runs} runs on ${pool.size} workers`);

    // 2. Runs, on every worker; results kept by index.
    const results: (RunSummary | undefined)[] = [];
    const planned: { seed: number; schedule: ScheduleItem[] }[] = [];
    const bySignature = new Map<string, Finding>();
    let done = 0;
    let next = 0;
    const t0 = performance.now();
    const inTime = (): boolean => o.timeMs === undefined || performance.now() - t0 < o.timeMs;
    const progress = (): void => {
      const el = performance.now() - t0;
      const rate = done / (el / 1000);
      const left = o.timeMs !== undefined ? Math.min((runs - done) / rate * 1000, o.timeMs - el) : ((runs - done) / rate) * 1000;
      const found = [...bySignature.values()].map((f) => `${f.signature} ×${f.hits}`).join('; ');
      log(`explore: ${done}/${runs} runs, ${rate.toFixed(2)} runs/s, ETA ${clock(left)}, findings ${bySignature.size}${found ? `: ${found}` : ''}`);
    };
    const note = (i: number, r: RunSummary): void => {
      results[i] = r;
      done++;
      if (r.failure) {
        const f = bySignature.get(r.failure.signature);
        if (f) {
          f.hits++;
          if (i < f.firstRun) Object.assign(f, { firstRun: i, seed: planned[i]!.seed, schedule: planned[i]!.schedule, failure: r.failure });
        } else bySignature.set(r.failure.signature, { signature: r.failure.signature, firstRun: i, hits: 1, seed: planned[i]!.seed, schedule: planned[i]!.schedule, failure: r.failure });
      }
      if (done % every === 0) progress();
    };
    const worker = async (): Promise<void> => {
      while (next < runs && inTime()) {
        const i = next++;
        planned[i] = plannedRun(o.seed, i, profile, o.maxItems, o.adversarial);
        note(i, summaryOf(await pool.run({ type: 'explore', file: o.file, ...planned[i]! })));
      }
    };
    await Promise.all(Array.from({ length: pool.size * 2 }, () => worker()));
    const runWall = performance.now() - t0;
    if (done % every !== 0) progress();

    // 3. Shrink, confirm and write each finding (in order of first appearance).
    const findings = [...bySignature.values()].sort((a, b) => a.firstRun - b.firstRun);
    let n = 0;
    for (const f of findings.slice(0, o.maxFindings ?? 5)) {
      n++;
      log(`explore: finding ${n}: ${f.signature} (run ${f.firstRun}, seed ${f.seed}, ${f.schedule.length} faults/crashes); shrinking…`);
      const stats = { tests: 0 };
      const fails = async (cands: ScheduleItem[][]): Promise<boolean[]> => {
        const rs = await Promise.all(cands.map((schedule) => pool.run({ type: 'explore', file: o.file, seed: f.seed, schedule })));
        return rs.map((r) => summaryOf(r).failure?.signature === f.signature);
      };
      f.shrunk = await ddmin(f.schedule, fails, stats);
      f.shrinkTests = stats.tests;
      const again = await Promise.all([0, 1].map(() => pool.run({ type: 'explore', file: o.file, seed: f.seed, schedule: f.shrunk! })).map(async (p) => summaryOf(await p)));
      f.confirmed = again.every((r) => r.failure?.signature === f.signature) && again[0]!.eventsHash === again[1]!.eventsHash;
      log(`explore: finding ${n}: ${f.shrunk.length} of ${f.schedule.length} kept after ${stats.tests} runs${f.confirmed ? ', confirmed' : ', NOT confirmed on re-run'}: ${f.shrunk.map(describeItem).join('; ') || 'no faults or crashes (the seed alone)'}`);
      const w = await writeFinding({
        file: o.file,
        seed: f.seed,
        schedule: f.shrunk,
        signature: f.signature,
        out,
        name: `finding-${n}`,
        ...(o.plugin ? { pluginPath: o.plugin } : {}),
        runBundle: async (file, dir) => summaryOf(await pool.run({ type: 'bundle', file, dir })),
      });
      f.yaml = w.yaml;
      f.bundle = w.bundle;
      f.bundleReproduced = w.reproduced;
      const replay = summaryOf(await pool.run({ type: 'explore', file: join(w.bundle, 'scenario.yaml'), seed: f.seed }));
      f.bundleIdentical = replay.eventsHash === w.eventsHash;
      log(`explore: finding ${n}: wrote ${w.yaml} and ${w.bundle}/ (replay ${f.bundleReproduced ? 'reproduces the failure' : 'does NOT reproduce the failure'}, ${f.bundleIdentical ? 'same event log' : 'DIFFERENT event log'} in a fresh worker)`);
    }
    return {
      scenario: o.file,
      seed: o.seed,
      jobs: pool.size,
      runs: done,
      wallMs: performance.now() - wall0,
      runsPerSecond: done / (runWall / 1000),
      baseline: { ok: base.ok, ...(base.failure ? { failure: base.failure } : {}), profile },
      findings,
    };
  } finally {
    await pool.close();
  }
}
