/**
 * Stryker's JSON report (the mutation-testing-report-schema, https://github.com/stryker-mutator/mutation-testing-elements)
 * read into what issue 37 asks for: counts and the score per folder, per file and in total, and every survivor with
 * file:line and mutator; shard reports merged into one; two reports' verdicts compared; the HTML report
 * (mutation-testing-elements, as Stryker's html reporter writes it) for a merged report.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { dirname, posix } from 'node:path';

/** The mutant statuses of the schema. */
export type Status = 'Killed' | 'Survived' | 'NoCoverage' | 'Timeout' | 'CompileError' | 'RuntimeError' | 'Ignored' | 'Pending';

interface Position {
  line: number;
  column: number;
}

export interface MutantJson {
  id: string;
  mutatorName: string;
  replacement?: string;
  location: { start: Position; end: Position };
  status: Status;
  statusReason?: string;
  coveredBy?: string[];
  killedBy?: string[];
  testsCompleted?: number;
  static?: boolean;
}

export interface FileJson {
  language: string;
  source: string;
  mutants: MutantJson[];
}

export interface ReportJson {
  schemaVersion: string;
  thresholds: { high: number; low: number; break?: number | null };
  projectRoot?: string;
  files: Record<string, FileJson>;
  testFiles?: Record<string, { source?: string; tests: { id: string; name: string; location?: { start: Position } }[] }>;
  performance?: { setup: number; initialRun: number; mutation: number };
  framework?: unknown;
  system?: unknown;
  config?: unknown;
}

export interface Counts {
  mutants: number;
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  /** CompileError + RuntimeError. */
  errors: number;
  ignored: number;
  /** Stryker's mutation score: (killed + timeout) / (killed + timeout + survived + no coverage), in percent. */
  score: number;
  /** The score of the covered mutants alone: (killed + timeout) / (killed + timeout + survived). */
  coveredScore: number;
}

export function readReport(file: string): ReportJson {
  return JSON.parse(readFileSync(file, 'utf8')) as ReportJson;
}

/** A report's file names relative to the project root (Stryker writes them so; shard reports too). */
export function countsOf(mutants: readonly MutantJson[]): Counts {
  const n = (s: Status): number => mutants.filter((m) => m.status === s).length;
  const killed = n('Killed');
  const timeout = n('Timeout');
  const survived = n('Survived');
  const noCoverage = n('NoCoverage');
  const detected = killed + timeout;
  const valid = detected + survived + noCoverage;
  const covered = detected + survived;
  return {
    mutants: mutants.length,
    killed,
    timeout,
    survived,
    noCoverage,
    errors: n('CompileError') + n('RuntimeError'),
    ignored: n('Ignored'),
    score: valid ? (100 * detected) / valid : 0,
    coveredScore: covered ? (100 * detected) / covered : 0,
  };
}

export interface Scores {
  total: Counts;
  /** Keyed by folder (the file's directory), sorted. */
  folders: [string, Counts][];
  /** Keyed by file, sorted. */
  files: [string, Counts][];
}

export function scoresOf(report: ReportJson): Scores {
  const files = Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b));
  const byFolder = new Map<string, MutantJson[]>();
  for (const [name, f] of files) {
    const d = posix.dirname(name);
    byFolder.set(d, [...(byFolder.get(d) ?? []), ...f.mutants]);
  }
  return {
    total: countsOf(files.flatMap(([, f]) => f.mutants)),
    folders: [...byFolder].sort(([a], [b]) => a.localeCompare(b)).map(([d, ms]) => [d, countsOf(ms)]),
    files: files.map(([name, f]) => [name, countsOf(f.mutants)]),
  };
}

export interface Survivor {
  file: string;
  line: number;
  column: number;
  mutator: string;
  /** The original text of the mutated span (first line, trimmed). */
  original: string;
  replacement: string;
  /** The scenarios that ran it (all of which passed). */
  coveredBy: string[];
  static: boolean;
}

/** Every survivor, by file then position. */
export function survivorsOf(report: ReportJson, testName: (id: string) => string = (id) => id): Survivor[] {
  const out: Survivor[] = [];
  for (const [file, f] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
    const lines = f.source.split('\n');
    for (const m of f.mutants) {
      if (m.status !== 'Survived') continue;
      const { start, end } = m.location;
      const text = start.line === end.line ? lines[start.line - 1]!.slice(start.column - 1, end.column - 1) : lines[start.line - 1]!.slice(start.column - 1);
      out.push({
        file,
        line: start.line,
        column: start.column,
        mutator: m.mutatorName,
        original: oneLine(text),
        replacement: oneLine(m.replacement ?? ''),
        coveredBy: (m.coveredBy ?? []).map(testName),
        static: m.static === true,
      });
    }
  }
  return out.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
}

function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > 100 ? `${t.slice(0, 97)}...` : t;
}

/** Test id -> name from the report's testFiles (the scenario file for this project's runner). */
export function testNames(report: ReportJson): (id: string) => string {
  const names = new Map<string, string>();
  for (const tf of Object.values(report.testFiles ?? {})) for (const t of tf.tests) names.set(t.id, t.name);
  return (id) => names.get(id) ?? id;
}

/** A mutant's identity across runs: file, span, mutator and replacement (Stryker's ids are per run). */
export function mutantKey(file: string, m: MutantJson): string {
  const { start, end } = m.location;
  return `${file}:${start.line}:${start.column}-${end.line}:${end.column} ${m.mutatorName} ${JSON.stringify(m.replacement ?? '')}`;
}

/**
 * Shard reports merged into one: each shard mutated its own files, so the files are disjoint (a file in two shards
 * is an error). Test ids are renamed to their names (scenario files), which are the same in every shard.
 */
export function mergeReports(reports: readonly ReportJson[]): ReportJson {
  if (reports.length === 0) throw new Error('merge: no shard reports');
  const files: Record<string, FileJson> = {};
  const testFiles: NonNullable<ReportJson['testFiles']> = {};
  let mutantId = 0;
  for (const r of reports) {
    const name = testNames(r);
    for (const [file, f] of Object.entries(r.files)) {
      if (files[file]) throw new Error(`merge: ${file} is in two shard reports (each file must belong to one shard)`);
      files[file] = {
        ...f,
        mutants: f.mutants.map((m) => ({
          ...m,
          id: String(mutantId++),
          ...(m.coveredBy ? { coveredBy: m.coveredBy.map(name) } : {}),
          ...(m.killedBy ? { killedBy: m.killedBy.map(name) } : {}),
        })),
      };
    }
    for (const [tfName, tf] of Object.entries(r.testFiles ?? {})) {
      const have = new Set((testFiles[tfName]?.tests ?? []).map((t) => t.id));
      testFiles[tfName] = { ...tf, tests: [...(testFiles[tfName]?.tests ?? []), ...tf.tests.map((t) => ({ ...t, id: t.name })).filter((t) => !have.has(t.id))] };
    }
  }
  const first = reports[0]!;
  return { schemaVersion: first.schemaVersion, thresholds: first.thresholds, ...(first.projectRoot ? { projectRoot: first.projectRoot } : {}), files, testFiles };
}

export interface VerdictDiff {
  /** Mutants in both with the same status. */
  same: number;
  /** Mutants whose status differs: key, status in a, status in b. */
  differ: [string, Status, Status][];
  onlyA: string[];
  onlyB: string[];
}

/** Two reports' verdicts, mutant by mutant (by mutantKey). */
export function compareVerdicts(a: ReportJson, b: ReportJson): VerdictDiff {
  const index = (r: ReportJson): Map<string, Status> => new Map(Object.entries(r.files).flatMap(([file, f]) => f.mutants.map((m) => [mutantKey(file, m), m.status] as const)));
  const ia = index(a);
  const ib = index(b);
  const diff: VerdictDiff = { same: 0, differ: [], onlyA: [], onlyB: [] };
  for (const [k, s] of ia) {
    const t = ib.get(k);
    if (t === undefined) diff.onlyA.push(k);
    else if (t === s) diff.same++;
    else diff.differ.push([k, s, t]);
  }
  for (const k of ib.keys()) if (!ia.has(k)) diff.onlyB.push(k);
  return diff;
}

/** The HTML report of a (merged) JSON report: the mutation-testing-elements app with the report inlined, as Stryker's html reporter writes it. */
export function reportHtml(report: ReportJson): string {
  // mutation-testing-elements comes with @stryker-mutator/core (its html reporter uses it).
  const req = createRequire(createRequire(import.meta.url).resolve('@stryker-mutator/core/package.json'));
  const script = readFileSync(req.resolve('mutation-testing-elements/dist/mutation-test-elements.js'), 'utf8');
  // A "</script>" inside the report must not end the script element.
  const json = JSON.stringify(report).replace(/</g, '\\u003c');
  return [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8"><title>hcs-testbed mutation report</title>',
    `<script>${script}</script>`,
    '</head><body>',
    '<mutation-test-report-app titlePostfix="hcs-testbed"></mutation-test-report-app>',
    `<script>document.querySelector('mutation-test-report-app').report = ${json};</script>`,
    '</body></html>',
    '',
  ].join('\n');
}

const pct = (x: number): string => `${x.toFixed(1)} %`;

/** The scores as a Markdown table (one row per key). */
export function scoreTable(rows: readonly [string, Counts][], first = 'folder'): string {
  const head = `| ${first} | mutants | killed | timeout | survived | no coverage | errors | score | covered score |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|`;
  return [head, ...rows.map(([k, c]) => `| ${k} | ${c.mutants} | ${c.killed} | ${c.timeout} | ${c.survived} | ${c.noCoverage} | ${c.errors} | ${pct(c.score)} | ${pct(c.coveredScore)} |`)].join('\n');
}

/** The summary Markdown: totals, per folder, per file, and every survivor (file:line:col, mutator, original -> replacement, scenarios). */
export function summaryMarkdown(report: ReportJson, title: string): string {
  const s = scoresOf(report);
  const surv = survivorsOf(report, testNames(report));
  const lines = [
    `# ${title}`,
    '',
    `Total: ${s.total.mutants} mutants, ${s.total.killed} killed, ${s.total.timeout} timeout, ${s.total.survived} survived, ${s.total.noCoverage} no coverage, ${s.total.errors} errors; mutation score ${pct(s.total.score)} (covered ${pct(s.total.coveredScore)}).`,
    '',
    '## Per folder',
    '',
    scoreTable([...s.folders, ['total', s.total]]),
    '',
    '## Per file',
    '',
    scoreTable(s.files, 'file'),
    '',
    `## Survivors (${surv.length})`,
    '',
    '| where | mutator | original | replacement | scenarios that ran it |',
    '|---|---|---|---|---|',
    ...surv.map((v) => `| ${v.file}:${v.line}:${v.column} | ${v.mutator}${v.static ? ' (static)' : ''} | \`${md(v.original)}\` | \`${md(v.replacement)}\` | ${v.coveredBy.length > 3 ? `${v.coveredBy.length} scenarios` : v.coveredBy.map((t) => t.replace(/^scenarios\//, '')).join(', ')} |`),
    '',
  ];
  return lines.join('\n');
}

function md(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/`/g, "'");
}

/** The directory a report's file name is in (for callers that group by something other than the folder). */
export function folderOf(file: string): string {
  return dirname(file);
}

/** A report of the mutants a stopped run had tested: its mutants.jsonl (test/mutation/progress-reporter.ts) and the sources under `root`. */
export function partialReport(root: string, jsonl: string): ReportJson {
  const files: Record<string, FileJson> = {};
  for (const line of jsonl.split('\n')) {
    if (!line.trim()) continue;
    const { file, ...m } = JSON.parse(line) as MutantJson & { file: string };
    files[file] ??= { language: 'typescript', source: readFileSync(join(root, file), 'utf8'), mutants: [] };
    files[file].mutants.push(m);
  }
  return { schemaVersion: '1.0', thresholds: { high: 80, low: 60 }, files };
}
