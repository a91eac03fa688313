/**
 * Failure output (issue 22): a wait that fails because no node could join names the guest's reason
 * and rule in its error — the line printed without -v — instead of only "0 nodes Ready". The bug
 * planted here (in this file only): a provider that issues the kubelet certificate for the wrong
 * node name, so every guest's kubeadm join fails BOOT-3.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ConsoleReporter } from '../../src/harness/report/console.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';

const planted = vi.hoisted(() => ({ wrongCn: false }));

vi.mock('../../src/core/pki/index.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/core/pki/index.js')>();
  return {
    ...real,
    issueCertificate: (ca: Parameters<typeof real.issueCertificate>[0], req: Parameters<typeof real.issueCertificate>[1], rng: Parameters<typeof real.issueCertificate>[2], now: number) =>
      real.issueCertificate(ca, planted.wrongCn && req.commonName?.startsWith('system:node:') ? { ...req, commonName: 'system:node:localhost' } : req, rng, now),
  };
});

describe('a failed wait names what blocks it', () => {
  it('no node joins: the error names each guest\'s join failure with BOOT-3, and the console prints it without -v', { timeout: 120_000 }, async () => {
    planted.wrongCn = true;
    try {
      const path = join(resolve('scenarios'), 'scale-out-workers.yaml');
      const r = await runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory({}));
      const failed = r.steps.find((s) => !s.ok)!;
      expect(failed.title).toMatch(/^wait /);
      expect(failed.error).toMatch(/timed out after .*; blocked by guest demo-worker-1: join failed: .*CN=system:node:localhost.* \[BOOT-3[^\]]*\]; guest demo-worker-2: join failed/);
      let out = '';
      const rep = new ConsoleReporter({ write: (s) => (out += s), verbose: false, color: false });
      rep.stepEnd(failed);
      expect(out).toMatch(/blocked by guest demo-worker-1: join failed: .*\[BOOT-3/);
      expect(out).toContain('guests that did not join (their latest word):');
    } finally {
      planted.wrongCn = false;
    }
  });
});
