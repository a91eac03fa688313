/**
 * The rule catalogue lives in the repository (issue 33: "the repo stands
 * alone"): src/core/rules.ts defines every rule, docs/rules.md is generated
 * from it, and every rule ID cited in the docs resolves to a rule.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoPath } from '../../src/core/repo.js';
import { SPEC_RULES, SPEC_RULE_IDS, rulesMarkdown } from '../../src/core/rules.js';
import { rulesMain } from '../../src/harness/cli/entrypoints.js';

describe('the rule catalogue', () => {
  it('docs/rules.md is the generated catalogue (regenerate: hcs-testbed rules --markdown > docs/rules.md)', () => {
    expect(readFileSync(repoPath('docs', 'rules.md'), 'utf8')).toBe(rulesMarkdown());
  });

  it('has 65 unique rules, each in its area', () => {
    expect(SPEC_RULES).toHaveLength(65);
    expect(SPEC_RULE_IDS.size).toBe(65);
    for (const r of SPEC_RULES) expect(r.id.startsWith(`${r.area}-`), r.id).toBe(true);
  });

  it('every rule ID the docs cite resolves to a rule', () => {
    const cited = new Map<string, string>();
    const docs = [repoPath('README.md'), ...readdirSync(repoPath('docs')).filter((f) => f.endsWith('.md')).map((f) => join(repoPath('docs'), f))];
    for (const f of docs) for (const m of readFileSync(f, 'utf8').matchAll(/\b(NET|POOL|DISK|TPL|BOOT|MD|KCP|UPG|OVN|RB|OPS|HCS)-(\d+)\b/g)) cited.set(`${m[1]}-${m[2]}`, f);
    const unknown = [...cited].filter(([id]) => !SPEC_RULE_IDS.has(id));
    expect(unknown).toEqual([]);
    expect(cited.size).toBeGreaterThan(40);
  });

  it('hcs-testbed rules lists rules, refuses an unknown ID with exit 2', () => {
    let out = '';
    expect(rulesMain(['DISK-3'], (s) => (out += s))).toBe(0);
    expect(out).toMatch(/^DISK-3 +Identity of a persistent disk is \(hostname, slot\)/);
    out = '';
    expect(rulesMain(['DISK-99'], (s) => (out += s))).toBe(2);
    expect(out).toMatch(/no rule "DISK-99"/);
  });
});
