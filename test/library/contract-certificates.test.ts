/**
 * Negative tests of the continuous kubelet-certificate invariant (BOOT-2, src/harness/scenario/invariants.ts):
 * a provider that issues the node certificate without the node's IPs as SANs, or with another
 * organization than system:nodes (the chain and the CN are right, so the guest still joins: BOOT-3
 * alone would not see either) fails the run with BOOT-2, while the node is running — not only at
 * rest. The bugs are planted by wrapping the provider's certificate issuing (src/core/pki) in this file
 * only (the mutant catalogue's provider/cert-no-ip-sans and provider/cert-wrong-organization).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';

const planted = vi.hoisted(() => ({ dropIpSans: false, organization: undefined as string | undefined }));

vi.mock('../../src/core/pki/index.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/core/pki/index.js')>();
  return {
    ...real,
    issueCertificate: (ca: Parameters<typeof real.issueCertificate>[0], req: Parameters<typeof real.issueCertificate>[1], rng: Parameters<typeof real.issueCertificate>[2], now: number) =>
      real.issueCertificate(ca, plant(req), rng, now),
  };
});

/** The planted bugs, on kubelet certificates only. */
function plant<R extends { commonName?: string; organization?: string; ips?: string[] }>(req: R): R {
  if (!req.commonName?.startsWith('system:node:')) return req;
  return { ...req, ...(planted.dropIpSans ? { ips: [] } : {}), ...(planted.organization !== undefined ? { organization: planted.organization } : {}) };
}

/**
 * scale-out-workers with one planted bug (set by `plantBug`, undone afterwards); it must fail during the run,
 * not only at rest. Returns the run and its failed step.
 */
async function runPlanted(plantBug: () => void): Promise<{ r: Awaited<ReturnType<typeof runScenario>>; failed: { title: string; error?: string } }> {
  plantBug();
  try {
    const path = join(resolve('scenarios'), 'scale-out-workers.yaml');
    const r = await runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory({}));
    expect(r.ok).toBe(false);
    const failed = r.steps.find((s) => !s.ok)!;
    expect(failed.title).not.toContain('invariants at rest');
    return { r, failed };
  } finally {
    planted.dropIpSans = false;
    planted.organization = undefined;
  }
}

describe('BOOT-2: the kubelet certificate carries the node hostname and IPs as SANs and O=system:nodes, at every instant', () => {
  it('a provider that leaves the IP SANs out fails while the nodes run', { timeout: 120_000 }, async () => {
    const { failed } = await runPlanted(() => (planted.dropIpSans = true));
    expect(failed.error).toMatch(/BOOT-2: kubelet certificate of node demo-worker-\d \(server \S+\) lacks the SAN IP:192\.168\.\d+\.\d+ \(it has DNS:demo-worker-\d\): the node's hostname and IPs/);
  });

  it('a provider that writes O=system:node (not the Node authorizer\'s group system:nodes) fails while the nodes run', { timeout: 120_000 }, async () => {
    // The guest joins with it (the chain, the key and the CN are right: BOOT-3 holds), so only the O check sees it.
    const { r, failed } = await runPlanted(() => (planted.organization = 'system:node'));
    expect(r.violations.map((v) => v.rule)).toEqual(expect.arrayContaining(['BOOT-2']));
    expect(failed.error).toMatch(/BOOT-2: kubelet certificate of node demo-worker-\d has O=system:node \(subject CN=system:node:demo-worker-\d, O=system:node\), expected exactly O=system:nodes: the Node authorizer's group/);
  });
});
