/**
 * The job store (ECS/EVS asynchronous jobs and their sub-jobs): creation,
 * completion, lookup and pruning, shared by every service.
 *
 * Pruning keeps the state bounded: finished jobs are queued in the order
 * they finished; whenever a job finishes or is created, the oldest finished
 * ones are dropped while they are older than the retention or more than the
 * maximum are kept, together with the X-Client-Token entries that answer
 * with them (a replay after that creates anew, as after the real token's
 * expiry). Running jobs are never dropped.
 */
import type { Clock } from '../../../src/core/index.js';
import { DEFAULT_JOB_RETENTION_MS, DEFAULT_MAX_FINISHED_JOBS, type CloudConfig } from '../config.js';
import { Codes } from '../errors.js';
import type { JobRec, Store, SubJobRec } from '../state.js';
import { own } from '../validate.js';
import type { IdAllocator } from './ids.js';

export type Recorder = (type: string, message: string, data?: Record<string, unknown>, rules?: string[]) => void;

export class JobStore {
  private readonly retentionMs: number;
  private readonly maxFinished: number;
  /** Finished job ids in the order they finished (from `head` on); built lazily from the document. */
  private finished: string[] | undefined;
  private head = 0;
  /** job id -> X-Client-Token keys answering with it. */
  private tokensByJob: Map<string, string[]> | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly ids: IdAllocator,
    private readonly record: Recorder,
    config?: Pick<CloudConfig, 'jobs'>,
  ) {
    this.retentionMs = config?.jobs?.retentionMs ?? DEFAULT_JOB_RETENTION_MS;
    this.maxFinished = config?.jobs?.maxFinished ?? DEFAULT_MAX_FINISHED_JOBS;
    store.onReplace(() => {
      this.finished = undefined;
      this.tokensByJob = undefined;
    });
  }

  private get data() {
    return this.store.data;
  }

  newJob(projectId: string, jobType: string, entities: Record<string, unknown>, subJobs?: SubJobRec[]): JobRec {
    const job: JobRec = {
      job_id: this.ids.newJobId(),
      projectId,
      job_type: jobType,
      status: 'INIT',
      begin_time: this.clock.now(),
      entities,
      ...(subJobs ? { sub_jobs: subJobs } : {}),
    };
    this.data.jobs[job.job_id] = job;
    this.prune();
    return job;
  }

  newSubJob(jobType: string, entities: Record<string, string>): SubJobRec {
    return { job_id: this.ids.newJobId(), job_type: jobType, status: 'RUNNING', begin_time: this.clock.now(), entities };
  }

  /** Remember the X-Client-Token key answering with `jobId` (dropped with the job). */
  noteClientToken(jobId: string, key: string): void {
    const m = this.tokenIndex();
    m.set(jobId, [...(m.get(jobId) ?? []), key]);
  }

  /** Finish a job without sub-jobs. */
  endJob(jobId: string, ok: boolean, code?: string, reason?: string): void {
    const job = own(this.data.jobs, jobId);
    if (!job || job.status === 'SUCCESS' || job.status === 'FAIL') return;
    job.status = ok ? 'SUCCESS' : 'FAIL';
    job.end_time = this.clock.now();
    if (!ok) {
      job.error_code = code ?? Codes.internal;
      job.fail_reason = reason ?? 'operation failed';
    }
    this.record(ok ? 'job.succeeded' : 'job.failed', `job ${job.job_type} ${job.job_id} ${job.status}${ok ? '' : `: ${job.error_code} ${job.fail_reason}`}`, {
      jobId: job.job_id,
      jobType: job.job_type,
      ...(ok ? {} : { errorCode: job.error_code, failReason: job.fail_reason }),
    });
    // The lazily built queue already holds it when it was built after this point.
    if (this.finished && this.finished[this.finished.length - 1] !== job.job_id) this.finished.push(job.job_id);
    this.prune();
  }

  /** Finish the sub-job of `jobId` about `serverId`; the parent ends when every sub-job has. */
  endSubJob(jobId: string, serverId: string, ok: boolean, code?: string, reason?: string): void {
    const job = own(this.data.jobs, jobId);
    if (!job?.sub_jobs) return;
    const sj = job.sub_jobs.find((s) => s.entities.server_id === serverId && (s.status === 'RUNNING' || s.status === 'INIT'));
    if (!sj) return;
    sj.status = ok ? 'SUCCESS' : 'FAIL';
    sj.end_time = this.clock.now();
    if (!ok) {
      sj.error_code = code ?? Codes.internal;
      sj.fail_reason = reason ?? 'operation failed';
    }
    if (job.sub_jobs.every((s) => s.status === 'SUCCESS' || s.status === 'FAIL')) {
      const failed = job.sub_jobs.find((s) => s.status === 'FAIL');
      this.endJob(jobId, !failed, failed?.error_code, failed?.fail_reason);
    } else if (job.status === 'INIT') {
      job.status = 'RUNNING';
    }
  }

  job(projectId: string, jobId: string): JobRec | undefined {
    const j = own(this.data.jobs, jobId);
    return j && j.projectId === projectId ? j : undefined;
  }

  private queue(): string[] {
    if (!this.finished) {
      const done = Object.values(this.data.jobs).filter((j) => j.status === 'SUCCESS' || j.status === 'FAIL');
      done.sort((a, b) => (a.end_time ?? 0) - (b.end_time ?? 0) || (a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0));
      this.finished = done.map((j) => j.job_id);
      this.head = 0;
    }
    return this.finished;
  }

  private tokenIndex(): Map<string, string[]> {
    if (!this.tokensByJob) {
      this.tokensByJob = new Map();
      for (const [k, t] of Object.entries(this.data.clientTokens)) this.tokensByJob.set(t.response.job_id, [...(this.tokensByJob.get(t.response.job_id) ?? []), k]);
    }
    return this.tokensByJob;
  }

  /** Drop the oldest finished jobs beyond the retention or the maximum count. */
  private prune(): void {
    const q = this.queue();
    const oldest = this.clock.now() - this.retentionMs;
    let dropped = 0;
    while (this.head < q.length) {
      const id = q[this.head]!;
      const j = own(this.data.jobs, id);
      const live = q.length - this.head;
      if (j && (j.status === 'SUCCESS' || j.status === 'FAIL') && live <= this.maxFinished && (j.end_time ?? 0) >= oldest) break;
      this.head++;
      if (!j || (j.status !== 'SUCCESS' && j.status !== 'FAIL')) continue;
      delete this.data.jobs[id];
      const keys = this.tokenIndex().get(id);
      if (keys) {
        for (const k of keys) delete this.data.clientTokens[k];
        this.tokensByJob!.delete(id);
      }
      dropped++;
    }
    if (this.head > 1024 && this.head * 2 > q.length) {
      this.finished = q.slice(this.head);
      this.head = 0;
    }
    if (dropped) this.store.markDirty();
  }
}
