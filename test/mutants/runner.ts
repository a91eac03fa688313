/**
 * The mutant runner: applies each catalogued mutant (test/mutants/catalogue.ts)
 * in its own worker processes of the existing pool (src/harness/explore/pool.ts),
 * runs the scenario library against it and, for a mutant the library does not
 * kill, an explore budget on its most relevant scenario (the explorer's own
 * run plan, src/harness/explore/explore.ts `plannedRun`), and records what killed it.
 *
 * A source mutant's workers start from a one-line module written into a
 * temporary directory that registers test/mutants/hook.mjs with the mutant's
 * patches before tsx: the sources on disk are never changed. A plugin mutant
 * hands its plugin to the pool as `hcs-testbed run --plugin` does.
 *
 * `jobs` mutants run at once (each on one worker: the library stops at a
 * mutant's first failing run, so more workers per mutant would mostly run
 * scenarios whose verdict is not needed). Library scenarios run in file
 * order with the mutant's own scenario first; every run's verdict depends on
 * (mutant, scenario, seed, schedule) alone, so the kills are reproducible.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { plannedRun } from '../../src/harness/explore/explore.js';
import { WorkerPool, type Reply } from '../../src/harness/explore/pool.js';
import type { RunSummary } from '../../src/harness/explore/run-one.js';
import { describeItem } from '../../src/harness/explore/schedule.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { sweepSeeds } from '../../src/harness/scenario/seeds.js';
import type { Kill, Mutant, Row } from './types.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const WORKER_ENTRY = fileURLToPath(new URL('./worker-entry.mjs', import.meta.url));

export interface CatalogueOptions {
  mutants: readonly Mutant[];
  /** Mutants run at once (each on one worker process). */
  jobs: number;
  /** Library scenario files (default: every scenarios/*.yaml); 'own': each mutant's own scenario only; `[]` skips the library stage. */
  library?: string[] | 'own';
  /** Seeds per library scenario: its own, then those `run --seeds N` derives from it (default 1: the library as `npm run scenarios` runs it). */
  seeds?: number;
  /** Explore runs for a library survivor (default 40; 0 skips the explore stage). */
  exploreRuns?: number;
  /** Wall-time cap of one mutant's explore stage (default 300 s). */
  exploreTimeMs?: number;
  /** Exploration seed (default 1): fixes each explore run's seed and schedule. */
  exploreSeed?: number;
  /** Wall-time limit of one run before its worker is killed (default 600 s, the pool's; a hang counts as a kill). */
  runTimeoutMs?: number;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** The library: every scenario file under `dir`, sorted. */
export function libraryFiles(dir = join(ROOT, 'scenarios')): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort().map((f) => join(dir, f));
}

/** Why a mutant cannot be applied (a patch whose text no longer occurs exactly once), or undefined. */
export function patchProblem(m: Mutant): string | undefined {
  if (!m.patches?.length && !m.plugin) return `mutant ${m.id} has neither patches nor a plugin`;
  for (const p of m.patches ?? []) {
    let text: string;
    try {
      text = readFileSync(join(ROOT, p.file), 'utf8');
    } catch {
      return `mutant ${m.id}: ${p.file} does not exist`;
    }
    const n = text.split(p.from).length - 1;
    if (n !== 1) return `mutant ${m.id}: the text to replace occurs ${n} times in ${p.file} (must be once): ${JSON.stringify(p.from.slice(0, 100))}`;
    if (p.from === p.to) return `mutant ${m.id}: a patch of ${p.file} changes nothing`;
  }
  return undefined;
}

/** The worker entry module of a mutant, written into `dir`. */
function entryFor(m: Mutant, dir: string): string {
  const patches = (m.patches ?? []).map((p) => ({ file: join(ROOT, p.file), from: p.from, to: p.to }));
  const file = join(dir, `${m.id.replace(/[^a-z0-9-]+/gi, '_')}.mjs`);
  writeFileSync(file, `import { startWorker } from ${JSON.stringify(pathToFileURL(WORKER_ENTRY).href)};\nawait startWorker(${JSON.stringify(patches)});\n`);
  return file;
}

const RULE_ID = /\b[A-Z]{2,5}-\d+\b/g;

function summaryOf(r: Reply): RunSummary {
  if ('summary' in r) return r.summary;
  const error = 'error' in r ? r.error : 'unexpected answer from the worker';
  return { ok: false, failure: { signature: `worker: ${error.split('\n')[0]!.slice(0, 160)}`, error }, events: 0, eventsHash: '', virtualMs: 0, wallMs: 0 };
}

/**
 * The kill a failed run stands for. Its rules: the violated invariants', else the rule IDs the error names, else
 * the failing step's own `rules:` (the rules the scenario says that step checks).
 */
function killOf(s: RunSummary, base: Omit<Kill, 'rules' | 'error'>, file: string): Kill {
  const f = s.failure!;
  const inv = /^invariant (.+)$/.exec(f.signature)?.[1]?.split(',');
  let rules = inv ?? [...new Set(f.error.match(RULE_ID) ?? [])];
  if (rules.length === 0 && f.step !== undefined) rules = loadScenario(file).steps.find((st) => st.index === f.step)?.rules ?? [];
  return { ...base, ...(f.step !== undefined ? { step: f.step } : {}), ...(f.title ? { title: f.title } : {}), rules, error: f.error };
}

/** The unmutated system as a mutant (no patch, no plugin): the control run. */
export const CONTROL: Mutant = { id: 'control', part: 'provider', bug: 'none: the reference provider, guest and Cluster API model as they are', rules: [], patches: [], scenario: 'scenarios/create-cluster.yaml' };

/** Run one mutant: the library, then (if it survived) explore. */
export async function runMutant(m: Mutant, o: CatalogueOptions, dir: string): Promise<Row> {
  const t0 = performance.now();
  const row: Row = { mutant: m, libraryRuns: 0, exploreRuns: 0, exploreNoise: 0, wallMs: 0 };
  const problem = m === CONTROL ? undefined : patchProblem(m);
  if (problem) return { ...row, broken: problem };
  const pool = new WorkerPool({
    jobs: 1,
    entries: [entryFor(m, dir)],
    ...(m.plugin ? { plugin: resolve(ROOT, m.plugin) } : {}),
    jobTimeoutMs: o.runTimeoutMs ?? 600_000,
  });
  const log = o.log ?? (() => undefined);
  /** The unmutated system, started when an explore run fails (to tell a kill from a schedule that fails anyway). */
  let control: WorkerPool | undefined;
  try {
    const own = resolve(ROOT, m.scenario);
    const files = o.library === 'own' ? [own] : (o.library ?? libraryFiles());
    const ordered = files.includes(own) ? [own, ...files.filter((f) => f !== own)] : files;
    const seeds = Math.max(1, o.seeds ?? 1);
    for (let k = 0; k < seeds && !row.kill; k++) {
      for (const file of ordered) {
        // The seeds of `hcs-testbed run --seeds N` (src/harness/scenario/seeds.ts): its own, then N-1 derived from it.
        const seed = sweepSeeds(loadScenario(file).seed, seeds)[k]!;
        const s = summaryOf(await pool.run({ type: 'explore', file, seed }));
        row.libraryRuns++;
        if (s.failure?.signature.startsWith('worker: worker processes cannot start')) return { ...row, broken: s.failure.error, wallMs: performance.now() - t0 };
        if (!s.ok) {
          row.kill = killOf(s, { stage: 'library', scenario: rel(file), seed }, file);
          break;
        }
      }
    }
    const runs = o.exploreRuns === 0 ? 0 : Math.max(o.exploreRuns ?? 40, m.exploreRuns ?? 0);
    if (!row.kill && runs > 0) {
      const scenario = loadScenario(own);
      const base = summaryOf(await pool.run({ type: 'explore', file: own, seed: scenario.seed, schedule: [], profile: true }));
      if (!base.ok || !base.profile) {
        row.kill = killOf(base.ok ? { ...base, failure: { signature: 'no profile', error: 'the baseline run produced no profile' } } : base, { stage: 'explore', scenario: rel(own), seed: scenario.seed, run: -1, schedule: [] }, own);
      } else {
        const e0 = performance.now();
        for (let i = 0; i < runs && performance.now() - e0 < (o.exploreTimeMs ?? 300_000); i++) {
          const plan = plannedRun(o.exploreSeed ?? 1, i, base.profile);
          const s = summaryOf(await pool.run({ type: 'explore', file: own, ...plan }));
          row.exploreRuns++;
          if (s.ok) continue;
          // A fault schedule can break the scenario's own expectations on the reference too: only a failure the
          // unmutated system does not have is a kill.
          control ??= new WorkerPool({ jobs: 1, entries: [entryFor(CONTROL, dir)], jobTimeoutMs: o.runTimeoutMs ?? 600_000 });
          const c = summaryOf(await control.run({ type: 'explore', file: own, ...plan }));
          if (!c.ok) {
            row.exploreNoise++;
            continue;
          }
          row.kill = killOf(s, { stage: 'explore', scenario: rel(own), seed: plan.seed, run: i, schedule: plan.schedule.map(describeItem) }, own);
          break;
        }
      }
    }
  } finally {
    await Promise.all([pool.close(), control?.close()]);
  }
  row.wallMs = performance.now() - t0;
  log(`mutant ${m.id}: ${row.kill ? `killed by ${row.kill.stage} (${row.kill.scenario}${row.kill.step !== undefined ? ` step ${row.kill.step}` : ''}${row.kill.rules.length ? ` ${row.kill.rules.join(',')}` : ''})` : row.broken ? `BROKEN: ${row.broken}` : 'survived'} after ${row.libraryRuns} library + ${row.exploreRuns} explore runs${row.exploreNoise ? ` (${row.exploreNoise} failing on the unmutated system too)` : ''}, ${(row.wallMs / 1000).toFixed(1)} s`);
  return row;
}

function rel(file: string): string {
  return file.startsWith(ROOT + '/') ? file.slice(ROOT.length + 1) : file;
}

/** Every mutant, `jobs` at a time; rows in catalogue order. */
export async function runCatalogue(o: CatalogueOptions): Promise<{ rows: Row[]; wallMs: number }> {
  const t0 = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'hcs-mutants-'));
  const rows: Row[] = new Array(o.mutants.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < o.mutants.length; i = next++) rows[i] = await runMutant(o.mutants[i]!, o, dir);
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.jobs, o.mutants.length)) }, () => lane()));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { rows, wallMs: performance.now() - t0 };
}
