import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../src/harness/cli/main.js';
import { kubectlBinary } from '../../src/harness/scenario/real-kubectl.js';

// Checks that need no Docker engine; tools/kind/ci-step.sh builds and runs the services where one runs (issue 23).
describe('docker-compose.yml', () => {
  const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as {
    services: Record<string, { build?: { context: string; args?: Record<string, string> }; command?: string[]; ports?: string[]; volumes?: string[]; profiles?: string[] }>;
  };

  it('parses and defines the mock-hcs and scenarios services from the Dockerfile', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['mock-hcs', 'scenarios', 'scenarios-kind']);
    // One build for all: the Dockerfile in the context, on a base image chosen by BASE_IMAGE (a locally built one where
    // no registry is reachable: tools/docker/base-image.sh), with kubectl downloaded or taken from the context.
    for (const s of Object.values(compose.services)) {
      expect(s.build?.context).toBe('.');
      expect(Object.keys(s.build?.args ?? {}).sort()).toEqual(['BASE_IMAGE', 'KUBECTL_SOURCE']);
    }
    expect(readFileSync('Dockerfile', 'utf8')).toMatch(/^ARG BASE_IMAGE=/m);
    expect(existsSync('Dockerfile')).toBe(true);
  });

  it('the image has the real kubectl where `real: true` steps look for it', () => {
    const saved = process.env.KUBECTL;
    delete process.env.KUBECTL;
    try {
      expect(readFileSync('Dockerfile', 'utf8')).toMatch(new RegExp(`curl -fsSLo ${kubectlBinary().replaceAll('/', '\\/')} "https://dl\\.k8s\\.io/release/`));
    } finally {
      if (saved !== undefined) process.env.KUBECTL = saved;
    }
  });

  it('runs commands that exist, on the ports they publish', () => {
    const mock = compose.services['mock-hcs']!;
    expect(existsSync(mock.command![1]!)).toBe(true);
    const port = mock.command![mock.command!.indexOf('--port') + 1];
    // Published on the host's loopback only (a server here listens on loopback or a Docker network).
    expect(mock.ports).toContain(`127.0.0.1:${port}:${port}`);
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    const sc = compose.services.scenarios!.command!;
    expect(sc.slice(0, 2)).toEqual(['npm', 'run']);
    expect(scripts[sc[2]!]).toBeDefined();
  });

  it('scenarios-kind: the library on kind (profile kind) with options the CLI accepts and a kubeconfig from a mounted volume', async () => {
    const svc = compose.services['scenarios-kind']!;
    expect(svc.profiles).toEqual(['kind']);
    const cmd = svc.command!;
    expect(cmd.slice(0, 4)).toEqual(['npm', 'run', 'scenarios', '--']);
    const kubeconfig = cmd[cmd.indexOf('--kubeconfig') + 1]!;
    // `hcs-testbed kind up` writes out/kind/kubeconfig; the service mounts that directory where --kubeconfig points.
    expect(svc.volumes).toContain(`./out/kind:${kubeconfig.replace(/\/kubeconfig$/, '')}:ro`);
    // The same options, with a kubeconfig that does not exist here: parsed, then refused only for the missing file.
    const args = cmd.slice(4).map((a) => (a === kubeconfig ? '/nonexistent/kubeconfig' : a.replace(/\$\{WEBHOOK_HOST:-([^}]+)\}/, '$1')));
    let out = '';
    const code = await main(['run', 'scenarios', ...args], (s) => (out += s));
    expect(out).toContain('cannot load kubeconfig');
    expect(code).toBe(2);
  });
});
