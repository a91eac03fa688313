/**
 * The time API of `hcs-testbed serve` (docs/demo.md), beside the Kubernetes
 * API on the same address:
 *
 *   GET  /_testbed/time                          {now, iso, paused, speed, nextDue, steps}
 *   POST /_testbed/time/pause | resume | next
 *   POST /_testbed/time/speed    {"speed": 10}        (or ?speed=10)
 *   POST /_testbed/time/advance  {"duration": "5m"}   (or ?duration=5m; Go duration syntax)
 *
 * Every answer is the clock's status after the change; a bad request is a
 * metav1.Status with code 400 and nothing changes.
 */
import { parseDuration } from '../../core/clock.js';
import { TimeControlError, type TimeControl } from '../../world/facade/timecontrol.js';

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
  toStatus(): Record<string, unknown> {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, code: this.code };
  }
}

export const badRequest = (message: string): ApiError => new ApiError(400, 'BadRequest', message);

/** A JSON object body (empty body = {}); anything else is a 400. */
export function jsonBody(raw: unknown): Record<string, unknown> {
  const text = typeof raw === 'string' ? raw : Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
  if (text.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw badRequest(`the request body is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badRequest('the request body must be a JSON object');
  return v as Record<string, unknown>;
}

/** Answer a time request (`sub` is what follows /_testbed/time). */
export async function timeRequest(time: TimeControl, method: string, sub: string, body: Record<string, unknown>, query: URLSearchParams): Promise<unknown> {
  const param = (k: string): unknown => body[k] ?? query.get(k) ?? undefined;
  if (sub === '' && method === 'GET') return time.status();
  if (method !== 'POST') throw new ApiError(405, 'MethodNotAllowed', `${method} /_testbed/time${sub}: use GET /_testbed/time or POST /_testbed/time/{pause,resume,speed,advance,next}`);
  try {
    switch (sub) {
      case '/pause':
        return time.pause();
      case '/resume':
        return time.resume();
      case '/next':
        return await time.next();
      case '/speed': {
        const v = param('speed');
        const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
        return time.setSpeed(n);
      }
      case '/advance': {
        const v = param('duration');
        if (typeof v !== 'string') throw badRequest('advance: give "duration" as a Go duration string such as 30s, 5m or 1h30m');
        let ms: number;
        try {
          ms = parseDuration(v);
        } catch (e) {
          throw badRequest(`advance: ${e instanceof Error ? e.message : String(e)}`);
        }
        if (ms > 7 * 24 * 3_600_000) throw badRequest(`advance: at most 168h at a time, got ${v}`);
        return await time.advance(ms);
      }
      default:
        throw new ApiError(404, 'NotFound', `unknown time operation "${sub.slice(1)}" (known: pause, resume, speed, advance, next)`);
    }
  } catch (e) {
    if (e instanceof TimeControlError) throw badRequest(e.message);
    throw e;
  }
}
