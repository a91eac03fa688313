/**
 * The Go test clients under test/facade/etcd-go (the official client-go and
 * etcd clientv3 through the facade's port-forward): whether they can be
 * built here, their build, and a run whose JSON answer (also on a non-zero
 * exit: `{"error": {"stage", "message"}}`) is parsed.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO } from './fixture.js';

const run = promisify(execFile);

/** Why the clients cannot be built (no Go, or a module the upstream managers' download, tools/capi/build.sh, did not cache); undefined when they can. */
export function goProblem(modules: string[]): string | undefined {
  const env = spawnSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' });
  if (env.status !== 0) return 'go is not installed';
  const cache = env.stdout.trim();
  for (const m of modules) {
    if (!existsSync(join(cache, m))) return `${m} is not in the Go module cache (tools/capi/build.sh downloads it)`;
  }
  return undefined;
}

/**
 * Build package `pkg` (relative to test/facade/etcd-go) into `out`. The capi module download holds every module: no
 * network (GOPROXY=off), none added (-mod=readonly); the same flags as that build, so its build cache serves the
 * packages (a few seconds). Prints the build time.
 */
export async function buildGoClient(pkg: string, out: string, label: string): Promise<void> {
  const t0 = Date.now();
  await run('go', ['build', '-trimpath', '-o', out, pkg], { cwd: join(REPO, 'test', 'facade', 'etcd-go'), env: { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly', GOPROXY: 'off' }, timeout: 540_000 });
  process.stdout.write(`${label} built in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}

/** Run a built client; its JSON answer, also when it exits non-zero with one. */
export async function runGoClient<T>(bin: string, args: string[]): Promise<T> {
  try {
    const { stdout } = await run(bin, args, { timeout: 60_000 });
    return JSON.parse(stdout) as T;
  } catch (e) {
    const stdout = (e as { stdout?: string }).stdout ?? '';
    if (stdout.trim().startsWith('{')) return JSON.parse(stdout) as T;
    throw e;
  }
}
