/**
 * What the per-service call modules (ecs.ts, evs.ts, vpc.ts, ims.ts, iam.ts)
 * need of the client: one authenticated call of a catalogued operation
 * (src/core/hcs), and the error it throws.
 */
import type { HcsOperation, ParamsOf } from '../../core/hcs/index.js';

export class HcsApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly operation: string,
    readonly requestId?: string,
  ) {
    super(`${operation}: HTTP ${status} ${code}: ${message}${requestId ? ` (request ${requestId})` : ''}`);
    this.name = 'HcsApiError';
  }
}

/** The path parameters of an operation besides the project (the client fills that in). */
export type PathParams<O extends HcsOperation> = Record<Exclude<ParamsOf<O['path']>, 'project_id'>, string>;

export interface CallOptions {
  /** Query string, "" or starting with "?" (queryString from src/core/hcs). */
  query?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface HcsCaller {
  readonly projectId: string;
  /** Call `op` on its path (parameters filled in, the project id too); the parsed JSON answer, or HcsApiError on a non-2xx status. */
  call<T, O extends HcsOperation = HcsOperation>(op: O, params: PathParams<O>, o?: CallOptions): Promise<T>;
  /** A GET of `op` that maps 404 to undefined. */
  find<T, O extends HcsOperation = HcsOperation>(op: O, params: PathParams<O>, o?: CallOptions): Promise<T | undefined>;
}
