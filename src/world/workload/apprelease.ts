/**
 * AppRelease (app.alauda.io/v1) in a workload cluster, and a controller that
 * models how the chart of a release moves (OVN-4, OVN-5):
 *
 * - first install: Downloading → Installing → HealthChecking → Success;
 * - targetRevision change: Upgrading (Sync Unknown/Syncing, installedRevision
 *   still the old one) → HealthChecking (Sync True/Synced, installedRevision =
 *   target) → Success (Validate, Sync, Health True); about a minute in total;
 * - spec.values change only: Syncing → Success;
 * - a targetRevision the chart repository does not serve → DownloadFailed;
 * - annotation `testbed.hcs/fail: DeployFailed | NotReady | DownloadFailed`
 *   makes the next transition fail there. Failed phases need intervention:
 *   they stay until the spec changes or the annotation is removed, then the
 *   controller retries.
 *
 * Everything is derived from the object and the clock (the phase start time
 * is in status.charts[...].lastTransitionTime), so a restarted controller
 * continues where it was.
 */
import { FAILED_PHASES, chartOf, type AppReleasePhase, type AppReleaseCondition, type AppReleaseChartStatus, type AppReleaseStatus, type AppRelease } from '../../product/api/apprelease.js';
import { rfc3339 } from '../../core/clock.js';
import { errorMessage } from '../../core/errors.js';
import type { KubeClient } from '../../core/kube/client.js';
import { isConflict } from '../../core/kube/errors.js';
import type { WatchEvent } from '../../core/kube/types.js';
import { EventRecorder, type ControllerContext, type Logger } from '../../core/runtime/context.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import { kubeOvnHealth } from './kube-ovn-health.js';
import type { OsSupportMatrix } from '../../product/matrix/matrix.js';

export const APPRELEASE_CONTROLLER = 'apprelease';
export const APPRELEASE_DEPLOYMENT = 'apprelease-controller';
/** Fault injection: the next transition of the release fails in this phase (OVN-5). */
export const ANN_APPRELEASE_FAIL = 'testbed.hcs/fail';

/** Durations of the phases (virtual ms). Upgrading + HealthChecking ≈ one minute (OVN-4). */
export interface AppReleaseTimings {
  downloadMs: number;
  installMs: number;
  upgradeMs: number;
  healthCheckMs: number;
  syncMs: number;
}
/** HealthChecking re-verifies the Kube-OVN pods this often while some are not Ready. */
export const HEALTH_RECHECK_MS = 5_000;
export const DEFAULT_APPRELEASE_TIMINGS: AppReleaseTimings = { downloadMs: 5_000, installMs: 20_000, upgradeMs: 25_000, healthCheckMs: 30_000, syncMs: 5_000 };

// ---- helpers ---------------------------------------------------------------------------


/**
 * OVN-6: the chart upgrade is done only when the phase is Success AND
 * installedRevision equals the target. installedRevision alone is not enough:
 * it switches to the target at HealthChecking, before the pods are verified.
 */
export function ovnUpgradeDone(ar: AppRelease | undefined, target: string): boolean {
  if (!ar) return false;
  const st = chartOf(ar).status;
  return st?.phase === 'Success' && st.installedRevision === target;
}

/**
 * OVN-6 detector: a check that looks at installedRevision alone would say
 * "done" now, although the release is not. Returns the warning, or undefined
 * when installedRevision and phase agree.
 */
export function installedRevisionTrap(ar: AppRelease | undefined, target: string): string | undefined {
  if (!ar) return undefined;
  const st = chartOf(ar).status;
  if (st?.installedRevision === target && st.phase !== 'Success') {
    return `OVN-6: AppRelease ${ar.metadata.namespace}/${ar.metadata.name} already reports installedRevision ${target} but phase is ${st.phase}; the upgrade is not done until phase is Success (a check trusting installedRevision alone is wrong)`;
  }
  return undefined;
}

/**
 * Judge a caller's "upgrade done" claim (e.g. a scenario check): flags a claim
 * made while the release is not Success (OVN-6).
 */
export function judgeDoneClaim(ar: AppRelease | undefined, target: string, claimedDone: boolean): { ok: boolean; message?: string } {
  const done = ovnUpgradeDone(ar, target);
  if (claimedDone === done) return { ok: true };
  if (claimedDone) return { ok: false, message: installedRevisionTrap(ar, target) ?? `OVN-6: claimed done but the release is not at ${target} with phase Success` };
  return { ok: false, message: `OVN-6: the release is at ${target} with phase Success, but the check did not see it` };
}

function setCond(conds: AppReleaseCondition[], c: Omit<AppReleaseCondition, 'lastTransitionTime'>, now: number): void {
  const i = conds.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? conds[i] : undefined;
  const next: AppReleaseCondition = {
    type: c.type,
    status: c.status,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
    lastTransitionTime: prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339(now),
  };
  if (i >= 0) conds[i] = next;
  else conds.push(next);
}

function hashValues(v: unknown): string {
  const canon = (x: unknown): unknown =>
    Array.isArray(x) ? x.map(canon) : typeof x === 'object' && x !== null ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, canon((x as Record<string, unknown>)[k])])) : x;
  return JSON.stringify(canon(v ?? {}));
}

// ---- controller ------------------------------------------------------------------------

export interface AppReleaseControllerOptions {
  /** Chart repository contents (matrix chartRepository). */
  matrix: OsSupportMatrix;
  timings?: Partial<AppReleaseTimings>;
}

/** Work-item key: "<cluster namespace>/<cluster name>|<namespace>/<name>". */
export function appReleaseKey(clusterKey: string, ar: { metadata: { namespace?: string; name: string } }): string {
  return `${clusterKey}|${ar.metadata.namespace ?? 'default'}/${ar.metadata.name}`;
}

export class AppReleaseController implements Controller {
  readonly name = APPRELEASE_CONTROLLER;
  private readonly timings: AppReleaseTimings;
  private readonly log: Logger;
  private readonly watched = new Set<string>();
  private readonly recorders = new Map<string, EventRecorder>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly opts: AppReleaseControllerOptions,
  ) {
    this.timings = { ...DEFAULT_APPRELEASE_TIMINGS, ...(opts.timings ?? {}) };
    this.log = ctx.logs.logger(APPRELEASE_DEPLOYMENT, APPRELEASE_CONTROLLER);
  }

  /** Subscribe to the AppReleases of a workload cluster ("ns/name") once; resync the existing ones. */
  watchCluster(clusterKey: string): void {
    if (this.watched.has(clusterKey)) return;
    this.watched.add(clusterKey);
    const client = this.client(clusterKey);
    client.watch<AppRelease>('AppRelease', (e: WatchEvent<AppRelease>) => {
      if (e.type !== 'DELETED') this.ctx.manager.enqueue(APPRELEASE_CONTROLLER, appReleaseKey(clusterKey, e.object));
    }, { shared: true });
    void client.list<AppRelease>('AppRelease').then((all) => {
      for (const ar of all) this.ctx.manager.enqueue(APPRELEASE_CONTROLLER, appReleaseKey(clusterKey, ar));
    });
  }

  private client(clusterKey: string): KubeClient {
    const [ns, name] = clusterKey.split('/') as [string, string];
    return this.ctx.workloads.client(ns, name);
  }

  private recorder(clusterKey: string): EventRecorder {
    let r = this.recorders.get(clusterKey);
    if (!r) {
      r = new EventRecorder(this.client(clusterKey), this.ctx.events, this.ctx.clock);
      this.recorders.set(clusterKey, r);
    }
    return r;
  }

  async reconcile(key: string): Promise<Result | void> {
    const [clusterKey, objKey] = key.split('|') as [string, string];
    const [namespace, name] = objKey.split('/') as [string, string];
    const client = this.client(clusterKey);
    const ar = await client.get<AppRelease>({ kind: 'AppRelease', namespace, name });
    if (!ar) return;
    const source = ar.spec.source?.charts?.[0];
    const now = this.ctx.clock.now();
    const status: AppReleaseStatus = structuredClone(ar.status ?? {});
    const conds = (status.conditions ??= []);
    const charts = (status.charts ??= {});
    if (!source?.name || !source.targetRevision) {
      setCond(conds, { type: 'Validate', status: 'False', reason: 'InvalidSpec', message: 'spec.source.charts[0] needs name, releaseName and targetRevision' }, now);
      await this.save(client, ar, status);
      return;
    }
    setCond(conds, { type: 'Validate', status: 'True', reason: 'Validated' }, now);
    const target = source.targetRevision;
    const cur = charts[source.name];
    const fail = ar.metadata.annotations?.[ANN_APPRELEASE_FAIL] as AppReleasePhase | undefined;
    const valuesHash = hashValues(ar.spec.values);
    let next: AppReleaseChartStatus | undefined;
    /** HealthChecking past its time with pods not Ready: same phase, message naming them. */
    let waiting: AppReleaseChartStatus | undefined;
    let requeue: number | undefined;

    const since = cur?.lastTransitionTime ? Date.parse(cur.lastTransitionTime) : now;
    const elapsed = now - since;
    const phase = cur?.phase;
    const start = (p: AppReleasePhase, installed: string | undefined, message?: string): AppReleaseChartStatus => ({
      ...(installed ? { installedRevision: installed } : {}),
      phase: p,
      targetRevision: target,
      ...(message ? { message } : {}),
      lastTransitionTime: rfc3339(now),
    });
    const served = this.opts.matrix.chartVersions(source.name);
    const retry = cur && FAILED_PHASES.includes(cur.phase) && (cur.targetRevision !== target || fail !== cur.phase || status.observedGeneration !== ar.metadata.generation);

    if (!cur || retry || (cur.targetRevision !== target && cur.phase !== 'HealthChecking')) {
      // A new target (or a retry after intervention): validate it against the chart repository first.
      const installed = cur?.installedRevision;
      if (!served.includes(target) || fail === 'DownloadFailed') {
        const msg = !served.includes(target)
          ? `chart ${source.name} version ${target} not found in the chart repository (available: ${served.join(', ') || 'none'})`
          : `download of chart ${source.name} ${target} failed (injected by annotation ${ANN_APPRELEASE_FAIL})`;
        next = start('DownloadFailed', installed, msg);
      } else if (installed === target) {
        // Already applied (a retry after NotReady, or a target set back): verify the pods again.
        next = start('HealthChecking', installed, `verifying kube-ovn pods of ${source.releaseName} ${target}`);
        requeue = this.timings.healthCheckMs;
      } else if (!installed) {
        next = start('Downloading', undefined);
        requeue = this.timings.downloadMs;
      } else {
        next = start('Upgrading', installed, `helm upgrade ${source.releaseName} ${installed} -> ${target}`);
        requeue = this.timings.upgradeMs;
      }
    } else if (cur.targetRevision !== target && cur.phase === 'HealthChecking') {
      // Retargeted while the previous revision is being verified: upgrade from the installed one.
      next = start('Upgrading', cur.installedRevision, `helm upgrade ${source.releaseName} ${cur.installedRevision} -> ${target}`);
      requeue = this.timings.upgradeMs;
    } else {
      switch (phase) {
        case 'Downloading':
          if (elapsed < this.timings.downloadMs) requeue = this.timings.downloadMs - elapsed;
          else {
            next = start('Installing', undefined, `helm install ${source.releaseName} ${target}`);
            requeue = this.timings.installMs;
          }
          break;
        case 'Installing':
        case 'Upgrading':
          if (elapsed < (phase === 'Installing' ? this.timings.installMs : this.timings.upgradeMs)) {
            requeue = (phase === 'Installing' ? this.timings.installMs : this.timings.upgradeMs) - elapsed;
          } else if (fail === 'DeployFailed') {
            next = start('DeployFailed', cur.installedRevision, `helm ${phase === 'Installing' ? 'install' : 'upgrade'} of ${source.releaseName} to ${target} failed: post-upgrade hook kube-ovn-pre-check failed (injected by annotation ${ANN_APPRELEASE_FAIL})`);
          } else {
            next = start('HealthChecking', target, `helm release ${source.releaseName} ${target} applied; verifying kube-ovn pods`);
            requeue = this.timings.healthCheckMs;
          }
          break;
        case 'HealthChecking':
          if (elapsed < this.timings.healthCheckMs) requeue = this.timings.healthCheckMs - elapsed;
          else if (fail === 'NotReady') next = start('NotReady', cur.installedRevision, `kube-ovn pods not Ready after ${Math.round(this.timings.healthCheckMs / 1000)}s: kube-ovn-cni 2/3 Ready (injected by annotation ${ANN_APPRELEASE_FAIL})`);
          else {
            // Verify the Kube-OVN pods in the workload cluster (kube-ovn-health.ts): a pod not Ready keeps the release here.
            const health = await kubeOvnHealth(client);
            if (health.ready) next = start('Success', cur.installedRevision);
            else {
              const msg = `verifying kube-ovn pods of ${source.releaseName} ${target}: ${health.summary}; not Ready: ${health.notReady.join(', ')}`;
              if (cur.message !== msg) {
                this.ctx.events.record({ source: 'workload', type: 'apprelease.pods-not-ready', message: `AppRelease ${objKey} in ${clusterKey}: ${msg}`, data: { cluster: clusterKey, appRelease: objKey, notReady: health.notReady }, rules: ['OVN-4'] });
              }
              waiting = { ...cur, message: msg };
              requeue = HEALTH_RECHECK_MS;
            }
          }
          break;
        case 'Syncing':
          if (elapsed < this.timings.syncMs) requeue = this.timings.syncMs - elapsed;
          else next = start('Success', cur.installedRevision);
          break;
        case 'Success':
          if (status.valuesHash !== undefined && status.valuesHash !== valuesHash) {
            next = start('Syncing', cur.installedRevision, 'values changed');
            requeue = this.timings.syncMs;
          }
          break;
        default:
          break; // failed phases wait for intervention
      }
    }

    if (waiting) charts[source.name] = waiting;
    const eff = next ?? waiting ?? cur!;
    if (next) {
      charts[source.name] = next;
      this.log.info(`AppRelease ${objKey} (cluster ${clusterKey}) chart ${source.name}: ${cur?.phase ?? '(new)'} -> ${next.phase}`, { appRelease: objKey, cluster: clusterKey, installedRevision: next.installedRevision, targetRevision: target, phase: next.phase, rules: ['OVN-4'] });
      this.ctx.events.record({
        source: 'workload',
        type: 'apprelease.phase',
        message: `AppRelease ${objKey} in ${clusterKey}: ${source.name} ${cur?.phase ?? '(new)'} -> ${next.phase} (installedRevision ${next.installedRevision ?? 'none'}, target ${target})`,
        data: { cluster: clusterKey, appRelease: objKey, phase: next.phase, installedRevision: next.installedRevision, targetRevision: target },
        rules: FAILED_PHASES.includes(next.phase) ? ['OVN-5'] : ['OVN-4'],
      });
      if (FAILED_PHASES.includes(next.phase)) {
        await this.recorder(clusterKey).record('workload', APPRELEASE_DEPLOYMENT, ar, 'Warning', next.phase, next.message ?? next.phase, ['OVN-5']);
      }
      const trap = installedRevisionTrap({ ...ar, status: { ...status, charts } }, target);
      if (trap) {
        this.ctx.events.record({ source: 'workload', type: 'apprelease.installed-revision-not-done', message: trap, data: { cluster: clusterKey, appRelease: objKey, phase: next.phase }, rules: ['OVN-6'] });
      }
    }
    this.conditionsFor(conds, eff, now);
    status.observedGeneration = ar.metadata.generation;
    if (eff.phase === 'Success' || status.valuesHash === undefined) status.valuesHash = valuesHash;
    await this.save(client, ar, status);
    return requeue !== undefined ? { requeueAfter: Math.max(1, requeue) } : undefined;
  }

  /** Validate / Sync / Health as the AppRelease API reports them for a phase. */
  private conditionsFor(conds: AppReleaseCondition[], st: AppReleaseChartStatus, now: number): void {
    const msg = st.message;
    switch (st.phase) {
      case 'Downloading':
      case 'Installing':
      case 'Upgrading':
      case 'Syncing':
        setCond(conds, { type: 'Sync', status: 'Unknown', reason: 'Syncing', ...(msg ? { message: msg } : {}) }, now);
        setCond(conds, { type: 'Health', status: 'Unknown', reason: st.phase }, now);
        break;
      case 'HealthChecking':
        setCond(conds, { type: 'Sync', status: 'True', reason: 'Synced' }, now);
        setCond(conds, { type: 'Health', status: 'Unknown', reason: 'HealthChecking', ...(msg ? { message: msg } : {}) }, now);
        break;
      case 'Success':
        setCond(conds, { type: 'Sync', status: 'True', reason: 'Synced' }, now);
        setCond(conds, { type: 'Health', status: 'True', reason: 'Healthy' }, now);
        break;
      case 'DownloadFailed':
      case 'DeployFailed':
        setCond(conds, { type: 'Sync', status: 'False', reason: st.phase, ...(msg ? { message: msg } : {}) }, now);
        setCond(conds, { type: 'Health', status: 'Unknown', reason: st.phase }, now);
        break;
      case 'NotReady':
        setCond(conds, { type: 'Sync', status: 'True', reason: 'Synced' }, now);
        setCond(conds, { type: 'Health', status: 'False', reason: 'NotReady', ...(msg ? { message: msg } : {}) }, now);
        break;
    }
  }

  private async save(client: KubeClient, ar: AppRelease, status: AppReleaseStatus): Promise<void> {
    if (JSON.stringify(ar.status ?? {}) === JSON.stringify(status)) return;
    try {
      await client.updateStatus<AppRelease>({ ...ar, status });
    } catch (e) {
      // Someone changed the object meanwhile (e.g. a kubectl patch): the watch re-queues it.
      if (!isConflict(e)) throw new Error(`AppRelease status update failed: ${errorMessage(e)}`);
    }
  }
}

/** Register the AppRelease controller; watches every workload cluster known now and, when the backend can tell, every new one. */
export function setupAppReleaseController(ctx: ControllerContext, opts: AppReleaseControllerOptions): AppReleaseController {
  const c = new AppReleaseController(ctx, opts);
  ctx.manager.register(c);
  for (const k of ctx.workloads.names()) c.watchCluster(k);
  const w = ctx.workloads as { onCreate?: (l: (key: string, store: unknown) => void) => void };
  w.onCreate?.((key) => c.watchCluster(key));
  return c;
}
