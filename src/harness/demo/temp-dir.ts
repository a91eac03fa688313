/**
 * The demo's working directory (issue 32): it holds a kubeconfig with the served testbed's bearer
 * token (workload.kubeconfig) and the files the steps write. Created private (mkdtemp: 0700) and
 * removed whatever way the demo ends: done, failed, `process.exit`, SIGINT (Ctrl-C) or SIGTERM.
 * Before, it was left in the temp directory for good, the kubeconfig 0644.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Run `fn` with a fresh private directory `<tmpdir>/<prefix>XXXXXX`, removed afterwards. */
export async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  const detach = () => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    process.off('exit', remove);
  };
  // Remove the directory, then let the signal do what it would have done without this listener
  // (node's default: end the process by that signal), or what other listeners make of it.
  const onSignal = (sig: NodeJS.Signals) => {
    remove();
    detach();
    process.kill(process.pid, sig);
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  process.once('SIGINT', onInt);
  process.once('SIGTERM', onTerm);
  process.once('exit', remove);
  try {
    return await fn(dir);
  } finally {
    detach();
    remove();
  }
}
