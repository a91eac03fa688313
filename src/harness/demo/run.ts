/**
 * The guided demo's engine (src/harness/demo/documents.ts has the two documents' steps):
 * each step prints the document's command with its placeholders filled in,
 * waits for Enter (or goes on by itself with --auto), runs it with the real
 * kubectl against the served testbed, says what to look at — computed from
 * the output beside it and the live state, never written in advance — and
 * moves virtual time through serve's time API only as far as the step needs
 * (time stays paused between steps, so a presenter can talk).
 *
 * How time moves after an action (issue 34, "motion the eye can follow"):
 * with a pace (virtual seconds per wall second, `--pace`, the default when
 * a person presses Enter) the live clock runs at that speed until the step's
 * condition holds, so the audience sees Provisioning → Running → Deleting
 * happen and a `-w` watch streams line by line; without one (`--auto` in CI)
 * time is advanced in steps as fast as the testbed goes. A wait that stops
 * making progress (the same stalls for 4 minutes of virtual time) is cut
 * short and explained with the stalls of GET /_testbed/status (the "why is
 * it waiting?" of the dashboard).
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
  /** Virtual seconds per wall second while a step waits (the live clock runs); undefined or 0: advance in steps, at once. */
  pace?: number;
  /** The workload cluster's kubectl context (printed where a command switches to it). */
  workloadContext?: string;
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
  /** What to look at: computed after the command from its output and the live state (a string only where nothing can contradict it). */
  look: string | ((ctx: DemoCtx, out: string) => Promise<string> | string);
  /** Wait for this before the command runs (what the document's check needs to be true first). */
  before?: Until;
  until?: Until;
  /** Show the Kube-OVN phases one at a time: run the command again after each phase change until `done` says so. */
  phases?: { done: (out: string) => boolean; step?: string; max?: number };
}

/** One frame of the demo: the command, the kubectl output printed beside it and the narration printed under it. */
export type StepResult = { id: string; command?: string; code: number; out: string; look: string; waited?: 'done' | 'stalled' };

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

/** Run a shell command line with the real kubectl on PATH; stdout+stderr, the exit code. `onLine` gets each complete line as it comes (a watch streams). */
export function sh(ctx: DemoCtx, command: string, opts: { workload?: boolean; timeoutMs?: number; env?: Record<string, string>; onLine?: (line: string) => void } = {}): { done: Promise<{ code: number; out: string }>; stop: () => void; out: () => string } {
  const env = { ...process.env, KUBECONFIG: opts.workload ? ctx.workloadKubeconfig : ctx.kubeconfig, PATH: `${ctx.kubectl.replace(/\/kubectl$/, '')}:${process.env.PATH ?? '/usr/bin:/bin'}`, ...opts.env };
  const child = spawn('/bin/sh', ['-c', `exec ${command}`], { cwd: ctx.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let pending = '';
  const take = (d: Buffer): void => {
    const text = d.toString('utf8');
    out += text;
    if (!opts.onLine) return;
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const l of lines) opts.onLine(l);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  const done = new Promise<{ code: number; out: string }>((resolve) => child.on('close', (code) => {
    clearTimeout(timer);
    if (pending && opts.onLine) opts.onLine(pending);
    pending = '';
    resolve({ code: code ?? 1, out });
  }));
  return { done, stop: () => child.kill('SIGTERM'), out: () => out };
}

/** Virtual time a wait may see the same stalls and no change on any hostname before it is cut short. */
const STUCK_MS = 6 * 60_000;

/**
 * What a stuck wait keeps the same: the stalls, and every hostname's machine, phase and disk
 * (a rollout elsewhere that goes on — the control plane while a worker MachineSet is held — is progress).
 */
async function progressKey(ctx: DemoCtx): Promise<{ key: string; stalls: Stall[] }> {
  const st = await getJson<{ why: Stall[]; hosts: { hostname: string; machine: string; phase: string; disks: { state: string }[] }[] }>(ctx, '/_testbed/status');
  const now = st.why ?? [];
  if (!now.length) return { key: '', stalls: now };
  return { key: `${now.map((x) => `${x.kind}/${x.name}/${x.reason}`).join(',')}|${st.hosts.map((h) => `${h.hostname}=${h.machine}:${h.phase}:${h.disks.map((d) => d.state).join('+')}`).join(',')}`, stalls: now };
}

const timeNow = async (ctx: DemoCtx): Promise<number> => (await getJson<{ now: number }>(ctx, '/_testbed/time')).now;

function stuck(ctx: DemoCtx, u: Until, now: Stall[]): 'stalled' {
  ctx.io.write(`   … not progressing: ${u.what}. Why is it waiting? (the dashboard's panel, hcs-testbed status)\n${stallLines(now, '     ').join('\n')}\n`);
  return 'stalled';
}

/**
 * Move time until `u.cond`: at the pace (the live clock runs) or in steps. A
 * stall that stays (the same objects and reasons for 4 minutes of virtual
 * time) ends the wait early, and is printed with its reasons.
 */
export async function advanceUntil(ctx: DemoCtx, u: Until): Promise<'done' | 'stalled'> {
  return ctx.pace ? runAtPace(ctx, u, ctx.pace) : stepUntil(ctx, u);
}

async function stepUntil(ctx: DemoCtx, u: Until): Promise<'done' | 'stalled'> {
  let last = '';
  let since = await timeNow(ctx);
  const max = u.max ?? 240;
  for (let i = 0; i < max; i++) {
    if (await u.cond(ctx)) return 'done';
    await advance(ctx, u.step ?? '30s');
    const t = await timeNow(ctx);
    const { key, stalls: now } = await progressKey(ctx);
    if (key !== last) [last, since] = [key, t];
    if (key && t - since >= STUCK_MS) return stuck(ctx, u, now);
  }
  if (await u.cond(ctx)) return 'done';
  ctx.io.write(`   … not within ${max} × ${u.step ?? '30s'} of virtual time: ${u.what}\n`);
  return 'stalled';
}

/** The live clock at `pace` virtual s per wall s until the condition (polled every 200 ms of wall time), then paused again. */
async function runAtPace(ctx: DemoCtx, u: Until, pace: number): Promise<'done' | 'stalled'> {
  const stepMs = parseDuration(u.step ?? '30s');
  const budget = (u.max ?? 240) * stepMs;
  const start = await timeNow(ctx);
  if (await u.cond(ctx)) return 'done';
  await api(ctx, 'POST', '/_testbed/time/speed', { speed: pace });
  await api(ctx, 'POST', '/_testbed/time/resume');
  let last = '';
  let since = start;
  try {
    for (;;) {
      await new Promise((r) => setTimeout(r, 200));
      if (await u.cond(ctx)) return 'done';
      const t = await timeNow(ctx);
      const { key, stalls: now } = await progressKey(ctx);
      if (key !== last) [last, since] = [key, t];
      if (key && t - since >= STUCK_MS) return stuck(ctx, u, now);
      if (t - start > budget) {
        ctx.io.write(`   … not within ${Math.round(budget / 60_000)} min of virtual time: ${u.what}\n`);
        return 'stalled';
      }
    }
  } finally {
    await api(ctx, 'POST', '/_testbed/time/pause');
  }
}

/** "30s", "5m", "1h30m" → ms (the demo's own step sizes). */
export function parseDuration(d: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000 };
  let ms = 0;
  for (const m of d.matchAll(/(\d+)([hms])/g)) ms += Number(m[1]) * units[m[2]!]!;
  if (!ms) throw new Error(`not a duration: ${d}`);
  return ms;
}

const indent = (s: string, p = '     '): string => s.trimEnd().split('\n').map((l) => `${p}${l}`).join('\n');

/** Run the steps in order; the results, one per step (the frames: command, output, narration). */
export async function runSteps(ctx: DemoCtx, steps: readonly Step[], title: string): Promise<StepResult[]> {
  const results: StepResult[] = [];
  await api(ctx, 'POST', '/_testbed/time/pause');
  ctx.io.write(`${title}\n(virtual time is paused between steps; after each action it ${ctx.pace ? `runs at ${ctx.pace} virtual s per wall s` : 'is advanced'} only as far as the step needs)\n\n`);
  for (const [i, st] of steps.entries()) {
    ctx.io.write(`── ${i + 1}/${steps.length} ${st.title}\n`);
    const prepared = st.prepare ? await st.prepare(ctx) : undefined;
    if (prepared) ctx.io.write(`   (done for you: ${prepared})\n`);
    if (st.before) {
      ctx.io.write(`   (first: ${st.before.what})\n`);
      const w = await advanceUntil(ctx, st.before);
      if (w === 'done') ctx.io.write(`   … ${st.before.what}: yes\n`);
    }
    const command = st.command ? await st.command(ctx) : undefined;
    const env = st.env?.(ctx);
    if (command) ctx.io.write(`${st.workload ? `   [workload cluster${ctx.workloadContext ? `: context ${ctx.workloadContext}, as kubectl --context ${ctx.workloadContext}` : ''}]\n` : ''}${env ? `   [with ${Object.entries(env).map(([k, x]) => `${k}=${x}`).join(' ')}]\n` : ''}${indent(`$ ${command}`, '   ')}\n`);
    if (ctx.io.ask) await ctx.io.ask('   [Enter] to run');
    let res: StepResult = { id: st.id, code: 0, out: '', look: '' };
    if (command && st.watch) {
      // The watch's lines are printed as they come, while time moves. At a pace the clock runs before the watch starts
      // (a watch started on a paused clock is warned that nothing changes: src/harness/dashboard/extension.ts).
      if (ctx.pace && st.until) {
        await api(ctx, 'POST', '/_testbed/time/speed', { speed: ctx.pace });
        await api(ctx, 'POST', '/_testbed/time/resume');
      }
      const w = sh(ctx, command, { workload: !!st.workload, timeoutMs: 600_000, onLine: (l) => ctx.io.write(`${indent(l)}\n`) });
      const waited = st.until ? await advanceUntil(ctx, st.until) : 'done';
      await new Promise((r) => setTimeout(r, 300)); // the watch prints the last change (bounded: 0.3 s)
      w.stop();
      const done = await w.done;
      res = { id: st.id, command, code: 0, out: done.out, look: '', waited };
    } else if (command) {
      const done = await sh(ctx, command, { workload: !!st.workload, ...(env ? { env } : {}) }).done;
      res = { id: st.id, command, code: done.code, out: done.out, look: '' };
      if (st.saveAs) writeFileSync(join(ctx.dir, st.saveAs), done.out);
      ctx.io.write(`${indent(done.out.length > 4000 ? `${done.out.slice(0, 4000)}\n… (${done.out.length} characters)` : done.out)}\n`);
      if (done.code !== 0) ctx.io.write(`   exit code ${done.code}\n`);
    }
    const edited = st.edit ? await st.edit(ctx) : undefined;
    if (edited) ctx.io.write(`   (done for you: ${edited})\n`);
    const look = async (out: string): Promise<string> => (typeof st.look === 'string' ? st.look : await st.look(ctx, out));
    let said: string | undefined;
    if (st.phases && command) {
      // The phases one at a time: each printed with what it means (computed from the printed output).
      said = await look(res.out);
      ctx.io.write(`   look: ${said}\n`);
      results.push({ ...res, id: `${st.id}#0`, look: said });
      let prev = res.out;
      for (let n = 0; n < (st.phases.max ?? 20) && !st.phases.done(prev); n++) {
        if (ctx.io.ask) await ctx.io.ask('   [Enter] for the next phase');
        let out = prev;
        for (let k = 0; k < 60 && out === prev; k++) {
          await advance(ctx, st.phases.step ?? '5s');
          out = (await sh(ctx, command, { workload: !!st.workload }).done).out;
        }
        said = await look(out);
        ctx.io.write(`${indent(`$ ${command}`, '   ')}\n${indent(out)}\n   look: ${said}\n`);
        results.push({ id: `${st.id}#${n + 1}`, command, code: 0, out, look: said });
        prev = out;
      }
      res = { ...res, out: prev };
    }
    if (!st.watch && st.until) {
      res.waited = await advanceUntil(ctx, st.until);
      if (res.waited === 'done') ctx.io.write(`   … ${st.until.what}\n`);
    }
    // The narration of the frame: computed now, from the output printed above and the state it led to.
    if (said !== undefined) res.look = said;
    else {
      res.look = await look(res.out);
      ctx.io.write(`   look: ${res.look}\n`);
    }
    if (said === undefined) results.push(res);
    else results.push({ ...res, id: st.id });
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
