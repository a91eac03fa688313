/**
 * The admission webhook's handlers (src/harness/realcluster/apiserver/webhook.ts) without an
 * apiserver: AdmissionReview v1 in through fastify inject, and the verdicts
 * compared with the embedded store's admission (the same ADMISSION table).
 * Runs everywhere; test/realcluster/crds.test.ts checks the same through a
 * real kube-apiserver when its binaries are built.
 */
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMISSION } from '../../src/world/admission.js';
import { statusToError } from '../../src/core/kube/client-node.js';
import { KubeApiError } from '../../src/core/kube/errors.js';
import { applyJsonPatch } from '../../src/core/kube/patch.js';
import { resourceForKind } from '../../src/core/kube/resources.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import {
  jsonPatchDiff,
  startAdmissionWebhook,
  VALIDATING_WEBHOOK,
  webhookConfigurations,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionWebhook,
  type Operation,
} from '../../src/harness/realcluster/apiserver/webhook.js';
import { contractStore } from '../kube/contract.js';

const NS = 'wh';
const IP = '192.168.32.10';
const pool = (name: string, configs: unknown[]): KubeObject => ({
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'HCSMachineConfigPool',
  metadata: { name, namespace: NS },
  spec: { configs },
});
const template = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'HCSMachineTemplate',
  metadata: { name, namespace: NS },
  spec: { template: { spec: { imageName: 'i', flavorName: 'f', availabilityZone: 'az1', ...extra } } },
});
const md = (name: string, strategy?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'MachineDeployment',
  metadata: { name, namespace: NS },
  spec: { clusterName: 'demo', replicas: 1, ...(strategy ? { strategy } : {}), template: { spec: { clusterName: 'demo', bootstrap: { dataSecretName: 'x' }, infrastructureRef: { name: 't' } } } },
});

let uid = 0;
function request(operation: Operation, object: KubeObject | null, oldObject?: KubeObject, subResource?: string): AdmissionRequest {
  const kind = (object ?? oldObject)!.kind;
  const info = resourceForKind(kind);
  return {
    uid: `uid-${++uid}`,
    kind: { group: info.group, version: info.version, kind },
    resource: { group: info.group, version: info.version, resource: info.plural },
    ...(subResource ? { subResource } : {}),
    name: (object ?? oldObject)!.metadata.name,
    namespace: NS,
    operation,
    object,
    oldObject: oldObject ?? null,
  };
}

describe('admission webhook handlers (fastify inject, no apiserver)', () => {
  let wh: AdmissionWebhook;
  beforeAll(async () => {
    wh = await startAdmissionWebhook({ port: 0 });
  });
  afterAll(async () => {
    await wh.close();
  });

  async function review(path: 'validate' | 'mutate', req: AdmissionRequest): Promise<AdmissionResponse> {
    const r = await wh.app.inject({ method: 'POST', url: `/${path}`, payload: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req } });
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json<{ apiVersion: string; kind: string; response: AdmissionResponse }>();
    expect([body.apiVersion, body.kind]).toEqual(['admission.k8s.io/v1', 'AdmissionReview']);
    expect(body.response.uid).toBe(req.uid);
    return body.response;
  }

  /** What the kube-apiserver (v1.33) returns to the client for a denial: the webhook's Status, message prefixed. */
  function asApiserverReturnsIt(res: AdmissionResponse): KubeApiError {
    const s = res.status!;
    return statusToError(s.code, { kind: 'Status', apiVersion: 'v1', metadata: {}, ...s, message: `admission webhook "${VALIDATING_WEBHOOK}" denied the request: ${s.message}` });
  }

  const INVALID: [string, KubeObject][] = [
    ['POOL-1 + NET-6 + NET-7', pool('p', [{ hostname: 'w1', networks: [{ subnetName: 's', ipAddress: IP, mtu: 1400 }] }, { hostname: 'w1', networks: [{ subnetName: 's' }] }])],
    ['DISK-1', pool('d', [{ hostname: 'w1', networks: [{ subnetName: 's', ipAddress: IP }], persistentDisks: [{ slot: 0, type: 'SSD', mountPath: 'rel', format: 'xfs' }] }])],
    ['TPL-1 + TPL-3', template('t', { imageName: '', dataVolumes: [{ size: 1 }] })],
    ['MD-1', md('m', { type: 'RollingUpdate', rollingUpdate: { maxSurge: 'lots' } })],
  ];

  it.each(INVALID)('%s: denied with 422 Invalid; statusToError recovers the same (rule, field) causes as the embedded store', async (_name, obj) => {
    const res = await review('validate', request('CREATE', obj));
    expect(res.allowed).toBe(false);
    expect(res.status).toMatchObject({ status: 'Failure', code: 422, reason: 'Invalid', details: { name: obj.metadata.name, kind: obj.kind } });
    for (const c of res.status!.details!.causes!) expect(c.message).toMatch(/^[A-Z]+-\d+: /);
    let embedded: KubeApiError | undefined;
    try {
      await contractStore().create(structuredClone(obj), { dryRun: true });
    } catch (e) {
      embedded = e as KubeApiError;
    }
    expect(embedded).toBeInstanceOf(KubeApiError);
    const remote = asApiserverReturnsIt(res);
    expect([remote.reason, remote.code]).toEqual(['Invalid', 422]);
    expect(remote.causes).toEqual(embedded!.causes);
  });

  it('valid objects are allowed without a status', async () => {
    for (const obj of [pool('ok', [{ hostname: 'w1', networks: [{ subnetName: 's', ipAddress: IP }] }]), template('ok'), md('ok', { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } })]) {
      expect(await review('validate', request('CREATE', obj))).toEqual({ uid: expect.any(String), allowed: true });
    }
  });

  it('UPDATE passes oldObject to the validators (TPL-5, DISK-4)', async () => {
    const old = template('t5');
    const edited = template('t5', { imageName: 'i2' });
    const res = await review('validate', request('UPDATE', edited, old));
    expect(res.status?.details?.causes).toEqual([expect.objectContaining({ field: 'spec.template.spec', message: expect.stringMatching(/^TPL-5: Forbidden/) })]);
    expect((await review('validate', request('UPDATE', old, old))).allowed).toBe(true);
    const disk = { slot: 0, size: 10, type: 'SSD', mountPath: '/data0', format: 'xfs' };
    const oldPool = { ...pool('d4', [{ hostname: 'w1', networks: [{ subnetName: 's', ipAddress: IP }], persistentDisks: [disk] }]), status: { entries: [{ hostname: 'w1', machine: 'm', acceptedDisks: [disk] }] } };
    const resized = structuredClone(oldPool);
    (resized.spec as { configs: { persistentDisks: { size: number }[] }[] }).configs[0]!.persistentDisks[0]!.size = 20;
    const d4 = await review('validate', request('UPDATE', resized, oldPool));
    expect(asApiserverReturnsIt(d4).causes).toContainEqual(expect.objectContaining({ rule: 'DISK-4', field: 'spec.configs[0].persistentDisks[0].size' }));
    // A CREATE carries no old object: DISK-4 does not apply.
    expect((await review('validate', request('CREATE', resized))).allowed).toBe(true);
  });

  it('DELETE, CONNECT, status writes and kinds without rules are allowed as they are', async () => {
    const bad = pool('bad', [{ hostname: 'W_1' }]);
    expect((await review('validate', request('DELETE', null, bad))).allowed).toBe(true);
    expect((await review('validate', request('CONNECT', bad))).allowed).toBe(true);
    expect((await review('validate', request('UPDATE', bad, bad, 'status'))).allowed).toBe(true);
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: NS } } as KubeObject;
    expect(await review('validate', request('CREATE', secret))).toEqual({ uid: expect.any(String), allowed: true });
    expect(await review('mutate', request('CREATE', secret))).toEqual({ uid: expect.any(String), allowed: true });
  });

  it('/mutate answers a JSONPatch giving the embedded store’s defaulted object; nothing to default, no patch', async () => {
    for (const obj of [md('d'), md('p', { rollingUpdate: { maxUnavailable: 2 } })]) {
      const res = await review('mutate', request('CREATE', obj));
      expect(res).toMatchObject({ allowed: true, patchType: 'JSONPatch' });
      const ops: unknown = JSON.parse(Buffer.from(res.patch!, 'base64').toString('utf8'));
      const stored = await contractStore().create(structuredClone(obj), { dryRun: true });
      expect((applyJsonPatch(structuredClone(obj), ops) as KubeObject).spec).toEqual(stored.spec);
    }
    const onDelete = md('o', { type: 'OnDelete' });
    expect(await review('mutate', request('CREATE', onDelete))).toEqual({ uid: expect.any(String), allowed: true });
    expect((await contractStore().create(structuredClone(onDelete), { dryRun: true })).spec).toEqual(onDelete.spec);
    const full = md('f', { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    expect(await review('mutate', request('UPDATE', full, full))).toEqual({ uid: expect.any(String), allowed: true });
    // Kinds without defaulters: allowed untouched.
    expect(await review('mutate', request('CREATE', template('t')))).toEqual({ uid: expect.any(String), allowed: true });
  });

  it('anything but an AdmissionReview v1 is a 400 (and is not counted as served)', async () => {
    const before = { ...wh.served };
    for (const payload of [{}, { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: request('CREATE', md('x')) }, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }]) {
      expect((await wh.app.inject({ method: 'POST', url: '/validate', payload })).statusCode).toBe(400);
    }
    expect(wh.served).toEqual(before);
    expect(wh.served.validate).toBeGreaterThan(0);
  });

  it('serves HTTPS with a certificate for the host that its caBundle verifies', async () => {
    expect(wh.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = Buffer.from(wh.caBundle, 'base64').toString('utf8');
    expect(ca).toContain('BEGIN CERTIFICATE');
    const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: request('CREATE', template('tls', { serverId: 'x' })) });
    const text = await new Promise<string>((resolve, reject) => {
      const req = https.request(`${wh.url}/validate`, { method: 'POST', ca, headers: { 'Content-Type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(text).toContain('TPL-4');
  });

  it('the configurations name exactly the kinds of the ADMISSION table (CREATE/UPDATE, v1, sideEffects None, Fail)', () => {
    const { validating, mutating } = webhookConfigurations({ url: 'https://h:1', caBundle: 'Q0E=' });
    const kinds = (o: KubeObject): string[] => {
      const w = (o as unknown as { webhooks: { rules: { apiGroups: string[]; resources: string[]; operations: string[] }[] }[] }).webhooks;
      expect(w).toHaveLength(1);
      return w[0]!.rules.flatMap((r) => {
        expect(r.operations).toEqual(['CREATE', 'UPDATE']);
        return r.resources.map((p) => `${p}.${r.apiGroups[0]}`);
      }).sort();
    };
    const want = (which: 'validators' | 'defaulters'): string[] =>
      ADMISSION.filter((a) => a[which].length > 0).map((a) => `${resourceForKind(a.kind).plural}.${resourceForKind(a.kind).group}`).sort();
    expect(kinds(validating)).toEqual(want('validators'));
    expect(kinds(mutating)).toEqual(want('defaulters'));
    expect(validating).toMatchObject({ webhooks: [{ clientConfig: { url: 'https://h:1/validate', caBundle: 'Q0E=' }, sideEffects: 'None', admissionReviewVersions: ['v1'], failurePolicy: 'Fail' }] });
    expect(mutating).toMatchObject({ webhooks: [{ clientConfig: { url: 'https://h:1/mutate' } }] });
  });

  it('jsonPatchDiff escapes keys and replaces changed arrays', () => {
    const from = { metadata: { annotations: { 'a/b~c': '1' } }, list: [1, 2], gone: true };
    const to = { metadata: { annotations: { 'a/b~c': '2', x: 'y' } }, list: [1, 3] };
    const ops = jsonPatchDiff(from, to);
    expect(ops).toEqual([
      { op: 'remove', path: '/gone' },
      { op: 'replace', path: '/metadata/annotations/a~1b~0c', value: '2' },
      { op: 'add', path: '/metadata/annotations/x', value: 'y' },
      { op: 'replace', path: '/list', value: [1, 3] },
    ]);
    expect(applyJsonPatch(structuredClone(from), ops)).toEqual(to);
  });
});
