/**
 * The mutant catalogue cannot rot (issue 22): every mutant still applies to
 * the sources as they are (its patch text occurs exactly once), and a small
 * subset, one of each kind (a provider source patch, a plugin mutant, a guest
 * patch, a Cluster API patch, a certificate bug), is applied through the real
 * runner (worker processes with the load-time hook) and must be killed by its
 * own library scenario, naming the expected rule; the
 * unmutated system through the same worker entry must pass that scenario.
 * The full kill table is a bench figure (`npm run bench -- mutants`).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE, selectMutants } from './catalogue.js';
// @ts-expect-error -- a plain .mjs module-loader hook without type declarations
import { applyPatches } from './hook.mjs';
import { CONTROL, patchProblem, runCatalogue } from './runner.js';
import { formatTable, totals } from './table.js';
import type { Row } from './types.js';

describe('mutant catalogue: contents', () => {
  it('holds at least 40 mutants with unique ids, each of the provider, the guest or Cluster API, with its rules and an existing scenario', () => {
    expect(CATALOGUE.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CATALOGUE.map((m) => m.id)).size).toBe(CATALOGUE.length);
    for (const m of CATALOGUE) {
      expect(m.id.startsWith(`${m.part}/`), m.id).toBe(true);
      expect(m.rules.length, `${m.id}: rules`).toBeGreaterThan(0);
      expect(existsSync(resolve(m.scenario)), `${m.id}: scenario ${m.scenario}`).toBe(true);
      if (m.plugin) expect(existsSync(resolve(m.plugin)), `${m.id}: plugin ${m.plugin}`).toBe(true);
    }
    expect(new Set(CATALOGUE.map((m) => m.part))).toEqual(new Set(['provider', 'guest', 'capi']));
  });

  it('every mutant still applies: each patch text occurs exactly once in its file and changes it', () => {
    const problems = CATALOGUE.map(patchProblem).filter((p): p is string => p !== undefined);
    expect(problems).toEqual([]);
  });

  it('a patch whose text is missing or occurs twice is refused, naming the file (the hook and the runner)', () => {
    expect(applyPatches('a = 1;\nb = 2;\n', [{ from: 'b = 2', to: 'b = 3' }], 'x.ts')).toBe('a = 1;\nb = 3;\n');
    expect(() => applyPatches('a = 1;\n', [{ from: 'b = 2', to: 'b = 3' }], 'x.ts')).toThrow(/x\.ts.*occurs nowhere/);
    expect(() => applyPatches('a;\na;\n', [{ from: 'a', to: 'b' }], 'x.ts')).toThrow(/x\.ts.*more than once/);
    expect(patchProblem({ ...CATALOGUE[0]!, id: 'x/gone', patches: [{ file: 'src/product/provider/hcsmachine.ts', from: 'no such text in the provider', to: 'x' }] })).toMatch(/occurs 0 times in src\/product\/provider\/hcsmachine\.ts/);
  });

  it('selecting an unknown mutant is an error naming it', () => {
    expect(() => selectMutants(['provider/no-such-bug'])).toThrow(/provider\/no-such-bug/);
  });
});

/** Mutant id → a rule its kill must name (measured: docs/scenarios.md "Mutant catalogue"). */
const SUBSET: Record<string, string> = {
  'provider/no-slot-label': 'POOL-5', // the pool status goes stale before a replacement misses the disk (DISK-3)
  'provider/forgetful-claimer': 'DISK-8',
  'provider/cert-wrong-ca': 'BOOT-3',
  'guest/format-inverted-overwrite': 'DISK-8',
  'capi/kcp-delete-newest': 'KCP-2',
  // issue 37's checks of this round, each killing a bug nothing caught before (docs/scenarios.md "Mutation survivors")
  'provider/stuck-in-seconds': 'OPS-2',
  'provider/by-id-whole-volume-id': 'DISK-3',
  'provider/data-volume-device-backwards': 'TPL-3',
  'provider/pool-forgets-bindings': 'POOL-4',
  'provider/root-volume-size-ignored': 'TPL-1',
  'provider/data-volumes-root-size': 'TPL-3',
};

describe('mutant catalogue: a subset is killed by the runner', () => {
  let rows: Row[] = [];
  let control: Row | undefined;
  beforeAll(async () => {
    // Each mutant against its own scenario only (the full library is the bench's), two at a time; no explore stage.
    rows = (await runCatalogue({ mutants: selectMutants(Object.keys(SUBSET)), jobs: 2, library: 'own', exploreRuns: 0, runTimeoutMs: 120_000 })).rows;
    control = (await runCatalogue({ mutants: [CONTROL], jobs: 1, library: [resolve('scenarios/scale-out-workers.yaml')], exploreRuns: 0, runTimeoutMs: 120_000 })).rows[0];
  }, 600_000);

  it('the unmutated system passes through the same worker entry (the kills are the mutants\')', () => {
    expect(control?.broken).toBeUndefined();
    expect(control?.kill, control?.kill?.error).toBeUndefined();
    expect(control?.libraryRuns).toBe(1);
  });

  for (const [id, rule] of Object.entries(SUBSET)) {
    it(`${id} is killed by its own scenario, naming ${rule}`, () => {
      const r = rows.find((x) => x.mutant.id === id);
      expect(r, id).toBeDefined();
      expect(r!.broken).toBeUndefined();
      expect(r!.kill, `${id} survived`).toBeDefined();
      expect(r!.kill!.stage).toBe('library');
      expect(r!.kill!.scenario).toBe(r!.mutant.scenario);
      expect(r!.kill!.rules, r!.kill!.error).toContain(rule);
    });
  }

  it('the table counts them as library kills, with no survivors', () => {
    const t = totals(rows, 1);
    expect(t).toMatchObject({ mutants: Object.keys(SUBSET).length, library: Object.keys(SUBSET).length, explore: 0, unexplained: 0, broken: 0 });
    expect(formatTable(rows, 1).at(-1)).toMatch(/killed by the library/);
  });
});
