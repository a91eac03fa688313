/**
 * Negative test of the continuous kubelet-certificate invariant (BOOT-2, src/scenario/invariants.ts):
 * a provider that issues the node certificate without the node's IPs as SANs (the chain and the CN
 * are right, so the guest still joins: BOOT-3 alone would not see it) fails the run with BOOT-2,
 * while the node is running — not only at rest. The bug is planted by wrapping the provider's
 * certificate issuing (src/pki) in this file only.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadScenario } from '../../src/scenario/parse.js';
import { runScenario } from '../../src/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/testbed/index.js';

const planted = vi.hoisted(() => ({ dropIpSans: false }));

vi.mock('../../src/pki/index.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/pki/index.js')>();
  return {
    ...real,
    issueCertificate: (ca: Parameters<typeof real.issueCertificate>[0], req: Parameters<typeof real.issueCertificate>[1], rng: Parameters<typeof real.issueCertificate>[2], now: number) =>
      real.issueCertificate(ca, planted.dropIpSans && req.commonName?.startsWith('system:node:') ? { ...req, ips: [] } : req, rng, now),
  };
});

describe('BOOT-2: the kubelet certificate carries the node hostname and IPs as SANs, at every instant', () => {
  it('a provider that leaves the IP SANs out fails while the nodes run', { timeout: 120_000 }, async () => {
    planted.dropIpSans = true;
    try {
      const path = join(resolve('scenarios'), 'scale-out-workers.yaml');
      const r = await runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory({}));
      expect(r.ok).toBe(false);
      const failed = r.steps.find((s) => !s.ok)!;
      expect(failed.title).not.toContain('invariants at rest');
      expect(failed.error).toMatch(/BOOT-2: kubelet certificate of node demo-worker-\d \(server \S+\) lacks the SAN IP:192\.168\.\d+\.\d+ \(it has DNS:demo-worker-\d\): the node's hostname and IPs/);
    } finally {
      planted.dropIpSans = false;
    }
  });
});
