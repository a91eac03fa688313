/**
 * The workload cluster's etcd as Cluster API's KubeadmControlPlane v1.10 reaches it
 * (src/world/facade/portforward/etcd-forward.ts; KCP-2 scale up/down and rollouts wait on its member
 * health): an outside Go client built on client-go's transport/spdy and
 * go.etcd.io/etcd/client/v3 (test/facade/etcd-go, the same modules and versions the
 * upstream managers build with) port-forwards to `kube-system/etcd-<node>:2379` through
 * the served workload API, verifies the member's serving certificate against the etcd
 * CA, and calls Status, MemberList, AlarmList, MoveLeader and MemberRemove. Then
 * the testbed's etcd fault (KCP-5, src/world/capi/etcd-faults.ts): down members refuse the
 * forward, the member left without quorum reports "etcdserver: no leader" in its Status
 * and times out a linearizable MemberList, as etcd v3.5 does, which is what makes KCP
 * v1.10.10 mark every Machine's EtcdMemberHealthy False; the forced recovery brings the
 * down members back as new members; what etcd decided survives a facade restart.
 * Skips when Go is missing. The Go build reuses the module download of tools/capi (GOFLAGS=-mod=readonly).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { EventLog } from '../../src/core/events.js';
import { SeededRng } from '../../src/core/rng.js';
import { startFacade, type Facade } from '../../src/world/facade/index.js';
import { EmbeddedStore } from '../../src/core/kube/embedded-store.js';
import { generateCASync, issueCertificateSync, type CertKeyPair } from '../../src/core/pki/index.js';
import { EmbeddedWorkloadClusters } from '../../src/world/embedded.js';
import { buildGoClient, goProblem, runGoClient } from './go-clients.js';

const skip = goProblem(['k8s.io/client-go@v0.32.3', 'go.etcd.io/etcd/client/v3@v3.5.20']);
const NODES = ['demo-cp-1', 'demo-cp-2', 'demo-cp-3'];

interface Out {
  status?: { leader: string; version: string; errors: string[] | null; member: string; cluster: string; raftTerm: number };
  members?: { id: string; name: string; peerURLs: string[]; clientURLs: string[]; isLearner: boolean }[];
  alarms?: number;
  leaderAfterMove?: string;
  membersAfterRemove?: { id: string; name: string }[];
  error?: { stage: string; message: string };
}

describe.skipIf(!!skip)(`KCP-2: etcd members through pods/etcd-<node>/portforward, with client-go and etcd clientv3${skip ? ` [skipped: ${skip}]` : ''}`, () => {
  let dir: string;
  let bin: string;
  let facade: Facade;
  let ca: CertKeyPair;
  let files: { cert: string; key: string; ca: string; otherCert: string; otherKey: string };
  let workloads: EmbeddedWorkloadClusters;
  let clock: VirtualClock;

  const client = async (args: string[], cert = files.cert, key = files.key): Promise<Out> => {
    const kc = facade.kubeconfigPaths.workloads['cpaas-system/demo']!;
    return runGoClient<Out>(bin, ['-kubeconfig', kc, '-cert', cert, '-key', key, '-ca', files.ca, ...args]);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcd-go-'));
    bin = join(dir, 'etcd-go');
    await buildGoClient('.', bin, 'etcd-go (client-go + etcd clientv3)');

    clock = new VirtualClock(Date.parse('2026-01-01T00:00:00Z'));
    const rng = new SeededRng(7);
    workloads = new EmbeddedWorkloadClusters(clock, rng.fork('wl'), new EventLog(clock));
    const store = workloads.store('cpaas-system', 'demo');
    for (const [i, name] of NODES.entries()) {
      await store.create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'node-role.kubernetes.io/control-plane': '' } } });
      const n = store.getSync<{ apiVersion: string; kind: string; metadata: { name: string }; status?: unknown }>({ kind: 'Node', name })!;
      await store.updateStatus({ ...n, status: { addresses: [{ type: 'InternalIP', address: `192.168.1.${11 + i}` }], conditions: [{ type: 'Ready', status: 'True' }] } });
      await store.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `etcd-${name}`, namespace: 'kube-system' }, spec: { nodeName: name, containers: [{ name: 'etcd', image: 'registry.k8s.io/etcd:3.5.15-0' }] } });
      clock.advanceBy(60_000);
    }
    ca = generateCASync(rng.fork('ca'), Date.now(), 'etcd-ca');
    const other = generateCASync(rng.fork('other'), Date.now(), 'etcd-ca');
    const leaf = issueCertificateSync(ca, { commonName: 'cluster-api.x-k8s.io' }, rng.fork('leaf'), Date.now());
    const stranger = issueCertificateSync(other, { commonName: 'cluster-api.x-k8s.io' }, rng.fork('stranger'), Date.now());
    files = { cert: join(dir, 'c.pem'), key: join(dir, 'k.pem'), ca: join(dir, 'ca.pem'), otherCert: join(dir, 'oc.pem'), otherKey: join(dir, 'ok.pem') };
    writeFileSync(files.cert, leaf.certPem);
    writeFileSync(files.key, leaf.keyPem);
    writeFileSync(files.ca, ca.certPem);
    writeFileSync(files.otherCert, stranger.certPem);
    writeFileSync(files.otherKey, stranger.keyPem);
    facade = await startFacade({
      mgmt: new EmbeddedStore({ clock, rng: rng.fork('facade'), clusterName: 'unused' }),
      workloads,
      clock,
      etcdCa: async (ns, cluster) => (ns === 'cpaas-system' && cluster === 'demo' ? ca : undefined),
    });
  }, 600_000);

  afterAll(async () => {
    await facade?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('Status and MemberList: one started member per control plane Node, named after it; the first registered leads; no alarms', async () => {
    const out = await client(['-pod', 'etcd-demo-cp-2']);
    expect(out.error).toBeUndefined();
    expect(out.members!.map((m) => m.name)).toEqual(NODES);
    expect(out.members!.every((m) => !m.isLearner && m.clientURLs.length === 1 && m.peerURLs[0]!.endsWith(':2380'))).toBe(true);
    expect(out.members![1]!.clientURLs).toEqual(['https://192.168.1.12:2379']);
    expect(out.status!.version).toBe('3.5.15');
    expect(out.status!.errors ?? []).toEqual([]);
    expect(out.status!.member).toBe(out.members![1]!.id); // the member asked is the one on demo-cp-2
    expect(out.status!.leader).toBe(out.members![0]!.id);
    expect(out.alarms).toBe(0);
  }, 120_000);

  it('MoveLeader asked of the leader moves it; MemberRemove drops the member, whose pod then refuses the forward', async () => {
    const before = await client(['-pod', 'etcd-demo-cp-1']);
    const id3 = before.members!.find((m) => m.name === 'demo-cp-3')!.id;
    const moved = await client(['-pod', 'etcd-demo-cp-1', '-move-leader', 'demo-cp-2']);
    expect(moved.error).toBeUndefined();
    expect(moved.leaderAfterMove).toBe(before.members!.find((m) => m.name === 'demo-cp-2')!.id);
    // etcd answers MoveLeader only on the leader (now demo-cp-2).
    const notLeader = await client(['-pod', 'etcd-demo-cp-1', '-move-leader', 'demo-cp-3']);
    expect(notLeader.error?.stage).toBe('moveleader');
    expect(notLeader.error?.message).toContain('not leader');
    const removed = await client(['-pod', 'etcd-demo-cp-2', '-remove', 'demo-cp-3']);
    expect(removed.error).toBeUndefined();
    expect(removed.membersAfterRemove!.map((m) => m.name)).toEqual(['demo-cp-1', 'demo-cp-2']);
    expect(removed.membersAfterRemove!.map((m) => m.id)).not.toContain(id3);
    const gone = await client(['-pod', 'etcd-demo-cp-3', '-dial-timeout', '3s']);
    expect(gone.error?.stage).toBe('connect');
  }, 180_000);

  it('KCP-5: without quorum the member left reports "etcdserver: no leader" (Status) and times out a linearizable MemberList; down members refuse the forward; the forced recovery re-creates them', async () => {
    // After the test above: members demo-cp-1 and demo-cp-2 (demo-cp-3 was removed).
    const etcd = facade.etcd('cpaas-system', 'demo')!;
    const before = await client(['-pod', 'etcd-demo-cp-1']);
    expect(before.members!.map((m) => m.name)).toEqual(['demo-cp-1', 'demo-cp-2']);
    etcd.setDown(['demo-cp-2']);
    // The down member's pod: the forward is refused (its etcd does not answer).
    const gone = await client(['-pod', 'etcd-demo-cp-2', '-dial-timeout', '3s']);
    expect(gone.error?.stage).toBe('connect');
    // 1 of 2 up: no quorum. etcdserver/api/v3rpc/maintenance.go Status: leader 0, errors [ErrNoLeader].
    const lost = await client(['-pod', 'etcd-demo-cp-1']);
    expect(lost.status!.leader).toBe('0');
    expect(lost.status!.errors).toEqual(['etcdserver: no leader']);
    // clientv3's MemberList is linearizable (cluster.go): it needs quorum (rpctypes ErrGRPCTimeout).
    expect(lost.error?.stage).toBe('memberlist');
    expect(lost.error?.message).toContain('etcdserver: request timed out');
    // Forced recovery: the down member comes back as a new member (new ID); quorum and a leader again.
    expect(etcd.forceRecover()).toEqual(['demo-cp-2']);
    const back = await client(['-pod', 'etcd-demo-cp-2']);
    expect(back.error).toBeUndefined();
    expect(back.status!.errors ?? []).toEqual([]);
    expect(back.members!.map((m) => m.name)).toEqual(['demo-cp-1', 'demo-cp-2']);
    expect(back.members![1]!.id).not.toBe(before.members![1]!.id);
    expect(back.members![0]!.id).toBe(before.members![0]!.id);
    expect(back.alarms).toBe(0);
  }, 180_000);

  it('what etcd decided (removed and re-created members, the leader) survives a facade restart on the same workload clusters', async () => {
    const before = await client(['-pod', 'etcd-demo-cp-1']);
    await facade.close();
    facade = await startFacade({
      mgmt: new EmbeddedStore({ clock, rng: new SeededRng(8), clusterName: 'unused' }),
      workloads,
      clock,
      etcdCa: async (ns, cluster) => (ns === 'cpaas-system' && cluster === 'demo' ? ca : undefined),
    });
    const after = await client(['-pod', 'etcd-demo-cp-1']);
    expect(after.error).toBeUndefined();
    expect(after.members).toEqual(before.members);
    expect(after.status!.leader).toBe(before.status!.leader);
    expect(after.status!.raftTerm).toBe(before.status!.raftTerm);
  }, 180_000);

  it('a client certificate of another CA is refused in the TLS handshake', async () => {
    const out = await client(['-pod', 'etcd-demo-cp-1', '-dial-timeout', '3s'], files.otherCert, files.otherKey);
    expect(out.error?.stage).toBe('connect');
    expect(out.status).toBeUndefined();
  }, 120_000);

  it('the upgrade asks the API server: a pod that does not exist is 404, no credentials 401', async () => {
    const base = facade.clusterUrl('cpaas-system', 'demo');
    const ask = (path: string, headers: Record<string, string>): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = request(`${base}${path}`, { method: 'POST', ca: facade.caPem, headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'portforward.k8s.io', ...headers } });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('upgrade', (res, socket) => {
          socket.destroy();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await ask('/api/v1/namespaces/kube-system/pods/etcd-nope/portforward', facade.authHeaders())).toBe(404);
    expect(await ask('/api/v1/namespaces/kube-system/pods/etcd-demo-cp-1/portforward', {})).toBe(401);
    expect(await ask('/api/v1/namespaces/kube-system/pods/etcd-demo-cp-1/portforward', facade.authHeaders())).toBe(101);
  }, 60_000);
});
