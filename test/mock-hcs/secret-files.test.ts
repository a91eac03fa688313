/**
 * Issue 32: mock-hcs's secret files are 0600 always and never written through a symbolic link, and
 * the admin token is not printed when it goes to a file. Before: the admin-token file and
 * server.key / ca.key kept the 0644 mode of an existing file, the token file was written through a
 * symbolic link into its 0644 target, and the random token was printed even with --admin-token-file.
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseServerArgs, startServer, UsageError, type RunningServer } from '../../mock-hcs/src/server.js';
import { prepareTls } from '../../mock-hcs/src/tls.js';

const root = mkdtempSync(join(tmpdir(), 'mock-hcs-secrets-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const running: RunningServer[] = [];
afterEach(async () => {
  while (running.length) await running.pop()!.stop();
});

let n = 0;
const freshDir = (): string => {
  const d = join(root, String(++n));
  mkdirSync(d);
  return d;
};
const mode = (p: string): number => statSync(p).mode & 0o777;

/** A file of that name, 0644, before mock-hcs runs (a run before the fix, or a user's cp). */
function plant(path: string, text = 'old\n'): void {
  writeFileSync(path, text);
  chmodSync(path, 0o644);
}

async function start(argv: string[]): Promise<{ srv: RunningServer; lines: string[] }> {
  const lines: string[] = [];
  const srv = await startServer(parseServerArgs(['--port', '0', ...argv], {}), (l) => lines.push(l));
  running.push(srv);
  return { srv, lines };
}

describe('issue 32: the admin token file', () => {
  it('over an existing 0644 file: 0600 with the token; the token is not printed, stdout names the file', async () => {
    const file = join(freshDir(), 'admin-token');
    plant(file);
    const { srv, lines } = await start(['--admin-token-file', file]);
    const token = srv.mock.adminToken!;
    expect(mode(file)).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(`${token}\n`);
    expect(lines.join('\n')).not.toContain(token);
    expect(lines).toContain(`  admin token: in ${file}; send it as X-Admin-Token`);
  });

  it('a symbolic link of that name is replaced by a 0600 file; its 0644 target is untouched', async () => {
    const d = freshDir();
    const target = join(d, 'elsewhere');
    plant(target, 'precious\n');
    const file = join(d, 'admin-token');
    symlinkSync(target, file);
    const { srv } = await start(['--admin-token-file', file]);
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
    expect(mode(file)).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(`${srv.mock.adminToken}\n`);
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
    expect(mode(target)).toBe(0o644);
  });

  it('without a token file the random token is printed (the only way to learn it); a given one never is', async () => {
    const random = await start([]);
    expect(random.lines).toContain(`  admin token: ${random.srv.mock.adminToken}; send it as X-Admin-Token`);
    const given = await start(['--admin-token', 'given-token-0123456789']);
    expect(given.lines.join('\n')).not.toContain('given-token-0123456789');
  });

  it('a token file that cannot be written is a usage error naming it, and the server is not left listening', async () => {
    const file = join(root, 'no-such-dir', 'admin-token');
    const err = await startServer(parseServerArgs(['--port', '0', '--admin-token-file', file], {}), () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain(`--admin-token-file ${file}`);
  });
});

describe('issue 32: the TLS private keys', () => {
  it('ca.key and server.key over existing 0644 files end 0600 with the new keys', () => {
    const dir = freshDir();
    for (const f of ['ca.key', 'server.key']) plant(join(dir, f));
    const t = prepareTls(dir, Date.now());
    for (const f of ['ca.key', 'server.key']) {
      expect(mode(join(dir, f)), f).toBe(0o600);
      expect(readFileSync(join(dir, f), 'utf8'), f).toMatch(/^-----BEGIN (EC )?PRIVATE KEY-----/);
    }
    expect(readFileSync(t.keyFile, 'utf8')).toBe(t.key);
  });

  it('a kept CA whose key is 0644 keeps its key, narrowed to 0600', () => {
    const dir = freshDir();
    prepareTls(dir, Date.now());
    const key = readFileSync(join(dir, 'ca.key'), 'utf8');
    chmodSync(join(dir, 'ca.key'), 0o644);
    prepareTls(dir, Date.now());
    expect(mode(join(dir, 'ca.key'))).toBe(0o600);
    expect(readFileSync(join(dir, 'ca.key'), 'utf8')).toBe(key);
  });

  it('server.key as a symbolic link is replaced, its target untouched; a kept ca.key that is a link is left alone', () => {
    const dir = freshDir();
    prepareTls(dir, Date.now());
    // The CA key moved elsewhere by its owner and linked back; a link planted as server.key.
    const keep = join(freshDir(), 'ca.key');
    writeFileSync(keep, readFileSync(join(dir, 'ca.key')));
    chmodSync(keep, 0o640);
    rmSync(join(dir, 'ca.key'));
    symlinkSync(keep, join(dir, 'ca.key'));
    const target = join(freshDir(), 'victim');
    plant(target, 'precious\n');
    rmSync(join(dir, 'server.key'));
    symlinkSync(target, join(dir, 'server.key'));
    prepareTls(dir, Date.now());
    expect(lstatSync(join(dir, 'server.key')).isSymbolicLink()).toBe(false);
    expect(mode(join(dir, 'server.key'))).toBe(0o600);
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
    expect(mode(target)).toBe(0o644);
    expect(lstatSync(join(dir, 'ca.key')).isSymbolicLink()).toBe(true);
    expect(mode(keep)).toBe(0o640);
  });
});
