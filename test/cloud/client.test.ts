import './promise-with-resolvers.js';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SeededRng, VirtualClock } from '../../src/core/index.js';
import { createMockHcs, defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { fetchTransport, HcsApiError, HcsClient, injectTransport, issueToken, sdkDate, signRequest } from '../../src/product/cloud/index.js';
import { AKSKSigner } from '@huaweicloud/huaweicloud-sdk-core/auth/AKSKSigner.js';

const cfg = defaultCloudConfig();
const p0 = cfg.projects[0]!;

describe('signRequest', () => {
  it('produces the same signature as the official SDK signer', () => {
    const now = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
    const body = JSON.stringify({ server: { name: 'x y', count: 1 } });
    const ours = signRequest(
      { method: 'POST', path: '/v1/p/cloudservers/detail?b=2&a=x%20y&a=%21', headers: { 'content-type': 'application/json', 'X-Project-Id': 'p' }, body },
      { ak: 'AK', sk: 'SK' },
      'example.com:8443',
      now,
    );
    const sdkHeaders = AKSKSigner.sign(
      {
        endpoint: 'http://example.com:8443/v1/p/cloudservers/detail',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Project-Id': 'p', 'X-Sdk-Date': sdkDate(now) },
        queryParams: { b: '2', a: ['x y', '!'] },
        data: JSON.parse(body),
      } as never, // the SDK's IHttpRequest has many optional members this test does not need
      { getAk: () => 'AK', getSk: () => 'SK' } as never,
    ) as Record<string, string>;
    expect(ours.headers['authorization']).toBe(sdkHeaders['Authorization']);
    expect(ours.headers['x-sdk-date']).toBe('20260102T030405Z');
  });
});

describe('HcsClient', () => {
  it('talks to mock-hcs in-process and maps errors to HcsApiError', async () => {
    const clock = new VirtualClock();
    const hcs = await createMockHcs({ clock, rng: new SeededRng(3) });
    try {
      const client = new HcsClient({ transport: injectTransport(hcs.app), ak: p0.ak, sk: p0.sk, projectId: p0.id, clock });
      const images = await client.listImages({ name: 'alauda-os-v4.2-k8s-v1.32.3' });
      expect(images[0]?.__support_kubernetes_version).toBe('v1.32.3');
      const subnet = (await client.listSubnets()).find((s) => s.name === 'cp-subnet')!;
      const r = await client.createServers({
        server: {
          name: 'cp-0',
          imageRef: images[0]!.id,
          flavorRef: 's6.xlarge.2',
          availability_zone: 'az2',
          vpcid: subnet.vpc_id,
          nics: [{ subnet_id: subnet.id, ip_address: '192.168.1.10' }],
          root_volume: { volumetype: 'SSD' },
        },
      });
      const err = await client
        .createServers({
          server: { name: 'cp-1', imageRef: images[0]!.id, flavorRef: 's6.xlarge.2', vpcid: subnet.vpc_id, nics: [{ subnet_id: subnet.id, ip_address: '192.168.1.10' }], root_volume: { volumetype: 'SSD' } },
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HcsApiError);
      expect(err).toMatchObject({ status: 400, code: 'Ecs.0010', operation: 'CreateServers' });
      expect((err as HcsApiError).requestId).toMatch(/^[0-9a-f]{32}$/);
      expect((err as HcsApiError).message).toContain('192.168.1.10');
      clock.advanceBy(120_000);
      const s = await client.showServer(r.serverIds[0]!);
      expect(s?.status).toBe('ACTIVE');
      expect(s?.['OS-EXT-AZ:availability_zone']).toBe('az2');
      expect(await client.showVolume('nope')).toBeUndefined();
      const del = await client.deleteVolume('nope').catch((e: unknown) => e);
      expect(del).toMatchObject({ status: 404, code: 'EVS.5404', operation: 'DeleteVolume' });
    } finally {
      await hcs.close();
    }
  });

  it('talks to mock-hcs over real HTTP with fetchTransport', async () => {
    const clock = new VirtualClock();
    const hcs = await createMockHcs({ clock, rng: new SeededRng(3) });
    try {
      const address = await hcs.app.listen({ port: 0, host: '127.0.0.1' });
      const client = new HcsClient({ transport: fetchTransport(address), ak: p0.ak, sk: p0.sk, projectId: p0.id, clock });
      expect((await client.listFlavors('az1')).map((f) => f.id)).toContain('s6.large.2');
      expect(await client.listServers({ name: 'a b/c?' })).toEqual([]);
      expect(await client.listVolumes({ metadata: { hostname: 'n 1', slot: '0' } })).toEqual([]);
    } finally {
      await hcs.close();
    }
  });

  it('HCS-6: fetchTransport: an answer that stops mid-body (the cloud killed and restarted) fails the call, and its time is bounded (the process never waits forever)', async () => {
    const { createServer } = await import('node:http');
    // Headers and half a body, then the connection dies (as a server killed with SIGKILL), or nothing more comes at all.
    const srv = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"flavors":[');
      if (req.url?.includes('die')) setImmediate(() => req.socket.destroy());
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    try {
      const base = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
      const t = fetchTransport(base, { timeoutMs: 300 });
      await expect(t.send({ method: 'GET', path: '/die', headers: {} })).rejects.toThrow();
      await expect(t.send({ method: 'GET', path: '/hang', headers: {} })).rejects.toThrow(/no complete answer within 300 ms/);
    } finally {
      srv.closeAllConnections();
      srv.close();
    }
  });

  describe('against nock', () => {
    beforeAll(() => nock.disableNetConnect());
    afterEach(() => nock.cleanAll());
    afterAll(() => nock.enableNetConnect());

    it('sends signed requests and parses error_code/error_msg errors', async () => {
      const clock = new VirtualClock();
      const client = new HcsClient({ transport: fetchTransport('https://ecs.hcs.example.com'), ak: p0.ak, sk: p0.sk, projectId: p0.id, clock });
      let seenAuth = '';
      nock('https://ecs.hcs.example.com')
        .matchHeader('authorization', (v: string | null) => {
          seenAuth = v ?? '';
          return true;
        })
        .matchHeader('x-sdk-date', '20260101T000000Z')
        .get(`/v1/${p0.id}/jobs/abc`)
        .reply(200, { status: 'SUCCESS', job_id: 'abc', job_type: 'createServer', entities: { sub_jobs: [] } }, { 'x-request-id': 'r1' });
      const job = await client.showJob('abc');
      expect(job.status).toBe('SUCCESS');
      expect(seenAuth).toMatch(/^SDK-HMAC-SHA256 Access=TESTBEDAK0000000000001, SignedHeaders=content-type;host;x-project-id;x-sdk-date, Signature=[0-9a-f]{64}$/);

      nock('https://ecs.hcs.example.com')
        .post(`/v1/${p0.id}/cloudservers/delete`, { servers: [{ id: 's1' }], delete_volume: false, delete_publicip: false })
        .reply(403, { error_code: 'APIGW.0302', error_msg: 'not allowed' }, { 'x-request-id': 'r2' });
      const e = await client.deleteServers(['s1']).catch((x: unknown) => x);
      expect(e).toMatchObject({ status: 403, code: 'APIGW.0302', requestId: 'r2', operation: 'DeleteServers' });

      nock('https://ecs.hcs.example.com').get(`/v1/${p0.id}/cloudservers/s2`).reply(502, 'Bad Gateway');
      const e2 = await client.showServer('s2').catch((x: unknown) => x);
      expect(e2).toMatchObject({ status: 502, code: 'HTTP.502' });
      expect(nock.isDone()).toBe(true);
    });

    it('authenticates with a token (X-Auth-Token, no signature) and issues tokens by password', async () => {
      let n = 0;
      const client = new HcsClient({ transport: fetchTransport('https://ecs.hcs.example.com'), token: () => `tok-${++n}`, projectId: p0.id, clock: new VirtualClock() });
      nock('https://ecs.hcs.example.com')
        .matchHeader('x-auth-token', 'tok-1')
        .matchHeader('authorization', (v: string | null) => v === null)
        .post(`/v1/${p0.id}/cloudservers/action`, { 'os-stop': { servers: [{ id: 's1' }], type: 'SOFT' } })
        .reply(200, { job_id: 'j1' });
      expect(await client.stopServers(['s1'])).toEqual({ job_id: 'j1' });
      nock('https://ecs.hcs.example.com')
        .matchHeader('x-auth-token', 'tok-2')
        .get(`/v1/${p0.id}/ports`)
        .query({ fixed_ips: 'ip_address=10.0.0.5', limit: '2000' })
        .reply(200, { ports: [{ id: 'port-1' }] });
      expect((await client.listPorts({ ipAddress: '10.0.0.5' })).map((x) => x.id)).toEqual(['port-1']);

      nock('https://iam.hcs.example.com')
        .post('/v3/auth/tokens', (b: { auth: { identity: { methods: string[] }; scope: unknown } }) => b.auth.identity.methods[0] === 'password' && JSON.stringify(b.auth.scope) === JSON.stringify({ project: { name: 'testbed' } }))
        .query({ nocatalog: 'true' })
        .reply(201, { token: { expires_at: '2026-01-02T00:00:00.000000Z', project: { id: 'p1', name: 'testbed' } } }, { 'X-Subject-Token': 'MIItoken' });
      const t = await issueToken(fetchTransport('https://iam.hcs.example.com'), { user: 'u', password: 'pw', domain: 'd', project: { name: 'testbed' } });
      expect([t.token, t.projectId, t.expiresAt]).toEqual(['MIItoken', 'p1', '2026-01-02T00:00:00.000000Z']);
      nock('https://iam.hcs.example.com').post('/v3/auth/tokens').query(true).reply(401, { error_code: 'IAM.0001', error_msg: 'The username or password is wrong.' });
      const e = await issueToken(fetchTransport('https://iam.hcs.example.com'), { user: 'u', password: 'bad', domain: 'd' }).catch((x: unknown) => x);
      expect(e).toMatchObject({ status: 401, code: 'IAM.0001', operation: 'KeystoneCreateUserTokenByPassword' });
      expect(nock.isDone()).toBe(true);
      expect(() => new HcsClient({ transport: fetchTransport('https://x'), projectId: 'p', clock: new VirtualClock() })).toThrow(/ak and sk, or a token/);
      expect(() => new HcsClient({ transport: fetchTransport('https://x'), ak: 'a', projectId: 'p', clock: new VirtualClock() })).toThrow(/go together/);
    });
  });
});
