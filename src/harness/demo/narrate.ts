/**
 * The guided demo's narration, computed from the kubectl output it is
 * printed beside (issue 34: "REPLICAS = READY = UPDATED" must never be
 * printed under 3/2/2/0). Each function reads kubectl's table (or the
 * jsonpath text) the way a person reads it and says what it shows; where
 * the output says "not done", the reason comes from the live stalls (the
 * dashboard's "why is it waiting?").
 */
import type { Stall } from '../status/why.js';

export type Row = Record<string, string>;

/**
 * kubectl's table output (one header; a watch repeats rows, the header once). A
 * row is cut at the header's column positions when it lines up with them (so an
 * empty cell, e.g. a machine's NODENAME before it has one, stays empty); a row
 * that does not (a watch line printed with other widths) is split at runs of
 * two or more spaces.
 */
export function parseTable(out: string): Row[] {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const headerAt = lines.findIndex((l) => /^NAME\s/.test(l));
  if (headerAt < 0) return [];
  const header = lines[headerAt]!;
  const cols: { name: string; at: number }[] = [];
  for (const m of header.matchAll(/\S+(?: \S+)*/g)) cols.push({ name: m[0], at: m.index });
  return lines
    .slice(headerAt + 1)
    .filter((l) => !/^NAME\s/.test(l))
    .map((l) => {
      const aligned = cols.every((c, i) => i === 0 || (l[c.at - 1] === ' ' && (l.length <= c.at || l[c.at - 2] === ' ' || l[c.at] !== ' ')));
      const cells = aligned ? cols.map((c, i) => l.slice(c.at, cols[i + 1]?.at ?? l.length).trim()) : l.trim().split(/\s{2,}/);
      return Object.fromEntries(cols.map((c, i) => [c.name, cells[i] ?? '']));
    });
}

/** The last row of each NAME (a watch prints an object once per change). */
export function latestRows(rows: Row[]): Row[] {
  const by = new Map<string, Row>();
  for (const r of rows) by.set(r.NAME ?? '', r);
  return [...by.values()];
}

const count = (xs: string[]): string =>
  [...xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<string, number>())]
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');

/** Why a rollout is not done, from the live stalls (one line), or that it is still moving. */
export function heldBy(stalls: readonly Stall[]): string {
  const pre = stalls.find((s) => s.reason === 'PreflightCheckFailed');
  if (pre) return `held by Cluster API's MachineSet preflight checks (${pre.checks.join(', ')}): the control plane must be upgraded first (UPG-1) — the upgrade document does it, then these workers go on by themselves`;
  const entry = stalls.find((s) => s.reason === 'NoFreePoolEntry');
  if (entry) return `a machine waits for a free pool entry: ${entry.advice}`;
  if (stalls.length) return `waiting: ${stalls.map((s) => `${s.kind} ${s.name} ${s.reason}`).join('; ')} (see "Why is it waiting?")`;
  return 'still rolling (nothing is stuck)';
}

/** `kubectl get machinedeployment`: the counts as printed, and whether the rollout is done. */
export function mdLook(out: string, stalls: readonly Stall[]): string {
  const rows = latestRows(parseTable(out));
  if (!rows.length) return 'no MachineDeployment listed';
  return rows
    .map((r) => {
      const [d, n, ready, up] = [r.DESIRED ?? r.REPLICAS, r.REPLICAS, r.READY, r.UPDATED];
      if (d === n && n === ready && ready === up) return `${r.NAME}: DESIRED = REPLICAS = READY = UPDATED = ${n} — every worker runs the current template and is ready (VERSION ${r.VERSION})`;
      return `${r.NAME}: DESIRED ${d}, REPLICAS ${n}, READY ${ready}, UPDATED ${up}, UNAVAILABLE ${r.UNAVAILABLE ?? '?'} — not done: ${heldBy(stalls)}`;
    })
    .join('; ');
}

/** `kubectl get kubeadmcontrolplane` (also its -w: the last row). */
export function kcpLook(out: string): string {
  const rows = latestRows(parseTable(out));
  if (!rows.length) return 'no KubeadmControlPlane listed';
  return rows
    .map((r) => {
      const done = r.DESIRED === r.REPLICAS && r.REPLICAS === r.READY && r.READY === r.UPDATED;
      return `${r.NAME}: DESIRED ${r.DESIRED ?? '?'}, REPLICAS ${r.REPLICAS}, READY ${r.READY}, UPDATED ${r.UPDATED}, VERSION ${r.VERSION}${done ? ' — every control plane machine updated and ready' : ' — still rolling (maxSurge 0: one machine at a time, READY never above DESIRED)'}`;
    })
    .join('; ');
}

/** `kubectl get machines`: how many, their phases, versions and the hostnames (NODENAME). */
export function machinesLook(out: string): string {
  const rows = latestRows(parseTable(out));
  if (!rows.length) return 'no machines listed';
  const phases = count(rows.map((r) => r.PHASE ?? ''));
  const versions = count(rows.map((r) => r.VERSION ?? ''));
  const hosts = rows.map((r) => r.NODENAME).filter((h) => h && h !== '<none>');
  return `${rows.length} machines: ${phases}; VERSION ${versions}; NODENAME (the pool entries' hostnames): ${hosts.length ? hosts.join(', ') : 'none yet'}`;
}

/** `kubectl get nodes`: versions and readiness, against the version the document upgrades to. */
export function nodesLook(out: string, target?: string): string {
  const rows = parseTable(out);
  if (!rows.length) return 'no nodes listed';
  const byVersion = new Map<string, string[]>();
  for (const r of rows) byVersion.set(r.VERSION ?? '', [...(byVersion.get(r.VERSION ?? '') ?? []), r.NAME ?? '']);
  const versions = [...byVersion].map(([v, ns]) => `${v}: ${ns.join(', ')}`).join('; ');
  const notReady = rows.filter((r) => !/^Ready(,|$)/.test(r.STATUS ?? '')).map((r) => `${r.NAME} ${r.STATUS}`);
  const ready = notReady.length ? `not Ready: ${notReady.join(', ')}` : `all ${rows.length} Ready`;
  if (!target) return `VERSION ${versions}; ${ready}`;
  const behind = rows.filter((r) => r.VERSION !== target).map((r) => r.NAME);
  return `VERSION ${versions}; ${ready}; ${behind.length ? `${behind.length} not at ${target} yet (${behind.join(', ')})` : `every node at ${target}`}`;
}

/** The document's jsonpath check: "Installed: X\nPhase: Y" against the target (OVN-4, OVN-6). */
export function ovnLook(out: string, target: string): string {
  const installed = /Installed: (\S*)/.exec(out)?.[1] ?? '';
  const phase = /Phase: (\S*)/.exec(out)?.[1] ?? '';
  const at = `Installed ${installed || '(none)'}, Phase ${phase || '(none)'}`;
  if (phase === 'Success' && installed === target) return `${at}: done — Success with installedRevision at the target ${target} (OVN-6)`;
  if (phase === 'Success') return `${at}: that is the previous revision's result, not this upgrade — the target is ${target}; the next phases show the upgrade`;
  if (phase === 'Upgrading') return `${at}: Helm is upgrading; installedRevision is still the old revision`;
  if (phase === 'HealthChecking') return `${at}: the chart is applied (installedRevision already ${installed}) but the Kube-OVN pods are not verified yet — not done (OVN-6)`;
  if (phase === 'Syncing' || phase === 'Downloading' || phase === 'Installing') return `${at}: a transient phase; it converges by itself`;
  return `${at}: a failed phase — kubectl describe apprelease cni-kube-ovn -n cpaas-system shows each condition's message (OVN-5)`;
}

/** `kubectl get apprelease`: SYNC and HEALTH as printed. */
export function appReleaseLook(out: string, target: string): string {
  const r = parseTable(out)[0];
  if (!r) return 'no AppRelease listed';
  const done = r.SYNC === 'Synced' && r.HEALTH === 'Healthy';
  return `SYNC ${r.SYNC}, HEALTH ${r.HEALTH}: ${done ? 'synced and healthy — whether at the target is in the next check (installedRevision and phase)' : `working towards targetRevision ${target}; the next check shows installedRevision and the phase`}`;
}
