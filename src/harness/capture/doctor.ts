/**
 * `hcs-testbed doctor` (issue 35): the disk-reuse contract judged on one
 * state — a captured bundle, or a live management cluster and cloud read
 * through a capture that stays in memory — read-only. It runs the same
 * library the scenario runner runs at every instant (InvariantMonitor, with
 * its at-rest checks: orphans) and the rules that need no history
 * (src/harness/scenario/state-rules.ts), and prints every violation with its
 * rule and the evidence.
 *
 * Exit codes (the CLI's): 0 clean, 1 violations, 2 bad input.
 */
import { SPEC_RULES } from '../../core/rules.js';
import { InvariantMonitor, INVARIANT_RULES } from '../scenario/invariants.js';
import { STATE_RULES, stateFindings } from '../scenario/state-rules.js';
import type { StateSource } from '../scenario/world.js';

export interface DoctorFinding {
  rule: string;
  /** The rule's text (SPEC.md). */
  ruleText: string;
  key: string;
  message: string;
  /** Ids and names the finding rests on (volumes, servers, machines). */
  evidence: string[];
  /** Which part of the library found it: the continuous invariants, or the one-state rules. */
  check: 'invariant' | 'state';
}

export interface DoctorReport {
  /** What was judged: the bundle file, or the live cluster. */
  source: string;
  capturedAt: string;
  /** Every rule the doctor judges (the passing ones too). */
  rules: string[];
  findings: DoctorFinding[];
  clean: boolean;
  /** What the state could not show (no guest files on a bundle: BOOT-2/3 unchecked; no history: DISK-9 deletions, MD-1 bounds). */
  notes: string[];
}

const ruleText = (id: string): string => SPEC_RULES.find((r) => r.id === id)?.text ?? '';

/** The ids a message names (volume, server and machine names as printed, uuids) — the evidence column. */
function evidenceOf(message: string): string[] {
  const ids = new Set<string>();
  for (const m of message.matchAll(/\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b/g)) ids.add(m[0]);
  return [...ids];
}

export async function doctor(state: StateSource, meta: { source: string; capturedAt: string; guests?: boolean }): Promise<DoctorReport> {
  const monitor = new InvariantMonitor(state, () => [], { fromSnapshot: true });
  const invariant = await monitor.checkAtRest();
  const findings: DoctorFinding[] = invariant.map((v) => ({ rule: v.rule, ruleText: ruleText(v.rule), key: v.key, message: v.message, evidence: evidenceOf(v.message), check: 'invariant' }));
  const seen = new Set(findings.map((f) => f.key));
  for (const f of await stateFindings(state)) {
    if (seen.has(f.key)) continue;
    seen.add(f.key);
    findings.push({ rule: f.rule, ruleText: ruleText(f.rule), key: f.key, message: f.message, evidence: [...new Set([...f.refs, ...evidenceOf(f.message)])], check: 'state' });
  }
  findings.sort((a, b) => ruleOrder(a.rule, b.rule) || a.key.localeCompare(b.key));
  // Without node files the certificate checks do not run: their rules are not claimed as judged.
  const rules = [...new Set([...INVARIANT_RULES, ...STATE_RULES, 'HCS-1', 'TPL-3'])].filter((r) => meta.guests || (r !== 'BOOT-2' && r !== 'BOOT-3')).sort(ruleOrder);
  const notes = [
    'judged from one instant: deletions of persistent disks (DISK-9) and the MD-1 bounds of a rollout in progress need a history, which a single state lacks',
    ...(meta.guests ? [] : ['no node files or mounts in the state: the kubelet certificate checks (BOOT-2, BOOT-3) and the mount checks (DISK-3 mounts) did not run']),
  ];
  return { source: meta.source, capturedAt: meta.capturedAt, rules, findings, clean: findings.length === 0, notes };
}

function ruleOrder(a: string, b: string): number {
  const [pa, na] = a.split('-');
  const [pb, nb] = b.split('-');
  return (pa ?? '').localeCompare(pb ?? '') || Number(na) - Number(nb);
}

export function doctorText(r: DoctorReport): string {
  const lines = [`doctor: ${r.source} (captured ${r.capturedAt})`];
  if (r.clean) lines.push(`clean: no violation of ${r.rules.join(', ')}`);
  for (const f of r.findings) {
    lines.push(`✗ ${f.rule}: ${f.message}`);
    if (f.evidence.length) lines.push(`    evidence: ${f.evidence.join(', ')}`);
  }
  const byRule = new Map<string, number>();
  for (const f of r.findings) byRule.set(f.rule, (byRule.get(f.rule) ?? 0) + 1);
  if (!r.clean) lines.push(`${r.findings.length} violation${r.findings.length === 1 ? '' : 's'}: ${[...byRule].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  for (const n of r.notes) lines.push(`note: ${n}`);
  return lines.join('\n') + '\n';
}

export function doctorJson(r: DoctorReport): string {
  return JSON.stringify(r, null, 2) + '\n';
}

function esc(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** JUnit XML (the common format, as src/harness/report/junit.ts writes it): one testcase per rule judged, failed by its violations. */
export function doctorJunit(r: DoctorReport): string {
  const cases = r.rules.map((rule) => {
    const fs = r.findings.filter((f) => f.rule === rule);
    const failure = fs.length ? `<failure message="${esc(`${fs.length} violation${fs.length === 1 ? '' : 's'} of ${rule}`)}">${esc(fs.map((f) => `${f.message}${f.evidence.length ? ` [evidence: ${f.evidence.join(', ')}]` : ''}`).join('\n'))}</failure>` : '';
    return `    <testcase classname="doctor" name="${esc(`${rule} ${ruleText(rule)}`.slice(0, 200))}">${failure}</testcase>`;
  });
  const failed = r.rules.filter((rule) => r.findings.some((f) => f.rule === rule)).length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="hcs-testbed doctor" tests="${r.rules.length}" failures="${failed}" errors="0">\n  <testsuite name="${esc(r.source)}" tests="${r.rules.length}" failures="${failed}" errors="0" timestamp="${esc(r.capturedAt)}">\n${cases.join('\n')}\n  </testsuite>\n</testsuites>\n`;
}
