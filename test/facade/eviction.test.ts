/**
 * The pods/eviction subresource of the served workload cluster (src/world/facade/eviction.ts), with the
 * real kubectl: `kubectl drain` finds it in discovery and evicts through it (the ReplicaSet's
 * replacement lands on another Node, MD-4), and raw eviction requests get the apiserver's answers:
 * 201 Status Success, 404 for a missing Pod, 429 when the disruption budget (modelled by the Node
 * annotation testbed.hcs/drain-blocked) allows none, 400 for an Eviction naming another Pod;
 * dry run deletes nothing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node } from '../../src/product/api/core.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { startWorkerCluster, type FacadeBed } from './fixture.js';
import { raw } from './http.js';
import { haveKubectl, KubectlRunner } from './kubectl.js';

type Pod = KubeObject & { spec: { nodeName?: string }; status?: { phase?: string } };
const eviction = (name: string, extra: Record<string, unknown> = {}): string => JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'kube-system' }, ...extra });

describe.skipIf(!haveKubectl)('MD-4, OPS-1: pods/eviction on the workload cluster, with the real kubectl', () => {
  let bed: FacadeBed;
  let k: KubectlRunner;
  const store = () => bed.tb.env.workloads.store('cpaas-system', 'demo');
  const coredns = () => store().listSync<Pod>('Pod', { namespace: 'kube-system' }).filter((p) => p.metadata.name.startsWith('coredns-') && !p.metadata.deletionTimestamp);
  /** Raw requests go to the management address with the workload cluster's path prefix (kubectl uses the cluster's own address). */
  const base = () => '/clusters/cpaas-system/demo';

  beforeAll(async () => {
    bed = await startWorkerCluster({ seed: 11 });
    const r = await bed.tb.sim.runUntil(() => coredns().length === 2 && coredns().every((p) => p.status?.phase === 'Running'), 10 * 60_000);
    expect(r.ok).toBe(true);
    k = new KubectlRunner(bed.facade.kubeconfigPaths.workloads['cpaas-system/demo']!);
  }, 120_000);
  afterAll(async () => bed?.close());

  it('the workload cluster has its own address, so kubectl --raw (which drops the server URL\'s path) reaches it', async () => {
    const server = bed.facade.clusterUrl('cpaas-system', 'demo');
    expect(new URL(server).pathname).toBe('/');
    expect(new URL(server).port).not.toBe(new URL(bed.facade.url).port);
    const pods = JSON.parse(await k.ok('kubectl get --raw /api/v1/namespaces/kube-system/pods')) as { items: Pod[] };
    expect(pods.items.filter((p) => p.metadata.name.startsWith('coredns-'))).toHaveLength(2);
    const mgmt = JSON.parse(await new KubectlRunner(bed.facade.kubeconfigPaths.combined).ok('kubectl get --raw /api/v1/namespaces/kube-system/pods')) as { items: Pod[] };
    expect(mgmt.items.filter((p) => p.metadata.name.startsWith('coredns-'))).toHaveLength(0);
  });

  it('discovery lists pods/eviction as the apiserver does (policy/v1 Eviction, create)', async () => {
    const r = await raw(bed.facade, 'GET', `${base()}/api/v1`);
    expect((r.json.resources as { name: string }[]).find((x) => x.name === 'pods/eviction')).toEqual({ name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] });
  });

  it('kubectl drain --ignore-daemonsets evicts the Node\'s coredns Pod through the subresource; the replacement runs elsewhere', async () => {
    const node = coredns()[0]!.spec.nodeName!;
    const victims = coredns().filter((p) => p.spec.nodeName === node);
    const r = await k.run(`kubectl drain ${node} --ignore-daemonsets --timeout=30s`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`node/${node} cordoned`);
    for (const v of victims) {
      expect(r.stdout).toContain(`evicting pod kube-system/${v.metadata.name}\n`);
      expect(r.stdout).toContain(`pod/${v.metadata.name} evicted\n`);
      expect(store().getSync({ kind: 'Pod', namespace: 'kube-system', name: v.metadata.name })).toBeUndefined();
    }
    expect(r.stdout).toMatch(new RegExp(`node/${node} drained\n$`));
    expect(r.stderr).toMatch(/^Warning: ignoring DaemonSet-managed Pods: .*kube-system\/kube-proxy-/);
    expect(store().getSync<Node>({ kind: 'Node', name: node })?.spec?.unschedulable).toBe(true);
    const back = await bed.tb.sim.runUntil(() => coredns().length === 2 && coredns().every((p) => p.status?.phase === 'Running'), 10 * 60_000);
    expect(back.ok).toBe(true);
    expect(coredns().map((p) => p.spec.nodeName)).not.toContain(node);
    expect(await k.ok(`kubectl uncordon ${node}`)).toBe(`node/${node} uncordoned\n`);
  });

  it('a raw eviction: 201 with a Success Status; dry run deletes nothing', async () => {
    const p = coredns()[0]!;
    const path = `${base()}/api/v1/namespaces/kube-system/pods/${p.metadata.name}/eviction`;
    const dry = await raw(bed.facade, 'POST', `${path}?dryRun=All`, { body: eviction(p.metadata.name) });
    expect(dry.code).toBe(201);
    expect(store().getSync({ kind: 'Pod', namespace: 'kube-system', name: p.metadata.name })).toBeDefined();
    const ok = await raw(bed.facade, 'POST', path, { body: eviction(p.metadata.name) });
    expect(ok.code).toBe(201);
    expect(ok.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    expect(store().getSync({ kind: 'Pod', namespace: 'kube-system', name: p.metadata.name })).toBeUndefined();
    await bed.tb.sim.runUntil(() => coredns().length === 2 && coredns().every((x) => x.status?.phase === 'Running'), 10 * 60_000);
  });

  it('kubectl create --raw: 404 for a missing Pod, 429 when the disruption budget allows none, 400 for another Pod\'s name', async () => {
    writeFileSync(join(k.cwd, 'nope.json'), eviction('nope'));
    expect(await k.fails('kubectl create --raw /api/v1/namespaces/kube-system/pods/nope/eviction -f nope.json')).toBe('Error from server (NotFound): pods "nope" not found\n');

    const p = coredns()[0]!;
    expect(await k.ok(`kubectl annotate node ${p.spec.nodeName} testbed.hcs/drain-blocked=true`)).toBe(`node/${p.spec.nodeName} annotated\n`);
    writeFileSync(join(k.cwd, 'ev.json'), eviction(p.metadata.name));
    const blocked = await k.fails(`kubectl create --raw /api/v1/namespaces/kube-system/pods/${p.metadata.name}/eviction -f ev.json`);
    expect(blocked).toBe("Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget.\n");
    const r = await raw(bed.facade, 'POST', `${base()}/api/v1/namespaces/kube-system/pods/${p.metadata.name}/eviction`, { body: eviction(p.metadata.name) });
    expect(r.code).toBe(429);
    expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'TooManyRequests', code: 429, details: { causes: [{ reason: 'DisruptionBudget', message: expect.stringContaining('MD-4') }] } });
    expect(store().getSync({ kind: 'Pod', namespace: 'kube-system', name: p.metadata.name })).toBeDefined();
    await k.ok(`kubectl annotate node ${p.spec.nodeName} testbed.hcs/drain-blocked-`);

    const other = await raw(bed.facade, 'POST', `${base()}/api/v1/namespaces/kube-system/pods/${p.metadata.name}/eviction`, { body: eviction('someone-else') });
    expect(other.code).toBe(400);
    expect(other.json.message).toBe('name in URL does not match name in Eviction object');
    const notEviction = await raw(bed.facade, 'POST', `${base()}/api/v1/namespaces/kube-system/pods/${p.metadata.name}/eviction`, { body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: p.metadata.name } }) });
    expect(notEviction.code).toBe(400);
    expect(store().getSync({ kind: 'Pod', namespace: 'kube-system', name: p.metadata.name })).toBeDefined();
    const get = await raw(bed.facade, 'GET', `${base()}/api/v1/namespaces/kube-system/pods/${p.metadata.name}/eviction`);
    expect(get.code).toBe(405);
  });
});
