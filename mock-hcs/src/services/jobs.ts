/**
 * The job store (ECS/EVS asynchronous jobs and their sub-jobs): creation,
 * completion and lookup, shared by every service.
 */
import type { Clock } from '../../../src/core/index.js';
import { Codes } from '../errors.js';
import type { JobRec, Store, SubJobRec } from '../state.js';
import { own } from '../validate.js';
import type { IdAllocator } from './ids.js';

export type Recorder = (type: string, message: string, data?: Record<string, unknown>, rules?: string[]) => void;

export class JobStore {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly ids: IdAllocator,
    private readonly record: Recorder,
  ) {}

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
    return job;
  }

  newSubJob(jobType: string, entities: Record<string, string>): SubJobRec {
    return { job_id: this.ids.newJobId(), job_type: jobType, status: 'RUNNING', begin_time: this.clock.now(), entities };
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
}
