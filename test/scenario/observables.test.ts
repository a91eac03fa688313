/**
 * The observable surface (src/harness/scenario/observables.ts, issue 37): a row for everything the provider and the
 * model write that a user can observe, each naming the checks that read it or why none does; docs/provider.md
 * carries the generated table. New status fields, condition or Event reasons and cloud metadata keys fail here
 * until they have a row.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { schemaForKind } from '../../src/product/api/crds/definitions.js';
import * as metadata from '../../src/product/api/metadata.js';
import { INVARIANTS, OBSERVABLES, observablesTable, unknownReferences } from '../../src/harness/scenario/observables.js';

type Schema = { properties?: Record<string, Schema>; items?: Schema; additionalProperties?: Schema | boolean };

function leaves(s: Schema | undefined, p: string, out: string[]): string[] {
  if (!s) return out;
  if (s.properties) for (const [k, v] of Object.entries(s.properties)) leaves(v, `${p}.${k}`, out);
  else if (s.items) leaves(s.items, `${p}[]`, out);
  else if (s.additionalProperties && typeof s.additionalProperties === 'object') leaves(s.additionalProperties, `${p}.*`, out);
  else out.push(p);
  return out;
}

const providerSource = readdirSync('src/product/provider').filter((f) => f.endsWith('.ts')).map((f) => readFileSync(join('src/product/provider', f), 'utf8')).join('\n');

describe('the observable surface', () => {
  it('names only checks and invariants that exist', () => {
    expect(unknownReferences()).toEqual([]);
    for (const [name, inv] of Object.entries(INVARIANTS)) expect(existsSync(join('src/harness/scenario', inv.file)), name).toBe(true);
  });

  it('says why wherever no check reads a row', () => {
    expect(OBSERVABLES.filter((r) => !r.checkedBy.length && !r.reason).map((r) => r.what)).toEqual([]);
  });

  it('has a row for every status field of the provider\'s kinds (their CRD schemas)', () => {
    const rows = new Set(OBSERVABLES.map((r) => r.what));
    const fields = ['HCSCluster', 'HCSMachine', 'HCSMachineConfigPool', 'HCSMachineTemplate'].flatMap((k) => leaves((schemaForKind(k) as Schema | undefined)?.properties?.status, `${k}.status`, []));
    expect(fields.length).toBeGreaterThan(40);
    expect(fields.filter((f) => !rows.has(f))).toEqual([]);
  });

  it('has a row for every condition and Event reason the provider writes', () => {
    const reasons = new Set([...providerSource.matchAll(/reason: '([A-Za-z]+)'/g), ...providerSource.matchAll(/k8sEvent\([^,]+, '(?:Warning|Normal)', '([A-Za-z]+)'/g)].map((m) => m[1]!));
    expect(reasons.size).toBeGreaterThan(40);
    const named = new Set(OBSERVABLES.flatMap((r) => r.names ?? []));
    expect([...reasons].filter((r) => !named.has(r)).sort()).toEqual([]);
    // ... and each reason in one row only.
    const all = OBSERVABLES.flatMap((r) => r.names ?? []);
    expect(all.length).toBe(new Set(all).size);
  });

  it('has a row for every condition type the provider sets', () => {
    const types = new Set([...providerSource.matchAll(/COND_[A-Z_]+ = '([A-Za-z]+)'/g), ...providerSource.matchAll(/setCondition\([^,]+, \{ type: '([A-Za-z]+)'/g)].map((m) => m[1]!));
    const text = OBSERVABLES.filter((r) => r.kind === 'condition').map((r) => r.what).join(' ');
    expect([...types].filter((t) => !new RegExp(`\\b${t}\\b`).test(text))).toEqual([]);
  });

  it('has a row for every metadata key the provider writes on servers and volumes', () => {
    const keys = (Object.values(metadata) as unknown[]).filter((v): v is string => typeof v === 'string' && v.startsWith('hcs.io/'));
    expect(keys.length).toBeGreaterThan(10);
    const text = OBSERVABLES.filter((r) => r.kind === 'cloud').map((r) => r.what);
    expect(keys.filter((k) => !text.some((t) => t.endsWith(` ${k}`)))).toEqual([]);
  });

  it('docs/provider.md carries the generated table', () => {
    const doc = readFileSync('docs/provider.md', 'utf8');
    const begin = '<!-- observables:begin (generated from src/harness/scenario/observables.ts) -->\n';
    const end = '<!-- observables:end -->';
    const at = doc.indexOf(begin);
    expect(at, 'docs/provider.md lacks the observable surface markers').toBeGreaterThan(0);
    expect(doc.slice(at + begin.length, doc.indexOf(end, at)), 'regenerate: npx tsx tools/observables.ts > the section (see docs/provider.md)').toBe(observablesTable());
  });
});
