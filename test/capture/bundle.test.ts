/**
 * The bundle (issue 35): no AK/SK and no Secret data in it (redaction, listed in the bundle); bad input — a
 * truncated, foreign or newer-schema bundle — refused with an error naming the problem, and nothing half-loaded.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import type { Secret } from '../../src/product/api/core.js';
import { BundleError, checkBundle, parseBundle, serializeBundle, type Bundle } from '../../src/harness/capture/bundle.js';
import { createReplayTestbed } from '../../src/harness/capture/replay.js';
import { Redactor, REDACTED } from '../../src/harness/capture/redact.js';
import { EmbeddedStore } from '../../src/core/kube/embedded-store.js';
import { VirtualClock } from '../../src/core/clock.js';
import { SeededRng } from '../../src/core/rng.js';
import { captureText, runTo } from './support.js';

const UP = `name: bundle-fixture
seed: 3
steps:
  - apply: library:worker-cluster
  - wait:
      - machines: {deployment: demo-md-0, phase: Running, count: 3}
    timeout: 30m
`;

async function captured(): Promise<{ bundle: Bundle; text: string; ak: string; sk: string; raw: Secret[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'bundle-'));
  writeFileSync(join(dir, 'up.yaml'), UP);
  const sc = loadScenario(join(dir, 'up.yaml'));
  const { tb } = await runTo(sc, sc.steps.length);
  try {
    const p = tb.cloud.config.projects[0]!;
    // The operator's credentials Secret (HCS-5) and a user's own Secret, as they would sit in a real cluster.
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    await tb.env.mgmt.create<Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'hcs-cloud-credentials', namespace: 'cpaas-system' }, data: { ak: b64(p.ak), sk: b64(p.sk) } });
    await tb.env.mgmt.create<Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'registry-login', namespace: 'cpaas-system' }, stringData: { password: 'hunter2-registry-password' } } as Secret);
    await tb.sim.settle();
    const raw = await tb.env.mgmt.list<Secret>('Secret', { namespace: 'cpaas-system' });
    return { ...(await captureText(tb)), ak: p.ak, sk: p.sk, raw };
  } finally {
    await tb.close();
  }
}

describe('redaction: a bundle is safe to attach to a bug report', () => {
  it('holds no AK/SK, no Secret data but certificates, no private key, no bootstrap token; it lists what was cut', async () => {
    const { bundle, text, ak, sk, raw } = await captured();
    // Not vacuous: the cluster held all of it.
    const all = JSON.stringify(raw);
    expect(raw.find((s) => s.metadata.name === 'hcs-cloud-credentials')?.data?.sk).toBe(Buffer.from(sk).toString('base64'));
    expect(raw.some((s) => Object.values(s.data ?? {}).some((v) => Buffer.from(v, 'base64').toString().includes('PRIVATE KEY')))).toBe(true);
    expect(all).toContain('hunter2-registry-password');

    for (const needle of [ak, sk, Buffer.from(ak).toString('base64'), Buffer.from(sk).toString('base64'), 'hunter2-registry-password', Buffer.from('hunter2-registry-password').toString('base64')]) expect(text).not.toContain(needle);
    expect(text).not.toMatch(/PRIVATE KEY/);
    expect(text).not.toMatch(/\b[a-z0-9]{6}\.[a-z0-9]{16}\b/);
    for (const s of [...bundle.management.objects, ...bundle.workloads.flatMap((w) => w.objects)].filter((o): o is Secret => o.kind === 'Secret')) {
      for (const [k, v] of Object.entries(s.data ?? {})) expect(`${s.metadata.name}[${k}]: ${Buffer.from(v, 'base64').toString()}`).toMatch(/^\S+: -----BEGIN CERTIFICATE-----/);
    }
    // The CA's certificate stays (its public part); its key does not.
    const ca = bundle.management.objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'demo-ca') as Secret;
    expect(Object.keys(ca.data ?? {})).toEqual(['tls.crt']);
    const what = bundle.redactions.map((r) => r.what);
    expect(what).toEqual(expect.arrayContaining(['Secret cpaas-system/hcs-cloud-credentials data[ak]', 'Secret cpaas-system/hcs-cloud-credentials data[sk]', 'Secret cpaas-system/registry-login stringData[password]', 'Secret cpaas-system/demo-ca data[tls.key]']));
    expect(what.some((w) => /^server \S+ \([0-9a-f-]{36}\) user data: a private key$/.test(w))).toBe(true);
    expect(what.some((w) => /user data: a kubeadm bootstrap token$/.test(w))).toBe(true);
    // The servers' user data stays reviewable (decoded), with the cut values marked.
    expect(bundle.cloud.servers.every((s) => String(s.user_data_redacted).startsWith('#cloud-config') && String(s.user_data_redacted).includes(REDACTED))).toBe(true);
  }, 180_000);

  it('a credential given to capture is cut wherever it appears, and so is a private key in any text', () => {
    const red = new Redactor(['AKAKAKAKAKAK0001']);
    expect(red.text('endpoint https://x/?ak=AKAKAKAKAKAK0001', 'source')).toBe(`endpoint https://x/?ak=${REDACTED}`);
    const cm = red.object({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' }, data: { k: '-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----' } } as never) as unknown as { data: { k: string } };
    expect(cm.data.k).toBe(REDACTED);
    expect(red.redactions.map((r) => r.what)).toEqual(['source: a credential value', 'ConfigMap n/c: a private key']);
  });
});

describe('bad input: named, and nothing half-loaded', () => {
  it('a truncated, a foreign or a newer-schema bundle is refused, naming the problem', async () => {
    const { text } = await captured();
    expect(() => parseBundle(text.slice(0, Math.floor(text.length * 0.6)), 'incident.json')).toThrow(/^incident\.json: the bundle is truncated \(\d+ bytes; JSON ends early/);
    expect(() => parseBundle('', 'x.json')).toThrow('x.json: the file is empty, not an hcs-testbed bundle');
    expect(() => parseBundle('apiVersion: v1\nkind: List\n', 'dump.yaml')).toThrow(/dump\.yaml: not JSON .*an hcs-testbed bundle is one JSON document/);
    expect(() => parseBundle(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [] }), 'list.json')).toThrow(/list\.json: field format: is undefined, expected "hcs-testbed-bundle": not an hcs-testbed bundle \(a Kubernetes List: capture --offline reads kubectl dumps\)/);
    expect(() => parseBundle(JSON.stringify({ format: 'mock-hcs-state', version: 1 }), 'state.json')).toThrow(/not an hcs-testbed bundle \(a mock-hcs state dump/);
    expect(() => parseBundle('[1,2]')).toThrow(/field \(document\): an hcs-testbed bundle is a JSON object, got an array/);
    const doc = JSON.parse(text) as Record<string, unknown>;
    expect(() => checkBundle({ ...doc, schemaVersion: 2 }, 'new.json')).toThrow('new.json: field schemaVersion: is 2: the bundle comes from a newer hcs-testbed (this one reads schema 1); upgrade hcs-testbed to read it');
    const cloud = doc.cloud as { volumes: Record<string, unknown>[] };
    expect(() => checkBundle({ ...doc, cloud: { ...cloud, volumes: [{ ...cloud.volumes[0], metadata: undefined }] } })).toThrow(/field cloud\.volumes\[0\]: expected an EVS volume/);
  }, 180_000);

  it('a bundle whose parts do not fit together starts no testbed, and a scenario from it does not load', async () => {
    const { bundle, text } = await captured();
    // A volume attached to a server ECS did not list: the cloud cannot hold it.
    const broken: Bundle = { ...bundle, cloud: { ...bundle.cloud, servers: bundle.cloud.servers.slice(1) } };
    await expect(createReplayTestbed(broken, { seed: 1 })).rejects.toThrow(BundleError);
    await expect(createReplayTestbed(broken, { seed: 1 })).rejects.toThrow(/field cloud: .*volume [0-9a-f-]{36}|field cloud: .*attached but not listed|ECS does not list/);
    const dir = mkdtempSync(join(tmpdir(), 'bundle-from-'));
    writeFileSync(join(dir, 'cut.json'), text.slice(0, 1000));
    writeFileSync(join(dir, 'replay.yaml'), 'name: replay\nfrom: cut.json\nsteps:\n  - advance: 1m\n');
    expect(() => loadScenario(join(dir, 'replay.yaml'))).toThrow(/replay\.yaml:2(:\d+)?: field from: .*cut\.json: the bundle is truncated/);
    writeFileSync(join(dir, 'ok.json'), serializeBundle(bundle));
    writeFileSync(join(dir, 'replay.yaml'), 'name: replay\nfrom: ok.json\nsteps:\n  - advance: 1m\n');
    expect(loadScenario(join(dir, 'replay.yaml')).from).toBe(join(dir, 'ok.json'));
  }, 180_000);

  it('EmbeddedStore.restore is all or nothing', () => {
    const s = new EmbeddedStore({ clock: new VirtualClock(0), rng: new SeededRng(1), clusterName: 't' });
    const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'n', uid: `u-${name}` } });
    expect(() => s.restore([cm('a'), cm('b'), cm('a')])).toThrow(/objects\[2\] \(ConfigMap n\/a\): already exists/);
    expect(s.listSync('ConfigMap')).toEqual([]);
    expect(() => s.restore([cm('a'), { apiVersion: 'x/v1', kind: 'Gadget', metadata: { name: 'g' } }])).toThrow(/objects\[1\] \(Gadget g\): kind Gadget is not served by this cluster/);
    expect(s.listSync('ConfigMap')).toEqual([]);
    s.restore([cm('a')]);
    expect(s.listSync('ConfigMap').map((o) => o.metadata.uid)).toEqual(['u-a']);
  });
});
