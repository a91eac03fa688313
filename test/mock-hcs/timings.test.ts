import { describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { serverBody, setup } from './helpers.js';

describe('HCS-1: build durations come from the injected clock, per flavor and per image', () => {
  it('an image build time wins over the flavor\'s, which wins over the default', async () => {
    const config = defaultCloudConfig();
    config.timings.jitter = 0;
    config.flavors.find((f) => f.id === 's6.large.2')!.buildMs = 120_000;
    const slowImage = config.images.find((i) => i.kubernetesVersion === 'v1.32.3')!;
    slowImage.buildMs = 600_000;
    const env = await setup({ config });
    const byFlavor = await env.client.createServers(serverBody(env, { name: 'by-flavor' }));
    const byImage = await env.client.createServers(serverBody(env, { name: 'by-image', imageRef: slowImage.id }));
    const byDefault = await env.client.createServers(serverBody(env, { name: 'by-default', flavorRef: 's6.xlarge.2' }));
    const status = async (id: string): Promise<string | undefined> => (await env.client.showServer(id))?.status;
    env.clock.advanceBy(config.timings.serverBuildMs);
    expect(await status(byDefault.serverIds[0]!)).toBe('ACTIVE');
    expect(await status(byFlavor.serverIds[0]!)).toBe('BUILD');
    env.clock.advanceBy(120_000 - config.timings.serverBuildMs);
    expect(await status(byFlavor.serverIds[0]!)).toBe('ACTIVE');
    expect(await status(byImage.serverIds[0]!)).toBe('BUILD');
    env.clock.advanceBy(600_000 - 120_000);
    expect(await status(byImage.serverIds[0]!)).toBe('ACTIVE');
    await env.hcs.close();
  });
});
