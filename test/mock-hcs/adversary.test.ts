/**
 * The adversarial fault effects of issue 37: API Gateway flow control (`throttle`, 429 APIGW.0308) and
 * read-after-write lag of server lists (`listLag`). Both are fault rules (HCS-6), off unless a rule adds them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { serverBody, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

describe('adversarial effects (issue 37)', () => {
  it('throttle: a token bucket of perSecond calls a second (burst at most) on the injected clock; an empty bucket answers 429 APIGW.0308', async () => {
    env = await setup();
    env.hcs.faults.add({ service: 'ims', operation: 'listImages', effect: { type: 'throttle', perSecond: 1, burst: 2 } });
    const codes = async (n: number): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await env.req('GET', `/v2/cloudimages`)).status);
      return out;
    };
    expect(await codes(3)).toEqual([200, 200, 429]);
    const r = await env.req('GET', `/v2/cloudimages`);
    expect(r.status).toBe(429);
    expect((r.json as { error: { code: string; message: string } }).error).toMatchObject({ code: 'APIGW.0308' });
    expect((r.json as { error: { message: string } }).error.message).toMatch(/^The throttling threshold has been reached: policy user over ratelimit,limit:1,time:1 second/);
    env.clock.advanceBy(1000);
    expect(await codes(2)).toEqual([200, 429]);
  });

  it('listLag: a server created less than ms ago is not listed (by name or not), but ShowServer finds it', async () => {
    env = await setup();
    env.hcs.faults.add({ service: 'ecs', operation: 'listServers', effect: { type: 'listLag', ms: 60_000 } });
    const id = (await env.client.createServers(serverBody(env, { name: 'lagged' }))).serverIds[0]!;
    expect((await env.client.listServers({ name: 'lagged' })).map((s) => s.id)).toEqual([]);
    expect((await env.client.listServers()).map((s) => s.id)).toEqual([]);
    expect((await env.client.showServer(id))?.id).toBe(id);
    env.clock.advanceBy(60_000);
    expect((await env.client.listServers({ name: 'lagged' })).map((s) => s.id)).toEqual([id]);
  });

  it('both are validated, naming the field', () => {
    return setup().then((e) => {
      env = e;
      expect(() => env.hcs.faults.add({ service: 'ecs', operation: 'showServer', effect: { type: 'listLag', ms: 5 } })).toThrow(/effect\.type listLag applies to listServers/);
      expect(() => env.hcs.faults.add({ service: 'ecs', operation: '*', effect: { type: 'throttle' } } as unknown as Parameters<typeof env.hcs.faults.add>[0])).toThrow(/effect\.perSecond is required/);
      expect(() => env.hcs.faults.add({ service: 'ecs', operation: '*', effect: { type: 'throttle', perSecond: 1, burst: 0 } })).toThrow(/effect\.burst must be between 1/);
    });
  });
});
