/**
 * `hcs-testbed doctor` (issue 35): a running cluster broken the way people break one — a finalizer removed by hand,
 * a volume detached by hand, a MachineDeployment switched to maxSurge 1 on a full pool — is captured through its
 * kubeconfig and cloud API, and the doctor names each problem with its rule and evidence; a healthy one is clean.
 * The CLI's JSON and JUnit outputs and its exit codes (0 clean, 1 violations, 2 bad input).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dispatchTransport, HcsClient } from '../../src/product/cloud/index.js';
import type { HCSMachine } from '../../src/product/api/hcs.js';
import type { MachineDeployment } from '../../src/product/api/capi.js';
import { serializeBundle, type Bundle } from '../../src/harness/capture/bundle.js';
import { bundleState } from '../../src/harness/capture/state.js';
import { doctor, type DoctorReport } from '../../src/harness/capture/doctor.js';
import { doctorMain } from '../../src/harness/cli/capture.js';
import type { Testbed } from '../../src/harness/testbed/index.js';
import { captureText, runTo, workersUp } from './support.js';


async function upTestbed(): Promise<Testbed> {
  const sc = workersUp('doctor-fixture', 5, { markers: true });
  const { tb, result } = await runTo(sc, sc.steps.length);
  expect(result.ok).toBe(true);
  return tb;
}

function cloudOf(tb: Testbed): HcsClient {
  const p = tb.cloud.config.projects[0]!;
  return new HcsClient({ transport: dispatchTransport(tb.cloud), ak: p.ak, sk: p.sk, projectId: p.id, clock: tb.clock });
}

async function doctorOf(tb: Testbed): Promise<{ report: DoctorReport; bundle: Bundle }> {
  const { bundle } = await captureText(tb);
  return { bundle, report: await doctor(bundleState(bundle), { source: 'test', capturedAt: bundle.capturedAt }) };
}

const rulesOf = (r: DoctorReport): string[] => [...new Set(r.findings.map((f) => f.rule))].sort();

describe('doctor on a captured cluster', () => {
  it('a healthy cluster is clean', async () => {
    const tb = await upTestbed();
    try {
      const { report } = await doctorOf(tb);
      expect(report.findings.map((f) => f.message)).toEqual([]);
      expect(report.clean).toBe(true);
    } finally {
      await tb.close();
    }
  }, 120_000);

  it('a volume detached by hand: DISK-8, naming the volume, the machine and the server', async () => {
    const tb = await upTestbed();
    try {
      const hm = (await tb.env.mgmt.list<HCSMachine>('HCSMachine')).find((m) => m.status?.hostname === 'demo-worker-2')!;
      const vol = tb.cloud.hypervisor.listVolumes().find((v) => v.metadata['hcs.io/hostname'] === 'demo-worker-2' && v.metadata['hcs.io/persistent'] === 'true')!;
      // The operator's console call: ECS DetachServerVolume, signed with the project's AK/SK.
      await cloudOf(tb).detachVolume(hm.spec.serverId!, vol.id);
      await tb.sim.runUntil(() => tb.cloud.hypervisor.volume(vol.id)?.status === 'available', 60_000);
      const { report } = await doctorOf(tb);
      const f = report.findings.find((x) => x.rule === 'DISK-8');
      expect(f?.message).toMatch(new RegExp(`machine ${hm.metadata.name} serves hostname demo-worker-2 .* its slot 0 volume demo-demo-worker-2-pd0 \\(${vol.id.slice(0, 8)}\\) is available, not attached to it`));
      expect(f?.evidence).toEqual(expect.arrayContaining([vol.id, hm.spec.serverId!, hm.metadata.name]));
      expect(rulesOf(report)).toEqual(['DISK-8']);
    } finally {
      await tb.close();
    }
  }, 120_000);

  it('a finalizer removed by hand: the HCSMachine is gone while its server lives on (POOL-4, HCS-1)', async () => {
    const tb = await upTestbed();
    try {
      const hm = (await tb.env.mgmt.list<HCSMachine>('HCSMachine')).find((m) => m.status?.hostname === 'demo-worker-3')!;
      // kubectl patch hcsmachine X --type=merge -p '{"metadata":{"finalizers":null}}'; kubectl delete hcsmachine X
      await tb.env.mgmt.update({ ...hm, metadata: { ...hm.metadata, finalizers: [] } });
      await tb.env.mgmt.delete({ kind: 'HCSMachine', namespace: 'cpaas-system', name: hm.metadata.name });
      await tb.sim.settle();
      expect(tb.cloud.hypervisor.server(hm.spec.serverId!)?.status).toBe('ACTIVE');
      const { report } = await doctorOf(tb);
      const pool4 = report.findings.find((x) => x.rule === 'POOL-4' && x.key.startsWith('POOL-4/server-without-machine/'));
      expect(pool4?.message).toMatch(new RegExp(`was built for HCSMachine ${hm.metadata.name} \\(pool cpaas-system/demo-worker-pool entry demo-worker-3\\), which is gone while the server still exists`));
      expect(pool4?.evidence).toContain(hm.spec.serverId);
      expect(report.findings.find((x) => x.rule === 'HCS-1')?.message).toMatch(new RegExp(`\\(${hm.spec.serverId}\\) is not owned by any HCSMachine`));
    } finally {
      await tb.close();
    }
  }, 120_000);

  it('a MachineDeployment switched to maxSurge 1 on a full pool, mid-rollout: MD-3 (the strategy) and POOL-2 (the surge machine waits)', async () => {
    const tb = await upTestbed();
    try {
      const { applyObject, loadManifestPath } = await import('../../src/harness/manifests/index.js');
      for (const m of loadManifestPath('scenarios/manifests/upgrade/worker-template-v2.yaml')) await applyObject(tb.env.mgmt, m.obj);
      const md = (await tb.env.mgmt.get<MachineDeployment>({ kind: 'MachineDeployment', namespace: 'cpaas-system', name: 'demo-md-0' }))!;
      md.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } };
      md.spec.template.spec.infrastructureRef.name = 'demo-worker-template-v2';
      await tb.env.mgmt.update(md);
      await tb.sim.advance(120_000);
      const { report, bundle } = await doctorOf(tb);
      expect(report.findings.find((x) => x.rule === 'MD-3')?.message).toMatch(/MachineDeployment cpaas-system\/demo-md-0 rolls out with maxSurge 1 while its machines take entries of pool demo-worker-pool, which carry persistent disks/);
      expect(report.findings.find((x) => x.rule === 'POOL-2')?.message).toMatch(/pool cpaas-system\/demo-worker-pool has 3 entries for 4 live machines: \S+ waits for a free entry/);
      expect(rulesOf(report)).toEqual(['MD-3', 'POOL-2']);

      // The CLI on the bundle file: text, JSON and JUnit, exit 1 (violations).
      const dir = mkdtempSync(join(tmpdir(), 'doctor-cli-'));
      const file = join(dir, 'incident.bundle.json');
      writeFileSync(file, serializeBundle(bundle));
      let out = '';
      expect(await doctorMain([file], (s) => (out += s))).toBe(1);
      expect(out).toMatch(/✗ MD-3: MachineDeployment cpaas-system\/demo-md-0 rolls out with maxSurge 1/);
      expect(out).toMatch(/2 violations: MD-3 ×1, POOL-2 ×1/);
      out = '';
      expect(await doctorMain([file, '--format', 'json', '--out', join(dir, 'r.json')], (s) => (out += s))).toBe(1);
      const json = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as DoctorReport;
      expect(json.clean).toBe(false);
      expect(json.findings.map((f) => f.rule).sort()).toEqual(['MD-3', 'POOL-2']);
      expect(json.findings[0]!.ruleText).not.toBe('');
      out = '';
      expect(await doctorMain([file, '--format', 'junit'], (s) => (out += s))).toBe(1);
      expect(out).toMatch(/<testsuites name="hcs-testbed doctor" tests="\d+" failures="2"/);
      expect(out).toMatch(/<testcase classname="doctor" name="MD-3 [^"]*"><failure message="1 violation of MD-3">/);
      expect(out).toMatch(/<testcase classname="doctor" name="DISK-8 [^"]*"><\/testcase>/);
    } finally {
      await tb.close();
    }
  }, 180_000);

  it('exit codes: 0 clean, 2 bad input', async () => {
    const tb = await upTestbed();
    const dir = mkdtempSync(join(tmpdir(), 'doctor-cli-'));
    try {
      const { text } = await captureText(tb);
      writeFileSync(join(dir, 'ok.json'), text);
      let out = '';
      expect(await doctorMain([join(dir, 'ok.json')], (s) => (out += s))).toBe(0);
      expect(out).toMatch(/^clean: no violation of /m);
      writeFileSync(join(dir, 'cut.json'), text.slice(0, text.length / 2));
      out = '';
      expect(await doctorMain([join(dir, 'cut.json')], (s) => (out += s))).toBe(2);
      expect(out).toMatch(/cut\.json: the bundle is truncated/);
      out = '';
      expect(await doctorMain([join(dir, 'ok.json'), '--format', 'xml'], (s) => (out += s))).toBe(2);
      expect(out).toMatch(/--format must be text, json or junit, got "xml"/);
      out = '';
      expect(await doctorMain([], (s) => (out += s), {})).toBe(2);
      expect(out).toMatch(/--project is required/);
    } finally {
      await tb.close();
    }
  }, 120_000);
});
