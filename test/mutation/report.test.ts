/** test/mutation/report.ts and select.ts: scores, survivors, merging shard reports, comparing verdicts, and the mutant selection. */
import { describe, expect, it } from 'vitest';
import mutateJson from './mutate.json' with { type: 'json' };
import { compareVerdicts, countsOf, mergeReports, mutantKey, reportHtml, scoresOf, summaryMarkdown, survivorsOf, testNames, type MutantJson, type ReportJson } from './report.js';
import { changedRanges, globRegExp, selected, splitBalanced } from './select.js';
import { failureOf, fastestFirst } from './scenario-runner.js';

const at = (line: number, column: number, endColumn: number): MutantJson['location'] => ({ start: { line, column }, end: { line, column: endColumn } });
const mutant = (id: string, status: MutantJson['status'], line = 1, extra: Partial<MutantJson> = {}): MutantJson => ({ id, mutatorName: 'ConditionalExpression', replacement: 'true', location: at(line, 5, 9), status, ...extra });

function report(files: Record<string, MutantJson[]>, tests: string[] = ['scenarios/a.yaml', 'scenarios/b.yaml']): ReportJson {
  return {
    schemaVersion: '2',
    thresholds: { high: 80, low: 60 },
    files: Object.fromEntries(Object.entries(files).map(([f, ms]) => [f, { language: 'typescript', source: 'if (a && b) x();\nreturn y;\n', mutants: ms }])),
    testFiles: { '': { tests: tests.map((t, i) => ({ id: String(i), name: t })) } },
  };
}

describe('scores', () => {
  it('counts statuses; the score is (killed + timeout) / (killed + timeout + survived + no coverage), as Stryker prints it', { timeout: 5_000 }, () => {
    const c = countsOf([mutant('1', 'Killed'), mutant('2', 'Killed'), mutant('3', 'Timeout'), mutant('4', 'Survived'), mutant('5', 'NoCoverage'), mutant('6', 'CompileError'), mutant('7', 'Ignored')]);
    expect(c).toMatchObject({ mutants: 7, killed: 2, timeout: 1, survived: 1, noCoverage: 1, errors: 1, ignored: 1 });
    expect(c.score).toBe(60); // 3 of 5
    expect(c.coveredScore).toBe(75); // 3 of 4
    expect(countsOf([]).score).toBe(0);
  });

  it('groups by folder and by file', { timeout: 5_000 }, () => {
    const s = scoresOf(report({ 'src/p/a.ts': [mutant('1', 'Killed')], 'src/p/b.ts': [mutant('2', 'Survived')], 'src/q/c.ts': [mutant('3', 'Killed')] }));
    expect(s.folders.map(([d, c]) => [d, c.mutants, c.score])).toEqual([
      ['src/p', 2, 50],
      ['src/q', 1, 100],
    ]);
    expect(s.files.map(([f]) => f)).toEqual(['src/p/a.ts', 'src/p/b.ts', 'src/q/c.ts']);
    expect(s.total.score).toBeCloseTo(66.67, 1);
  });

  it('lists every survivor with file:line:column, mutator, the original text and the scenarios that ran it', { timeout: 5_000 }, () => {
    const r = report({ 'src/p/a.ts': [mutant('1', 'Survived', 1, { coveredBy: ['0', '1'] }), mutant('2', 'Killed', 2)] });
    const s = survivorsOf(r, testNames(r));
    expect(s).toEqual([{ file: 'src/p/a.ts', line: 1, column: 5, mutator: 'ConditionalExpression', original: 'a &&', replacement: 'true', coveredBy: ['scenarios/a.yaml', 'scenarios/b.yaml'], static: false }]);
    const md = summaryMarkdown(r, 'T');
    expect(md).toContain('| src/p/a.ts:1:5 | ConditionalExpression | `a &&` | `true` | a.yaml, b.yaml |');
    expect(md).toContain('| src/p | 2 | 1 | 0 | 1 | 0 | 0 | 50.0 % | 50.0 % |');
  });
});

describe('shards', () => {
  it('merges disjoint shard reports into one with the same verdicts, test ids renamed to scenario names', { timeout: 5_000 }, () => {
    const a = report({ 'src/p/a.ts': [mutant('0', 'Killed', 1, { killedBy: ['1'], coveredBy: ['0', '1'] })] });
    const b = report({ 'src/q/b.ts': [mutant('0', 'Survived', 2, { coveredBy: ['0'] })] });
    const m = mergeReports([a, b]);
    expect(Object.keys(m.files)).toEqual(['src/p/a.ts', 'src/q/b.ts']);
    expect(m.files['src/p/a.ts']!.mutants[0]!.killedBy).toEqual(['scenarios/b.yaml']);
    expect(new Set(Object.values(m.files).flatMap((f) => f.mutants.map((x) => x.id))).size).toBe(2);
    expect(m.testFiles!['']!.tests.map((t) => t.id)).toEqual(['scenarios/a.yaml', 'scenarios/b.yaml']);
    const whole = report({ 'src/p/a.ts': a.files['src/p/a.ts']!.mutants, 'src/q/b.ts': b.files['src/q/b.ts']!.mutants });
    expect(compareVerdicts(m, whole)).toEqual({ same: 2, differ: [], onlyA: [], onlyB: [] });
    expect(reportHtml(m)).toContain('<mutation-test-report-app');
  });

  it('refuses a file in two shards', { timeout: 5_000 }, () => {
    const a = report({ 'src/p/a.ts': [mutant('0', 'Killed')] });
    expect(() => mergeReports([a, a])).toThrow(/src\/p\/a.ts is in two shard reports/);
  });

  it('compares verdicts by file, span, mutator and replacement', { timeout: 5_000 }, () => {
    const a = report({ 'src/p/a.ts': [mutant('0', 'Killed'), mutant('1', 'Survived', 2)] });
    const b = report({ 'src/p/a.ts': [mutant('7', 'Killed'), mutant('8', 'Killed', 2), mutant('9', 'Killed', 2, { replacement: 'false' })] });
    const d = compareVerdicts(a, b);
    expect(d.same).toBe(1);
    expect(d.differ).toEqual([[mutantKey('src/p/a.ts', mutant('1', 'Survived', 2)), 'Survived', 'Killed']]);
    expect(d.onlyB).toHaveLength(1);
  });

  it('splits weighted files into balanced slices, the same split every time', { timeout: 5_000 }, () => {
    const w = new Map([
      ['a', 10],
      ['b', 7],
      ['c', 5],
      ['d', 4],
      ['e', 1],
    ]);
    const s = splitBalanced(w, 2);
    expect(s).toEqual([
      ['a', 'd'],
      ['b', 'c', 'e'],
    ]);
    expect(splitBalanced(w, 2)).toEqual(s);
    expect(splitBalanced(w, 7).filter((x) => x.length).length).toBe(5);
    expect(() => splitBalanced(w, 0)).toThrow(/positive integer/);
  });
});

describe('mutant selection', () => {
  it('reads the MUTATE globs like Stryker (** any folders, ! excludes)', { timeout: 5_000 }, () => {
    expect(globRegExp('src/product/provider/**/*.ts').test('src/product/provider/pool.ts')).toBe(true);
    expect(globRegExp('src/product/provider/**/*.ts').test('src/product/provider/x/y.ts')).toBe(true);
    expect(globRegExp('src/world/admission.ts').test('src/world/admissionXts')).toBe(false);
    const globs = mutateJson.mutate;
    expect(selected('src/product/provider/pool.ts', globs)).toBe(true);
    expect(selected('src/product/provider/process.ts', globs)).toBe(false);
    expect(selected('src/world/capi/kcp.ts', globs)).toBe(true);
    expect(selected('src/harness/scenario/runner.ts', globs)).toBe(false);
    expect(selected('mock-hcs/src/services/evs.ts', globs)).toBe(true);
  });

  it("takes a diff's changed line ranges per file (a pure deletion stands as the lines around it)", { timeout: 5_000 }, () => {
    const diff = [
      'diff --git a/src/p/a.ts b/src/p/a.ts',
      '--- a/src/p/a.ts',
      '+++ b/src/p/a.ts',
      '@@ -10,2 +10,3 @@ x',
      '@@ -40 +41 @@ y',
      '@@ -50,2 +50,0 @@ z',
      'diff --git a/src/p/gone.ts b/src/p/gone.ts',
      '--- a/src/p/gone.ts',
      '+++ /dev/null',
      '@@ -1,3 +0,0 @@',
    ].join('\n');
    expect([...changedRanges(diff)]).toEqual([
      [
        'src/p/a.ts',
        [
          [10, 12],
          [41, 41],
          [50, 51],
        ],
      ],
    ]);
  });
});

describe('the scenario test runner', () => {
  it('runs a mutant’s scenarios fastest first (unknown ones last, in their order)', { timeout: 5_000 }, () => {
    expect(fastestFirst(['s/c', 's/a', 's/x', 's/b'], { 's/a': 300, 's/b': 100, 's/c': 200 })).toEqual(['s/b', 's/c', 's/a', 's/x']);
  });

  it("reports a failed scenario's first failing step", { timeout: 5_000 }, () => {
    const r = {
      ok: false,
      scenario: { name: 'x' },
      steps: [
        { index: 1, ok: true, title: 'a', detail: [] },
        { index: 2, ok: false, title: 'wait for the pool', error: 'timed out: POOL-1', detail: ['entry w-0 missing'] },
      ],
    } as unknown as Parameters<typeof failureOf>[0];
    expect(failureOf(r)).toBe('step 2: wait for the pool\ntimed out: POOL-1\nentry w-0 missing');
    expect(failureOf({ ...r, ok: true })).toBeUndefined();
  });
});
