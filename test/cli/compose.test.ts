import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// No Docker engine runs on CI machines: check what can be checked without one.
describe('docker-compose.yml', () => {
  const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as {
    services: Record<string, { build?: string; command?: string[]; ports?: string[] }>;
  };

  it('parses and defines the mock-hcs and scenarios services from the Dockerfile', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['mock-hcs', 'scenarios']);
    for (const s of Object.values(compose.services)) expect(s.build).toBe('.');
    expect(existsSync('Dockerfile')).toBe(true);
  });

  it('runs commands that exist, on the ports they publish', () => {
    const mock = compose.services['mock-hcs']!;
    expect(existsSync(mock.command![1]!)).toBe(true);
    const port = mock.command![mock.command!.indexOf('--port') + 1];
    expect(mock.ports).toContain(`${port}:${port}`);
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    const sc = compose.services.scenarios!.command!;
    expect(sc.slice(0, 2)).toEqual(['npm', 'run']);
    expect(scripts[sc[2]!]).toBeDefined();
  });
});
