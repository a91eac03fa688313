/** docs/provider.md "The contract" names every entry of the contract's vocabulary (src/harness/scenario/contract.ts). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTRACT_CONDITIONS, CONTRACT_EVENT_REASONS, CONTRACT_FIELDS, CONTRACT_METADATA } from '../../src/harness/scenario/contract.js';

const doc = readFileSync('docs/provider.md', 'utf8');
const section = doc.slice(doc.indexOf('## The contract'), doc.indexOf('\n## ', doc.indexOf('## The contract') + 5));

describe('docs/provider.md states the whole contract', () => {
  it('has the section', () => {
    expect(section.length).toBeGreaterThan(1000);
  });
  it.each(CONTRACT_FIELDS.map((f) => [f.field, f.rules] as const))('field %s with its rules', (field, rules) => {
    const row = section.split('\n').find((l) => l.startsWith(`| \`${field}\``));
    expect(row, field).toBeDefined();
    for (const r of rules) expect(row).toContain(r);
  });
  it.each(CONTRACT_CONDITIONS.map((c) => [`${c.kind} ${c.type}`, c] as const))('condition %s with its reasons and rules', (_n, c) => {
    const row = section.split('\n').find((l) => l.startsWith(`| ${c.kind} | \`${c.type}\``));
    expect(row).toBeDefined();
    for (const r of [...c.reasons, ...c.rules]) expect(row).toContain(r);
  });
  it.each(CONTRACT_EVENT_REASONS.map((e) => [e.reason, e.rules] as const))('Event reason %s with its rules', (reason, rules) => {
    const m = new RegExp(`\`${reason}\` \\(([^)]*)\\)`).exec(section.replace(/\s+/g, ' '));
    expect(m, reason).not.toBeNull();
    for (const r of rules) expect(m![1]).toContain(r);
  });
  it.each(CONTRACT_METADATA.map((m) => [`${m.on} ${m.key}`, m] as const))('metadata %s', (_n, m) => {
    expect(section).toContain(`\`${m.key}\``);
  });
});
