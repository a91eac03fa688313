/**
 * Issue 24: every file that holds a credential is 0600, also when it existed
 * before with a wider mode, and serve prints no token on stdout.
 * - writeSecretFile (src/core/secret-file.ts) over a 0644 file;
 * - serve's kubeconfig files (token; client-cert.kubeconfig: a private key)
 *   and dashboard-url, in a directory where 0644 files of the same names wait;
 * - provider.env / provider.json (AK/SK) of --provider external, over 0644 files.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { banner, parseServeArgs, startServe, type Served, type ServeOptions } from '../../src/harness/cli/serve.js';
import { writeSecretFile } from '../../src/core/secret-file.js';
import { writeExternalInfo } from '../../src/harness/realcluster/external.js';

const mode = (p: string): number => statSync(p).mode & 0o777;

/** A file of that name, 0644, before the writer runs (a run before the fix, or a user's cp). */
function plant(path: string): void {
  writeFileSync(path, 'old\n');
  chmodSync(path, 0o644);
}

describe('issue 24: credential files are 0600, also over existing files', () => {
  it('writeSecretFile: a new file and an existing 0644 one both end 0600 with the new content, no temp file left', () => {
    const dir = mkdtempSync(join(tmpdir(), 'secret-file-'));
    writeSecretFile(join(dir, 'new'), 'a');
    expect(mode(join(dir, 'new'))).toBe(0o600);
    plant(join(dir, 'old'));
    writeSecretFile(join(dir, 'old'), 'b');
    expect(mode(join(dir, 'old'))).toBe(0o600);
    expect(readFileSync(join(dir, 'old'), 'utf8')).toBe('b');
    expect(readdirSync(dir).sort()).toEqual(['new', 'old']);
  });

  it('provider.env and provider.json (AK/SK) over existing 0644 files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'external-info-'));
    plant(join(dir, 'provider.env'));
    plant(join(dir, 'provider.json'));
    const out = writeExternalInfo(dir, { url: 'https://127.0.0.1:1', caPem: 'CA' } as Parameters<typeof writeExternalInfo>[1], { kubeconfig: join(dir, 'kc') }, { healthPort: 18081 });
    for (const f of [out.env, out.json]) {
      expect(mode(f), f).toBe(0o600);
      expect(readFileSync(f, 'utf8')).toContain(out.info.sk);
    }
  });
});

describe('issue 24: serve writes its kubeconfigs and dashboard-url 0600 over old 0644 files, and prints no token', () => {
  let s: Served;
  let o: ServeOptions;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'serve-secrets-'));
    for (const f of ['kubeconfig', 'management.kubeconfig', 'client-cert.kubeconfig', 'dashboard-url']) plant(join(dir, f));
    o = { ...(parseServeArgs(['--speed', '0', '--port', '0']) as ServeOptions), kubeconfigDir: dir, tickMs: 0 };
    s = await startServe(o);
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  }, 30_000);

  it('every file holding the token or the client key is 0600; the banner names the file, not the token', () => {
    const files = [s.facade.kubeconfigPaths.combined, s.facade.kubeconfigPaths.management, s.facade.kubeconfigPaths.clientCert!, s.dashboardUrlFile];
    for (const f of files) expect(mode(f), f).toBe(0o600);
    expect(readFileSync(s.facade.kubeconfigPaths.clientCert!, 'utf8')).toContain('client-key-data');
    expect(readFileSync(s.dashboardUrlFile, 'utf8').trim()).toBe(s.facade.dashboardUrl);
    const b = banner(s, o);
    expect(b).not.toContain(s.facade.token);
    expect(b).not.toContain(encodeURIComponent(s.facade.token));
    expect(b).toContain(s.dashboardUrlFile);
    // Rewritten later (a new workload cluster): still 0600.
    chmodSync(s.facade.kubeconfigPaths.combined, 0o644);
    s.facade.writeKubeconfig();
    expect(mode(s.facade.kubeconfigPaths.combined)).toBe(0o600);
  });
});
