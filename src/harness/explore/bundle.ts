/**
 * What explore writes for a finding:
 *
 * - `finding-N.yaml`: the scenario with the finding's seed and shrunk
 *   `schedule:`, its manifest paths pointing at the original files (relative
 *   to where it is written) — replays the failure with `hcs-testbed run`.
 * - `finding-N/`: a self-contained bundle: `scenario.yaml` (same, with the
 *   manifests it needs copied beside it), `events.jsonl` (the event log of
 *   that very file's run), `snapshot.json` (servers, volumes, attachments,
 *   pool entries when the run ended), `finding.json` (signature, error,
 *   seed, schedule). `hcs-testbed run finding-N` replays it byte for byte.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { loadScenario } from '../scenario/parse.js';
import type { Testbed } from '../testbed/testbed.js';
import type { TestbedPlugin } from './plugin.js';
import { eventsText, runOne, snapshotOf, type Failure, type RunSummary } from './run-one.js';
import { describeItem, scheduleToPlain, type ScheduleItem } from './schedule.js';

/** `-f path` / `--filename=path` in a kubectl command. */
const KUBECTL_FILE = /(\s(?:-f|--filename)(?:\s+|=))([^\s'"]+)/g;

/** Rewrite every manifest path of the scenario document (apply values, kubectl -f) and its `from:` bundle with `map`. */
function rewritePaths(doc: Document, map: (written: string) => string): void {
  const from = doc.get('from', true);
  if (isScalar(from) && typeof from.value === 'string') from.value = map(from.value);
  const steps = doc.get('steps');
  if (!isSeq(steps)) return;
  for (const step of steps.items) {
    if (!isMap(step)) continue;
    const apply = step.get('apply', true);
    if (isScalar(apply) && typeof apply.value === 'string') apply.value = map(apply.value);
    else if (isSeq(apply)) for (const it of apply.items) if (isScalar(it) && typeof it.value === 'string') it.value = map(it.value);
    const k = step.get('kubectl', true);
    if (isScalar(k) && typeof k.value === 'string') k.value = k.value.replace(KUBECTL_FILE, (_m, pre: string, p: string) => pre + map(p));
  }
}

function withSchedule(text: string, file: string, seed: number, schedule: readonly ScheduleItem[], note: string): Document {
  const doc = parseDocument(text, { keepSourceTokens: false });
  if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]!.message}`);
  doc.set('seed', seed);
  doc.set('schedule', scheduleToPlain(schedule));
  const d = doc.get('description');
  doc.set('description', `${typeof d === 'string' ? `${d.trim()} ` : ''}[${note}]`);
  return doc;
}

/**
 * `explore SCENARIO --from BUNDLE` (issue 35): the scenario as it is, starting from the bundle — written to `dest`
 * with every path (manifests, the bundle) absolute, so it runs from there.
 */
export function writeScenarioFrom(file: string, bundle: string, dest: string): void {
  const doc = parseDocument(readFileSync(file, 'utf8'), { keepSourceTokens: false });
  if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]!.message}`);
  const base = dirname(resolve(file));
  rewritePaths(doc, (p) => (isAbsolute(p) || p.startsWith('library:') ? p : resolve(base, p)));
  doc.set('from', resolve(bundle));
  mkdirSync(dirname(dest), { recursive: true });
  writeFileSync(dest, doc.toString({ lineWidth: 0 }));
}

export interface WrittenFinding {
  yaml: string;
  bundle: string;
  /** The bundle's own run reproduced the finding's signature. */
  reproduced: boolean;
  failure?: Failure;
  eventsHash: string;
}

export interface WriteOptions {
  /** The original scenario file. */
  file: string;
  seed: number;
  schedule: readonly ScheduleItem[];
  signature: string;
  out: string;
  name: string;
  pluginPath?: string;
  /** Run the bundle's scenario.yaml once, writing events.jsonl and snapshot.json into the bundle (recordBundleRun). */
  runBundle: (scenarioFile: string, dir: string) => Promise<RunSummary>;
}

/** The bundle run (on a worker): the scenario file as it is, its event log and the cloud at the end written into `dir`. */
export async function recordBundleRun(scenarioFile: string, dir: string, plugin?: TestbedPlugin, onTestbed?: (tb: Testbed) => void): Promise<RunSummary> {
  const scenario = loadScenario(scenarioFile);
  writeFileSync(join(dir, 'events.jsonl'), '');
  return runOne(scenario, scenario.seed, scenario.schedule ?? [], {
    ...(plugin ? { plugin } : {}),
    ...(onTestbed ? { onTestbed } : {}),
    keep: async (r, tb) => {
      writeFileSync(join(dir, 'events.jsonl'), eventsText(r.events));
      writeFileSync(join(dir, 'snapshot.json'), JSON.stringify(await snapshotOf(tb), null, 2) + '\n');
    },
  });
}

/** Write finding-N.yaml and the bundle finding-N/ under `out`; run the bundle once to record its event log and snapshot. */
export async function writeFinding(o: WriteOptions): Promise<WrittenFinding> {
  const text = readFileSync(o.file, 'utf8');
  const base = dirname(resolve(o.file));
  const note = `explore finding: ${o.signature}; seed ${o.seed}; ${o.schedule.length ? o.schedule.map(describeItem).join('; ') : 'no faults or crashes'}`;
  mkdirSync(o.out, { recursive: true });

  // 1. The standalone scenario, next to the bundle: paths to the original manifests.
  const yamlPath = join(o.out, `${o.name}.yaml`);
  const standalone = withSchedule(text, o.file, o.seed, o.schedule, note);
  rewritePaths(standalone, (p) => {
    const abs = isAbsolute(p) ? p : resolve(base, p);
    const rel = relative(resolve(o.out), abs);
    return rel.startsWith('.') ? rel : `./${rel}`;
  });
  writeFileSync(yamlPath, standalone.toString({ lineWidth: 0 }));

  // 2. The bundle: the manifests copied in (same relative paths where they were inside the scenario's folder).
  const dir = join(o.out, o.name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const taken = new Map<string, string>();
  const bundled = withSchedule(text, o.file, o.seed, o.schedule, note);
  rewritePaths(bundled, (p) => {
    const abs = isAbsolute(p) ? p : resolve(base, p);
    if (!existsSync(abs)) return p;
    let rel = normalize(relative(base, abs));
    if (rel.startsWith('..') || isAbsolute(rel)) rel = join('manifests', ...abs.split(sep).slice(-2));
    while (taken.has(rel) && taken.get(rel) !== abs) rel = join(dirname(rel), `x-${rel.split(sep).pop()!}`);
    taken.set(rel, abs);
    const dest = join(dir, rel);
    mkdirSync(dirname(dest), { recursive: true });
    cpSync(abs, dest, { recursive: statSync(abs).isDirectory() });
    return rel.split(sep).join('/');
  });
  const scenarioPath = join(dir, 'scenario.yaml');
  writeFileSync(scenarioPath, bundled.toString({ lineWidth: 0 }));

  // 3. Run the bundle as `hcs-testbed run` will (on a worker: a run that stalls cannot hang the explorer): record its log and the cloud at the end.
  const summary = await o.runBundle(scenarioPath, dir);
  const failure = summary.failure;
  const reproduced = failure?.signature === o.signature;
  const replay = `hcs-testbed run ${dir}${o.pluginPath ? ` --plugin ${o.pluginPath}` : ''} --report console,json`;
  writeFileSync(
    join(dir, 'finding.json'),
    JSON.stringify(
      {
        signature: o.signature,
        reproduced,
        failure: failure ?? null,
        scenario: o.file,
        seed: o.seed,
        schedule: o.schedule.map(describeItem),
        ...(o.pluginPath ? { plugin: o.pluginPath } : {}),
        eventsSha256: summary.eventsHash,
        replay,
      },
      null,
      2,
    ) + '\n',
  );
  return { yaml: yamlPath, bundle: dir, reproduced, ...(failure ? { failure } : {}), eventsHash: summary.eventsHash };
}
