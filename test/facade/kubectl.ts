/**
 * Run the real kubectl (a child process) against the facade. Commands are
 * given exactly as the documents write them and run through /bin/sh, so the
 * documents' quoting (--type='json' -p='[...]') is exercised as written.
 * Waits are bounded waits on the child process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The kubectl binary: $KUBECTL, else /usr/bin/kubectl. */
export const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';
export const haveKubectl = existsSync(KUBECTL);

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export class KubectlRunner {
  readonly home: string;
  private readonly bin: string;

  constructor(
    private kubeconfig: string,
    readonly cwd: string = mkdtempSync(join(tmpdir(), 'kubectl-cwd-')),
  ) {
    this.home = mkdtempSync(join(tmpdir(), 'kubectl-home-'));
    this.bin = join(this.home, 'bin');
    mkdirSync(this.bin);
    symlinkSync(KUBECTL, join(this.bin, 'kubectl'));
  }

  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: `${this.bin}:/usr/bin:/bin`,
      HOME: this.home,
      KUBECONFIG: this.kubeconfig,
      KUBECACHEDIR: join(this.home, 'cache'),
      ...extra,
    };
  }

  /** Start `command` (a shell command line) without waiting. */
  spawn(command: string, extraEnv: Record<string, string> = {}): { child: ChildProcess; out: () => string; err: () => string; waitFor: (want: RegExp | ((out: string) => boolean), ms?: number) => Promise<string>; exited: Promise<number | null> } {
    // exec: the shell becomes kubectl, so killing the child ends kubectl itself.
    const child = spawn('/bin/sh', ['-c', `exec ${command}`], { cwd: this.cwd, env: this.env(extraEnv) });
    let stdout = '';
    let stderr = '';
    const waiters: (() => void)[] = [];
    const wake = (): void => {
      for (const w of waiters.splice(0)) w();
    };
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString('utf8');
      wake();
    });
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
      wake();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => {
      wake();
      resolve(code);
    }));
    const waitFor = async (want: RegExp | ((out: string) => boolean), ms = 20_000): Promise<string> => {
      const deadline = Date.now() + ms;
      const ok = (): boolean => (typeof want === 'function' ? want(stdout) : want.test(stdout));
      while (!ok()) {
        if (child.exitCode !== null) throw new Error(`kubectl exited (${child.exitCode}) before ${String(want)}: stdout=${stdout} stderr=${stderr}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out waiting for ${String(want)} in kubectl output: stdout=${stdout} stderr=${stderr}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
      return stdout;
    };
    return { child, out: () => stdout, err: () => stderr, waitFor, exited };
  }

  /** Run a shell command line to completion (bounded by `ms`). */
  async run(command: string, extraEnv: Record<string, string> = {}, ms = 30_000): Promise<Run> {
    const p = this.spawn(command, extraEnv);
    const timer = setTimeout(() => p.child.kill('SIGKILL'), ms);
    const code = await p.exited;
    clearTimeout(timer);
    return { code, stdout: p.out(), stderr: p.err() };
  }

  /** Run and expect success. */
  async ok(command: string, extraEnv: Record<string, string> = {}): Promise<string> {
    const r = await this.run(command, extraEnv);
    if (r.code !== 0) throw new Error(`"${command}" failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** Run and expect success with nothing on stderr (no warning either), as a user reading the terminal would want. */
  async clean(command: string, extraEnv: Record<string, string> = {}): Promise<string> {
    const r = await this.run(command, extraEnv);
    if (r.code !== 0 || r.stderr !== '') throw new Error(`"${command}" ${r.code === 0 ? 'printed on stderr' : `failed (${r.code})`}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** Run and expect failure; returns stderr. */
  async fails(command: string, extraEnv: Record<string, string> = {}): Promise<string> {
    const r = await this.run(command, extraEnv);
    if (r.code === 0) throw new Error(`"${command}" unexpectedly succeeded: ${r.stdout}`);
    return r.stderr;
  }
}

/** Bounded wait for a condition that a kubectl child process brings about (polls every 20 ms). */
export async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
