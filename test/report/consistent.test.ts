/**
 * Consistent reports (issue 14): one step count in console, JSON, JUnit and
 * HTML (src/harness/report/model.ts), JUnit times in wall seconds with the virtual
 * ones as a property, file and line per testcase, full names for steps not
 * reached, and the SPEC coverage line only for a run of the whole library.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isWholeLibrary, main } from '../../src/harness/cli/main.js';
import { scenarioReport } from '../../src/harness/report/model.js';
import { renderJunit } from '../../src/harness/report/junit.js';
import { AT_REST_TITLE, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';

const FIXTURE = 'test/report/fixtures/failing-rollout.yaml';
/** The fixture's steps as written: 3 pass, the 4th times out after 30 min of virtual time, 2 more and the invariants at rest are never reached. */
const EXPECTED = { total: 7, passed: 3, failed: 1, skipped: 3 };

/** 1-based line of each step item ("  - ") in the fixture file. */
function stepLines(): number[] {
  return readFileSync(FIXTURE, 'utf8').split('\n').flatMap((l, i) => (l.startsWith('  - ') ? [i + 1] : []));
}

let out: string;
let consoleText = '';
let code: number;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'hcs-report-'));
  code = await main(['run', FIXTURE, '--jobs', '1', '--no-color', '--report', 'console,json,junit,html', '--out', out], (t) => (consoleText += t));
}, 120_000);

describe('one step count everywhere (shared report model)', () => {
  it('console, JSON, JUnit and HTML all count 7 steps: 3 passed, 1 failed, 3 not reached', () => {
    expect(code).toBe(1);
    // console: the start line and the verdict
    expect(consoleText).toContain('seed 5 · 7 steps (incl. invariants at rest)');
    expect(consoleText).toContain('FAIL report-fixture-failing-rollout: 3/7 steps passed, 1 failed, 3 not reached (incl. invariants at rest)');
    // JSON
    const json = JSON.parse(readFileSync(join(out, 'report-fixture-failing-rollout.result.json'), 'utf8')) as { counts: typeof EXPECTED; steps: { status: string; title: string }[] };
    expect(json.counts).toEqual(EXPECTED);
    expect(json.steps.map((s) => s.status)).toEqual(['passed', 'passed', 'passed', 'failed', 'skipped', 'skipped', 'skipped']);
    // JUnit: suite attributes and the testcases themselves
    const xml = readFileSync(join(out, 'junit.xml'), 'utf8');
    const suite = /<testsuite name="report-fixture-failing-rollout" tests="(\d+)" failures="(\d+)" errors="0" skipped="(\d+)"/.exec(xml)!;
    expect(suite.slice(1).map(Number)).toEqual([EXPECTED.total, EXPECTED.failed, EXPECTED.skipped]);
    expect(xml.match(/<testcase /g)).toHaveLength(EXPECTED.total);
    expect(xml.match(/<failure /g)).toHaveLength(EXPECTED.failed);
    expect(xml.match(/<skipped /g)).toHaveLength(EXPECTED.skipped);
    // HTML: the summary row (passed/total, failed, not reached) and one table row per step
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('<td>FAIL</td><td>3/7</td><td>1</td><td>3</td>');
    expect(html).toContain('3/7 steps passed, 1 failed, 3 not reached');
    // The totals line over all scenarios (one here) in the console summary and the HTML header.
    expect(consoleText).toContain('0 passed, 1 failed · 3/7 steps passed, 1 failed, 3 not reached\n');
    // ...followed by the failure again, one line, so that the tail of a long log (CI's) names it and why.
    const tail = consoleText.slice(consoleText.lastIndexOf('0 passed, 1 failed · '));
    expect(tail).toMatch(/\nFAIL report-fixture-failing-rollout @ seed 5: step 4 \(.+\): .*timed out/);
    expect(html).toContain('<p class="meta" id="totals">0 passed, 1 failed · 3/7 steps passed, 1 failed, 3 not reached</p>');
    const rows = html.match(/<tr class="(passed|failed|skipped)"><td>\d+<\/td>/g)!;
    expect(rows.map((r) => /class="(\w+)"/.exec(r)![1])).toEqual(['passed', 'passed', 'passed', 'failed', 'skipped', 'skipped', 'skipped']);
  });

  it('steps not reached keep their full titles in every report (console, JSON, JUnit, HTML)', () => {
    const full = [
      'kubectl scale machinedeployment demo-md-0 -n cpaas-system --replicas=2',
      "the cluster scales in to two workers and the third worker's persistent disk stays available for its hostname",
      AT_REST_TITLE,
    ];
    const json = JSON.parse(readFileSync(join(out, 'report-fixture-failing-rollout.result.json'), 'utf8')) as { steps: { status: string; title: string }[] };
    expect(json.steps.filter((s) => s.status === 'skipped').map((s) => s.title)).toEqual(full);
    const xml = readFileSync(join(out, 'junit.xml'), 'utf8');
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    full.forEach((t, i) => {
      expect(consoleText).toContain(`– ${String(i + 5).padStart(2)} ${t} (not reached)`);
      expect(xml).toContain(`name="0${i + 5} ${t}"`);
      expect(html).toContain(t);
    });
  });
});

describe('JUnit', () => {
  it('testcase time is wall seconds, the virtual seconds are a property; the suite time is wall too', () => {
    const xml = readFileSync(join(out, 'junit.xml'), 'utf8');
    const wait = /<testcase [^>]*name="04 a fourth worker[^"]*" time="([\d.]+)"[^>]*><properties><property name="virtualSeconds" value="([\d.]+)"\/>/.exec(xml)!;
    expect(wait).not.toBeNull();
    // The wait timed out after 30 min of virtual time; the wall time is a fraction of a second to a few seconds.
    expect(Number(wait[2])).toBe(1800);
    expect(Number(wait[1])).toBeLessThan(60);
    const json = JSON.parse(readFileSync(join(out, 'report-fixture-failing-rollout.result.json'), 'utf8')) as { wallMs: number; virtualMs: number };
    const suiteTime = Number(/<testsuite name="report-fixture-failing-rollout"[^>]* time="([\d.]+)"/.exec(xml)![1]);
    expect(Math.abs(suiteTime * 1000 - json.wallMs)).toBeLessThan(1);
    expect(suiteTime).toBeLessThan(json.virtualMs / 1000);
    // The testcases' wall times add up to at most the suite's (which also holds the testbed's start).
    const caseTimes = [...xml.matchAll(/<testcase [^>]* time="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(caseTimes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(suiteTime + 0.01);
  });

  it('every testcase carries the scenario file and the line its step is written on (at rest: line 1)', () => {
    const xml = readFileSync(join(out, 'junit.xml'), 'utf8');
    const cases = [...xml.matchAll(/<testcase [^>]*file="([^"]+)" line="(\d+)"/g)].map((m) => [m[1], Number(m[2])]);
    expect(cases).toEqual([...stepLines().map((l) => [FIXTURE, l]), [FIXTURE, 1]]);
  });

  it('follows the common JUnit XML format (Testmo): properties first in a testcase, then failure/skipped; root totals', () => {
    const xml = readFileSync(join(out, 'junit.xml'), 'utf8');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="hcs-testbed" tests="7" failures="1" errors="0" skipped="3" time="[\d.]+">/);
    for (const c of xml.match(/<testcase [\s\S]*?<\/testcase>/g)!) expect(c).toMatch(/^<testcase [^>]*><properties>.*?<\/properties>(<failure [\s\S]*<\/failure>|<skipped [^>]*\/>)?<\/testcase>$/s);
  });
});

describe('the report model', () => {
  const s = loadScenario(FIXTURE);
  const base = { scenario: s, seed: 5, events: [], virtualMs: 0, wallMs: 1, rulesExercised: [], violations: [] };

  it('a testbed that never started: its failure is a step of its own, every written step and the invariants at rest not reached', () => {
    const r: ScenarioResult = { ...base, ok: false, steps: [{ index: 0, kind: 'expect', title: 'start the testbed', line: 0, ok: false, startMs: 0, endMs: 0, detail: [], error: 'the testbed did not start: x', rules: [] }] };
    const m = scenarioReport(r);
    expect(m.counts).toEqual({ total: 8, passed: 0, failed: 1, skipped: 7 });
    expect(m.steps[0]).toMatchObject({ index: 0, title: 'start the testbed', status: 'failed', line: stepLines()[0] });
    const xml = renderJunit([r]);
    expect(xml).toContain('tests="8" failures="1" errors="0" skipped="7"');
  });

  it('a passing run: every written step and the invariants at rest passed', () => {
    const steps = s.steps.map((st) => ({ index: st.index, kind: st.kind, title: 't', line: st.line, ok: true, startMs: 0, endMs: 1000, wallMs: 3, detail: [], rules: [] }));
    const r: ScenarioResult = { ...base, ok: true, steps: [...steps, { index: 7, kind: 'expect', title: AT_REST_TITLE, line: 0, ok: true, startMs: 1000, endMs: 1000, detail: [], rules: [] }] };
    expect(scenarioReport(r).counts).toEqual({ total: 7, passed: 7, failed: 0, skipped: 0 });
  });
});

describe('the SPEC coverage line', () => {
  it('is not printed for a single-file run (nor is the "not exercised" list)', () => {
    expect(consoleText).not.toContain('SPEC coverage');
    expect(consoleText).not.toContain('not exercised');
    expect(readFileSync(join(out, 'report.html'), 'utf8')).not.toContain('SPEC coverage');
  });

  it('is printed only when the run holds every library file (the default path, or scenarios/ named explicitly)', () => {
    const library = readdirSync('scenarios').filter((f) => f.endsWith('.yaml')).map((f) => join('scenarios', f));
    expect(isWholeLibrary(library)).toBe(true);
    expect(isWholeLibrary([...library, FIXTURE])).toBe(true);
    expect(isWholeLibrary(library.slice(1))).toBe(false);
    expect(isWholeLibrary([FIXTURE])).toBe(false);
  });

  it('--require-coverage on a subset still fails, naming the rules not exercised', async () => {
    let text = '';
    const c = await main(['run', 'scenarios/scale-out-workers.yaml', '--jobs', '1', '--no-color', '--require-coverage'], (t) => (text += t));
    expect(c).toBe(1);
    expect(text).toMatch(/error: --require-coverage: \d+ SPEC rules are not exercised by any passing scenario: NET-1 /);
    expect(text).not.toContain('SPEC coverage:');
  }, 120_000);
});
