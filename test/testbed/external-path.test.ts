/**
 * The external-provider path's parts that need no apiserver (issue 22): the
 * health port outside the ephemeral range, a --provider-health on one of the
 * run's own ports refused at once, stale markers removed, and the provider's
 * HCS_HEALTH_ADDR / HCS_STOP_FILE variables.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { providerOptions } from '../../src/harness/cli/provider.js';
import { checkHealthPort } from '../../src/harness/realcluster/backends.js';
import { clearExternalMarkers, ephemeralPortRange, pickHealthPort, portFree } from '../../src/harness/realcluster/external.js';
import type { ProviderProcessOptions } from '../../src/product/provider/process.js';

const dir = mkdtempSync(join(tmpdir(), 'hcs-external-path-'));

describe('external provider path', () => {
  it('the health port is free and below the ephemeral range, where no listen on port 0 lands', { timeout: 10_000 }, async () => {
    const [lo] = ephemeralPortRange();
    const port = await pickHealthPort(1234);
    expect(port).toBeLessThan(lo);
    expect(port).toBeGreaterThanOrEqual(1024);
    expect(await portFree(port)).toBe(true);
    // Taken by someone else: the next pick avoids it.
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(port, '127.0.0.1', () => r()));
    try {
      expect(await portFree(port)).toBe(false);
      expect(await pickHealthPort(1234)).not.toBe(port);
    } finally {
      await new Promise((r) => srv.close(r));
    }
  });

  it('a --provider-health on a port of the run itself is refused naming the flag', () => {
    expect(() => checkHealthPort('http://127.0.0.1:40123/readyz', { front: 'https://127.0.0.1:40123', apiserver: 'https://127.0.0.1:40200' })).toThrow(/--provider-health .*port 40123 is this run's own front/);
    expect(() => checkHealthPort('http://127.0.0.1:8081/readyz', { front: 'https://127.0.0.1:40123' })).not.toThrow();
    expect(() => checkHealthPort('not a url', {})).toThrow(/--provider-health: not a URL/);
  });

  it('stale provider.env, provider.json, ready and stop files of a previous run are removed', () => {
    for (const f of ['provider.env', 'provider.json', 'ready', 'stop']) writeFileSync(join(dir, f), 'old');
    clearExternalMarkers(dir);
    for (const f of ['provider.env', 'provider.json', 'ready', 'stop']) expect(existsSync(join(dir, f)), f).toBe(false);
  });

  it('hcs-testbed provider takes HCS_HEALTH_ADDR and HCS_STOP_FILE from provider.env (a flag wins)', () => {
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    const env = { KUBECONFIG: kubeconfig, HCS_CLOUD_URL: 'https://127.0.0.1:8443', HCS_AK: 'a', HCS_SK: 's', HCS_PROJECT_ID: 'p', HCS_HEALTH_ADDR: '127.0.0.1:23456', HCS_STOP_FILE: join(dir, 'stop') };
    const o = providerOptions([], env) as ProviderProcessOptions;
    expect(o.healthAddr).toBe('127.0.0.1:23456');
    expect(o.stopFile).toBe(join(dir, 'stop'));
    expect((providerOptions(['--health-addr', '127.0.0.1:0'], env) as ProviderProcessOptions).healthAddr).toBe('127.0.0.1:0');
    expect(() => providerOptions([], { ...env, HCS_HEALTH_ADDR: '0.0.0.0:1' })).toThrow(/loopback/);
  });
});
