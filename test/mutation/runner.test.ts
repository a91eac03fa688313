/**
 * The scenario test runner (test/mutation/scenario-runner.ts) through StrykerJS itself, on three mutants whose
 * verdicts the library decides: `providerIDFor` emptied or its format changed (labels.ts:35-37: the providerID a
 * Node and its Machine must share, TPL-4) and the PersistentDiskReuse condition type emptied (surge.ts:17, a
 * static mutant: Stryker gives it a fresh runner process, where the mutant must be on before the sources load).
 * All three must be killed, each by a scenario that covers it. ~1-2 min of the library: the dry run and the
 * mutants' scenarios.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stryker } from './cli.js';
import { testNames, type ReportJson } from './report.js';

describe('StrykerJS with the scenario library as its test runner', () => {
  it('kills runtime and static mutants the library catches, each by a scenario that covers it', { timeout: 900_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcs-mutation-test-'));
    try {
      const stats = await stryker(
        { HCS_MUTATE: 'src/product/provider/labels.ts:35-37,src/product/provider/surge.ts:17-17', HCS_MUTATION_OUT: dir, HCS_MUTATION_CONCURRENCY: '1' },
        ['--force', '--reporters', 'json,hcs-progress'],
        join(dir, 'stryker.log'),
        false,
      );
      expect(stats.exit, readFileSync(join(dir, 'stryker.log'), 'utf8').slice(-2000)).toBe(0);
      const report = JSON.parse(readFileSync(join(dir, 'mutation.json'), 'utf8')) as ReportJson;
      const name = testNames(report);
      const mutants = Object.entries(report.files).flatMap(([file, f]) => f.mutants.map((m) => ({ file, ...m })));
      expect(mutants.map((m) => `${m.file}:${m.location.start.line} ${m.mutatorName}`).sort()).toEqual([
        'src/product/provider/labels.ts:35 BlockStatement',
        'src/product/provider/labels.ts:36 StringLiteral',
        'src/product/provider/surge.ts:17 StringLiteral',
      ]);
      for (const m of mutants) {
        const where = `${m.file}:${m.location.start.line} ${m.mutatorName} (coveredBy ${m.coveredBy?.length}, static ${m.static})`;
        expect(m.status, where).toBe('Killed');
        expect(m.killedBy?.map(name), where).toHaveLength(1);
        expect(name(m.killedBy![0]!), where).toMatch(/^scenarios\/[a-z0-9-]+\.yaml$/);
        // A runtime mutant is killed by a scenario that executed it, after at most the scenarios that executed it
        // (a static one runs them all: its coverage is the module load, outside any scenario).
        if (!m.static) {
          expect(m.coveredBy?.map(name), where).toContain(name(m.killedBy![0]!));
          expect(m.testsCompleted ?? 0, where).toBeLessThanOrEqual(m.coveredBy!.length);
        }
      }
      expect(mutants.find((m) => m.file.endsWith('surge.ts'))!.static).toBe(true);
      // The progress file has every verdict too.
      expect(readFileSync(join(dir, 'mutants.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
