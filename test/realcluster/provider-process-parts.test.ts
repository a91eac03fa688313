/**
 * The parts of `run --provider external` that do not need an apiserver
 * (runs everywhere): the cloud front forwards signed requests byte for byte
 * to the current scenario's mock-hcs over HTTPS and answers 503 between
 * scenarios (HCS-5: the signature still verifies through it); the outside
 * provider's Kubernetes Events enter the run's event log with their rules
 * (from the annotation, else cited in the message); its log is read from
 * where it stood when the scenario started (OPS-3), and its decisions (the
 * lines naming an event) become the events the in-process provider records;
 * the info files hold what a provider is started with.
 */
import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMockHcs, defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { RealClock } from '../../src/core/clock.js';
import { EventLog, type EventInput } from '../../src/core/events.js';
import { SeededRng } from '../../src/core/rng.js';
import { HcsClient } from '../../src/product/cloud/index.js';
import { EmbeddedStore } from '../../src/core/kube/embedded-store.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { CloudFront, writeExternalInfo } from '../../src/harness/realcluster/external.js';
import { ANN_EVENT_RULES, cloudTransport, followProviderLog, mirrorProviderEvents, namespaced, readProviderLog } from '../../src/product/provider/process.js';
import { Reporter } from '../../src/product/provider/util.js';
import { ControllerLogs, type ControllerContext } from '../../src/core/runtime/context.js';

const dir = mkdtempSync(join(tmpdir(), 'hcs-provider-parts-'));
const fronts: CloudFront[] = [];
afterAll(async () => {
  for (const f of fronts) await f.close();
});

describe('run --provider external: the cloud front, Events, the log (HCS-5, OPS-3)', () => {
  it('forwards signed HTTPS requests to the attached mock-hcs, 503 when none is attached', async () => {
    const front = await CloudFront.start();
    fronts.push(front);
    const clock = new RealClock();
    const p = defaultCloudConfig().projects[0]!;
    const client = new HcsClient({ transport: cloudTransport(front.url, front.caPem), ak: p.ak, sk: p.sk, projectId: p.id, clock });
    await expect(client.listServers()).rejects.toThrow(/HTTP 503 APIGW\.0503: no scenario is running/);
    const cloud = await createMockHcs({ clock, rng: new SeededRng(1) });
    front.attach(cloud);
    expect(await client.listServers()).toEqual([]);
    const bad = new HcsClient({ transport: cloudTransport(front.url, front.caPem), ak: p.ak, sk: 'wrong', projectId: p.id, clock });
    await expect(bad.listServers()).rejects.toThrow(/HTTP 401 APIGW\.0301/);
    front.detach(cloud);
    await expect(client.listServers()).rejects.toThrow(/HTTP 503/);
    expect(front.requestCount()).toBe(2);
    await cloud.close();
    // Without the front's CA the TLS handshake fails: the provider's --ca-file is needed.
    const untrusted = new HcsClient({ transport: cloudTransport(front.url), ak: p.ak, sk: p.sk, projectId: p.id, clock });
    await expect(untrusted.listServers()).rejects.toThrow(/certificate/);
  });

  it('writes provider.env and provider.json with the cloud, credentials and kubeconfig', async () => {
    const front = await CloudFront.start();
    fronts.push(front);
    const files = writeExternalInfo(join(dir, 'ext'), front, { kubeconfig: '/k/config', context: 'c1' }, { healthPort: 23456 });
    const env = readFileSync(files.env, 'utf8');
    expect(env).toContain("HCS_HEALTH_ADDR='127.0.0.1:23456'");
    expect(env).toContain(`HCS_STOP_FILE='${join(dir, 'ext', 'stop')}'`);
    expect(readFileSync(files.ready, 'utf8')).toBe(`${files.env}\n`);
    expect(env).toContain(`HCS_CLOUD_URL='${front.url}'`);
    expect(env).toContain(`HCS_AK='${defaultCloudConfig().projects[0]!.ak}'`);
    expect(env).toContain("KUBECONFIG='/k/config'");
    expect(env).toContain("KUBE_CONTEXT='c1'");
    expect(statSync(files.env).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(files.json, 'utf8'))).toMatchObject({ cloudUrl: front.url, kubeconfig: '/k/config', namespace: 'cpaas-system' });
    expect(readFileSync(files.info.caFile, 'utf8')).toBe(front.caPem);
  });

  it("mirrors the outside provider's Kubernetes Events with their rules, and nobody else's", async () => {
    const clock = new RealClock();
    const store = new EmbeddedStore({ clock, rng: new SeededRng(2), clusterName: 'management' });
    const got: EventInput[] = [];
    mirrorProviderEvents(store, (e) => got.push(e));
    const ev = (name: string, component: string, reason: string, message: string, annotations?: Record<string, string>): KubeObject =>
      ({ apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'cpaas-system', ...(annotations ? { annotations } : {}) }, involvedObject: { kind: 'HCSMachine', name: 'm1', namespace: 'cpaas-system' }, reason, message, type: 'Warning', source: { component } }) as unknown as KubeObject;
    await store.create(ev('a', 'hcs-controller-manager', 'MaxSurgeTookAnotherEntry', 'took another entry', { [ANN_EVENT_RULES]: 'MD-3,DISK-3' }));
    await store.create(ev('b', 'hcs-controller-manager', 'NoFreePoolEntry', 'MD-3: no free entry (POOL-2)'));
    await store.create(ev('c', 'capi-controller-manager', 'Scaled', 'not the provider'));
    expect(got).toEqual([
      expect.objectContaining({ source: 'provider', type: 'event.MaxSurgeTookAnotherEntry', rules: ['MD-3', 'DISK-3'], message: 'HCSMachine cpaas-system/m1: MaxSurgeTookAnotherEntry: took another entry' }),
      expect.objectContaining({ source: 'provider', type: 'event.NoFreePoolEntry', rules: ['MD-3', 'POOL-2'] }),
    ]);
    // The events check reads them like the in-process provider's.
    const log = new EventLog(clock);
    for (const e of got) log.record(e);
    expect(log.all().filter((e) => e.type === 'event.NoFreePoolEntry' && e.rules?.includes('MD-3'))).toHaveLength(1);
  });

  it('reads the provider log from where it stood when the scenario started', () => {
    const file = join(dir, 'provider.log');
    writeFileSync(file, '{"msg":"from the previous scenario"}\n');
    const read = readProviderLog(file);
    expect(read()).toBe('');
    appendFileSync(file, '{"msg":"bound to pool entry demo-worker-4"}\n');
    expect(read()).toBe('{"msg":"bound to pool entry demo-worker-4"}');
    expect(readProviderLog(join(dir, 'absent.log'))()).toBe('');
  });

  it("rebuilds the provider's events from its log lines, as the in-process provider records them (POOL-4)", () => {
    const file = join(dir, 'decisions.log');
    writeFileSync(file, '{"t":"x","level":"info","controller":"hcsmachine","msg":"from the previous scenario","event":"hcsmachine.entry-bound"}\n');
    const clock = new RealClock();
    const logs = new ControllerLogs(clock);
    const inProcess = new EventLog(clock);
    // The provider's Reporter with a log and an event log (the in-process provider's pair).
    const rep = new Reporter({ logs, events: inProcess } as unknown as ControllerContext, 'hcsmachine');
    rep.info('hcsmachine.entry-bound', 'HCSMachine cpaas-system/w-1 bound to pool entry demo-worker-1 of pool', { machine: 'cpaas-system/w-1', pool: 'pool', hostname: 'demo-worker-1' }, ['POOL-4']);
    rep.error('hcsmachine.duplicate-servers', 'HCSMachine cpaas-system/w-1: 2 servers named w-1', { machine: 'cpaas-system/w-1' });
    rep.info('hcsmachine.entry-released', 'HCSMachine cpaas-system/w-1: released pool entry demo-worker-1 of pool', { machine: 'cpaas-system/w-1', pool: 'pool', hostnames: ['demo-worker-1'] }, ['POOL-4']);
    logs.logger('hcs-controller-manager', 'manager').info('informers synced; reconciling', { health: 'http://127.0.0.1:1' });
    const text = logs.text('hcs-controller-manager') + '\n';
    const got: EventInput[] = [];
    const follow = followProviderLog(file, (e) => got.push(e));
    // Written in two pieces, the second line cut in the middle: only complete lines count.
    const cut = text.indexOf('\n') + 20;
    appendFileSync(file, text.slice(0, cut));
    follow.drain();
    expect(got.map((e) => e.type)).toEqual(['hcsmachine.entry-bound']);
    appendFileSync(file, text.slice(cut) + 'not json\n');
    follow.drain();
    follow.drain();
    const want = inProcess.all().map(({ source, type, message, data, rules }) => ({ source, type, message, data, ...(rules ? { rules } : {}) }));
    expect(want).toHaveLength(3);
    expect(got).toEqual(want);
    // A missing file is no event, no error.
    const none = followProviderLog(join(dir, 'absent-decisions.log'), (e) => got.push(e));
    none.drain();
    expect(got).toHaveLength(3);
  });

  it('--namespace: lists and watches see only that namespace (a namespaced cache); gets and writes name their own', async () => {
    const store = new EmbeddedStore({ clock: new RealClock(), rng: new SeededRng(3), clusterName: 'management' });
    const cm = (ns: string, name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: {} }) as unknown as KubeObject;
    for (const ns of ['cpaas-system', 'other']) await store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } as unknown as KubeObject);
    const scoped = namespaced(store, 'cpaas-system');
    const seen: string[] = [];
    scoped.watch('ConfigMap', (e) => seen.push(`${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`));
    await store.create(cm('cpaas-system', 'a'));
    await store.create(cm('other', 'b'));
    expect((await scoped.list('ConfigMap')).map((o) => o.metadata.name)).toEqual(['a']);
    expect((await scoped.list('ConfigMap', { namespace: 'other' })).map((o) => o.metadata.name)).toEqual(['b']);
    expect(seen).toEqual(['ADDED cpaas-system/a']);
    expect((await scoped.get({ kind: 'ConfigMap', namespace: 'other', name: 'b' }))?.metadata.name).toBe('b');
  });
});
