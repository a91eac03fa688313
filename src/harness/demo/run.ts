/**
 * The guided demo's engine (src/harness/cli/demo.ts has the two documents' steps):
 * each step prints the document's command with its placeholders filled in,
 * waits for Enter (or goes on by itself with --auto), runs it with the real
 * kubectl against the served testbed, says what to look at, and moves
 * virtual time through serve's time API only as far as the step needs
 * (time stays paused between steps, so a presenter can talk). A wait that
 * stops making progress is cut short and explained with the stalls of
 * GET /_testbed/status (the "why is it waiting?" of the dashboard).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeSecretFile } from '../../core/secret-file.js';
import type { Stall } from '../status/why.js';
import { stallLines } from '../status/why.js';
import { call, type Target } from '../dashboard/time-client.js';

export interface DemoIo {
  write(s: string): void;
  /** Wait for the presenter (Enter); undefined with --auto. */
  ask?: (prompt: string) => Promise<void>;
}

export interface DemoCtx {
  io: DemoIo;
  target: Target;
  /** kubectl and the kubeconfigs: management (serve's file) and workload (the same contexts, the workload one current). */
  kubectl: string;
  kubeconfig: string;
  workloadKubeconfig: string;
  /** Where the commands run (the files they write: new-template.yaml, …). */
  dir: string;
  /** Called after each step (tests look at the page there). */
  afterStep?: (id: string) => Promise<void>;
}

export interface Until {
  what: string;
  cond: (ctx: DemoCtx) => Promise<boolean>;
  /** Virtual time per advance (default 30s) and at most how many (default 240). */
  step?: string;
  max?: number;
}

export interface Step {
  id: string;
  title: string;
  /** The command as the presenter sees it (filled in); computed when the step starts. */
  command?: (ctx: DemoCtx) => Promise<string> | string;
  /** Run on the workload cluster (the document's "run against the workload cluster's API server"). */
  workload?: boolean;
  /** Environment for the command (the EDITOR `kubectl edit` runs); what it is, printed. */
  env?: (ctx: DemoCtx) => Record<string, string>;
  /** A watch (`-w`): runs while time advances to `until`, then is stopped. */
  watch?: boolean;
  /** Keep stdout in this file of ctx.dir (the document says "modify the pool and apply": the printed YAML is what gets edited). */
  saveAs?: string;
  /** Done before the command (an edit the document asks for in words): what was done, to print. */
  prepare?: (ctx: DemoCtx) => Promise<string | undefined>;
  /** Done after the command (an edit of what it wrote): what was done. */
  edit?: (ctx: DemoCtx) => Promise<string | undefined> | string | undefined;
  look: string;
  until?: Until;
  /** Show the Kube-OVN phases one at a time: run the command again after each phase change until `done` says so. */
  phases?: { done: (out: string) => boolean; step?: string; max?: number };
}

export type StepResult = { id: string; command?: string; code: number; out: string; waited?: 'done' | 'stalled' };

async function api(ctx: DemoCtx, method: string, path: string, body?: unknown): Promise<unknown> {
  const r = await call(ctx.target, method, path.replace(/^\//, ''), body);
  if (r.code !== 200 && r.code !== 201) throw new Error(`${method} ${path}: ${r.code} ${typeof r.json === 'string' ? r.json : JSON.stringify(r.json)}`);
  return r.json;
}

export const getJson = <T>(ctx: DemoCtx, path: string): Promise<T> => api(ctx, 'GET', path) as Promise<T>;

export async function advance(ctx: DemoCtx, duration: string): Promise<void> {
  await api(ctx, 'POST', '/_testbed/time/advance', { duration });
}

export async function stalls(ctx: DemoCtx): Promise<Stall[]> {
  return ((await getJson<{ why: Stall[] }>(ctx, '/_testbed/status')).why ?? []);
}

/** Run a shell command line with the real kubectl on PATH; stdout+stderr, the exit code. */
export function sh(ctx: DemoCtx, command: string, opts: { workload?: boolean; timeoutMs?: number; env?: Record<string, string> } = {}): { done: Promise<{ code: number; out: string }>; stop: () => void; out: () => string } {
  const env = { ...process.env, KUBECONFIG: opts.workload ? ctx.workloadKubeconfig : ctx.kubeconfig, PATH: `${ctx.kubectl.replace(/\/kubectl$/, '')}:${process.env.PATH ?? '/usr/bin:/bin'}`, ...opts.env };
  const child = spawn('/bin/sh', ['-c', `exec ${command}`], { cwd: ctx.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  const done = new Promise<{ code: number; out: string }>((resolve) => child.on('close', (code) => {
    clearTimeout(timer);
    resolve({ code: code ?? 1, out });
  }));
  return { done, stop: () => child.kill('SIGTERM'), out: () => out };
}

/**
 * Advance until `u.cond`; a stall that stays (the same objects and reasons for
 * 8 advances in a row) ends the wait early, and is printed with its reasons.
 */
export async function advanceUntil(ctx: DemoCtx, u: Until): Promise<'done' | 'stalled'> {
  let same = 0;
  let last = '';
  const max = u.max ?? 240;
  for (let i = 0; i < max; i++) {
    if (await u.cond(ctx)) return 'done';
    await advance(ctx, u.step ?? '30s');
    const now = await stalls(ctx);
    const key = now.map((x) => `${x.kind}/${x.name}/${x.reason}`).join(',');
    same = key && key === last ? same + 1 : 0;
    last = key;
    if (same >= 8) {
      ctx.io.write(`   … not progressing: ${u.what}. Why is it waiting? (the dashboard's panel, hcs-testbed status)\n${stallLines(now, '     ').join('\n')}\n`);
      return 'stalled';
    }
  }
  if (await u.cond(ctx)) return 'done';
  ctx.io.write(`   … not within ${max} × ${u.step ?? '30s'} of virtual time: ${u.what}\n`);
  return 'stalled';
}

const indent = (s: string, p = '     '): string => s.trimEnd().split('\n').map((l) => `${p}${l}`).join('\n');

/** Run the steps in order; the results, one per step. */
export async function runSteps(ctx: DemoCtx, steps: readonly Step[], title: string): Promise<StepResult[]> {
  const results: StepResult[] = [];
  await api(ctx, 'POST', '/_testbed/time/pause');
  ctx.io.write(`${title}\n(virtual time is paused between steps; each step advances it only as far as it needs)\n\n`);
  for (const [i, st] of steps.entries()) {
    ctx.io.write(`── ${i + 1}/${steps.length} ${st.title}\n`);
    const prepared = st.prepare ? await st.prepare(ctx) : undefined;
    if (prepared) ctx.io.write(`   (done for you: ${prepared})\n`);
    const command = st.command ? await st.command(ctx) : undefined;
    const env = st.env?.(ctx);
    if (command) ctx.io.write(`${st.workload ? '   [workload cluster]\n' : ''}${env ? `   [with ${Object.entries(env).map(([k, x]) => `${k}=${x}`).join(' ')}]\n` : ''}${indent(`$ ${command}`, '   ')}\n`);
    if (ctx.io.ask) await ctx.io.ask('   [Enter] to run');
    let res: StepResult = { id: st.id, code: 0, out: '' };
    if (command && st.watch) {
      const w = sh(ctx, command, { workload: !!st.workload, timeoutMs: 600_000 });
      const waited = st.until ? await advanceUntil(ctx, st.until) : 'done';
      await new Promise((r) => setTimeout(r, 300)); // the watch prints the last change (bounded: 0.3 s)
      w.stop();
      const done = await w.done;
      res = { id: st.id, command, code: 0, out: done.out, waited };
      ctx.io.write(`${indent(done.out)}\n`);
    } else if (command) {
      const done = await sh(ctx, command, { workload: !!st.workload, ...(env ? { env } : {}) }).done;
      res = { id: st.id, command, code: done.code, out: done.out };
      if (st.saveAs) writeFileSync(join(ctx.dir, st.saveAs), done.out);
      ctx.io.write(`${indent(done.out.length > 4000 ? `${done.out.slice(0, 4000)}\n… (${done.out.length} characters)` : done.out)}\n`);
      if (done.code !== 0) ctx.io.write(`   exit code ${done.code}\n`);
    }
    const edited = st.edit ? await st.edit(ctx) : undefined;
    if (edited) ctx.io.write(`   (done for you: ${edited})\n`);
    ctx.io.write(`   look: ${st.look}\n`);
    if (st.phases && command) {
      let prev = res.out;
      for (let n = 0; n < (st.phases.max ?? 20) && !st.phases.done(prev); n++) {
        if (ctx.io.ask) await ctx.io.ask('   [Enter] for the next phase');
        let out = prev;
        for (let k = 0; k < 60 && out === prev; k++) {
          await advance(ctx, st.phases.step ?? '5s');
          out = (await sh(ctx, command, { workload: !!st.workload }).done).out;
        }
        ctx.io.write(`${indent(`$ ${command}`, '   ')}\n${indent(out)}\n`);
        prev = out;
      }
      res = { ...res, out: prev };
    }
    if (!st.watch && st.until) {
      res.waited = await advanceUntil(ctx, st.until);
      if (res.waited === 'done') ctx.io.write(`   … ${st.until.what}\n`);
    }
    results.push(res);
    ctx.io.write('\n');
    await ctx.afterStep?.(st.id);
  }
  return results;
}

/** A copy of a JSON kubeconfig with another current context (the workload cluster's); it holds the token: 0600 (issue 32). */
export function kubeconfigWithContext(file: string, context: string, out: string): string {
  const kc = JSON.parse(readFileSync(file, 'utf8')) as { 'current-context'?: string; contexts?: { name: string }[] };
  if (!kc.contexts?.some((c) => c.name === context)) throw new Error(`${file}: no context "${context}" (is the workload cluster up?)`);
  kc['current-context'] = context;
  writeSecretFile(out, JSON.stringify(kc, null, 2));
  return out;
}
