/**
 * The provider's HCS client: JSON calls to ECS, EVS, VPC, IMS and IAM,
 * authenticated by AK/SK signing (SDK-HMAC-SHA256) or an IAM token
 * (X-Auth-Token). It only speaks HTTP (through an HcsTransport), never into
 * the fake cloud.
 *
 * One module per service holds the calls (ecs.ts, evs.ts, vpc.ts, ims.ts,
 * iam.ts); each call names its operation from the catalogue in src/core/hcs,
 * which gives the method and path. HcsClient is the connection (signing,
 * transport, errors) with every service's calls on it.
 */
import type { Clock } from '../../core/index.js';
import { fillPath, IAM, readErrorBody, type ErrorBody, type HcsOperation, type PasswordTokenBody, type TokenBody } from '../../core/hcs/index.js';
import { HcsApiError, type CallOptions, type HcsCaller, type PathParams } from './caller.js';
import { ecsCalls } from './ecs.js';
import { evsCalls } from './evs.js';
import { iamCalls } from './iam.js';
import { imsCalls } from './ims.js';
import { pagingCalls } from './paging.js';
import { datedHeaders, signRequest } from './signer.js';
import type { HcsTransport, HttpRequest, HttpResponse } from './transport.js';
import { vpcCalls } from './vpc.js';

export { HcsApiError } from './caller.js';

export interface HcsClientOptions {
  transport: HcsTransport;
  /** AK/SK signing (the default). Omit both to authenticate with `token` instead. */
  ak?: string;
  sk?: string;
  /**
   * IAM token (X-Auth-Token) used when no AK/SK is given; a function is asked before every call (refresh it there)
   * and, when the cloud answers a call 401 (the token expired or was revoked: IAM tokens live 24 h), asked again with
   * the rejected token: a different token it returns (re-authenticated) is sent once more with the same call.
   */
  token?: string | ((rejected?: string) => string | Promise<string>);
  projectId: string;
  /**
   * Page size of the list calls that fetch every page (default: each API's maximum, 1000 for ECS and EVS, 2000 for
   * VPC). Smaller pages take the paging loops with small pools (issue 37: lists longer than one page).
   */
  pageSize?: number;
  /** Signed host header; defaults to the transport's host. */
  host?: string;
  clock: Clock;
}

/** A service module's calls as methods of the client (their `this` is the client). */
type Calls<T> = { [K in keyof T]: OmitThisParameter<T[K]> };

const SERVICE_CALLS = [ecsCalls, evsCalls, vpcCalls, imsCalls, iamCalls, pagingCalls] as const;

// The service modules' calls are mixed into the prototype below (the TypeScript handbook's
// mixin pattern): this interface declares them on the class.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface HcsClient extends Calls<typeof ecsCalls>, Calls<typeof evsCalls>, Calls<typeof vpcCalls>, Calls<typeof imsCalls>, Calls<typeof iamCalls>, Calls<typeof pagingCalls> {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class HcsClient implements HcsCaller {
  private readonly host: string;

  constructor(private readonly opts: HcsClientOptions) {
    this.host = opts.host ?? opts.transport.host ?? 'localhost';
    if ((opts.ak === undefined) !== (opts.sk === undefined)) throw new Error('HcsClient: ak and sk go together');
    if (opts.ak === undefined && opts.token === undefined) throw new Error('HcsClient needs ak and sk, or a token');
  }

  get projectId(): string {
    return this.opts.projectId;
  }

  /** The page size of a list API whose maximum is `max` (HcsClientOptions.pageSize). */
  pageSize(max: number): number {
    return Math.max(1, Math.min(max, this.opts.pageSize ?? max));
  }

  /** Send a signed JSON request for `op`; returns the parsed body, or throws HcsApiError on a non-2xx status. */
  async call<T, O extends HcsOperation = HcsOperation>(op: O, params: PathParams<O>, o: CallOptions = {}): Promise<T> {
    const path = fillPath(op.path, { ...params, project_id: this.opts.projectId } as Record<string, string>) + (o.query ?? '');
    const res = await this.raw(op.method, path, o.body, o.headers);
    if (res.status < 200 || res.status >= 300) throw toApiError(op.sdk, res);
    if (res.body.trim() === '') return undefined as T;
    try {
      return JSON.parse(res.body) as T;
    } catch {
      throw new HcsApiError(res.status, 'InvalidResponse', `response is not JSON: ${res.body.slice(0, 200)}`, op.sdk, res.headers['x-request-id']);
    }
  }

  /** `call` for a GET that maps 404 to undefined. */
  async find<T, O extends HcsOperation = HcsOperation>(op: O, params: PathParams<O>, o: CallOptions = {}): Promise<T | undefined> {
    try {
      return await this.call<T, O>(op, params, o);
    } catch (e) {
      if (e instanceof HcsApiError && e.status === 404) return undefined;
      throw e;
    }
  }

  private async raw(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<HttpResponse> {
    const req: HttpRequest = {
      method,
      path,
      headers: { 'content-type': 'application/json', 'x-project-id': this.opts.projectId, ...extraHeaders },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    };
    const { ak, sk, token } = this.opts;
    if (ak !== undefined && sk !== undefined) {
      const now = new Date(this.opts.clock.now());
      if (this.opts.transport.takesCredentials) return this.opts.transport.send({ ...req, headers: datedHeaders(req, this.host, now), credentials: { ak, sk } });
      return this.opts.transport.send(signRequest(req, { ak, sk }, this.host, now));
    }
    const t = typeof token === 'function' ? await token() : token!;
    const res = await this.opts.transport.send({ ...req, headers: { ...req.headers, 'x-auth-token': t } });
    if (res.status !== 401 || typeof token !== 'function') return res;
    const fresh = await token(t);
    return fresh === t ? res : this.opts.transport.send({ ...req, headers: { ...req.headers, 'x-auth-token': fresh } });
  }
}

for (const calls of SERVICE_CALLS) Object.assign(HcsClient.prototype, calls);

/** A Keystone token (POST /v3/auth/tokens): the X-Subject-Token header and the body. */
export interface IssuedToken {
  token: string;
  expiresAt: string;
  projectId?: string;
  body: TokenBody;
}

/**
 * Get an IAM token with a password (Keystone v3, POST /v3/auth/tokens; no AK/SK
 * needed). `project` scopes it (by id, or by name); without it the token is
 * domain-scoped. Wrong credentials: HcsApiError 401.
 */
export async function issueToken(
  transport: HcsTransport,
  o: { user: string; password: string; domain: string; project?: { id: string } | { name: string } },
): Promise<IssuedToken> {
  const body: PasswordTokenBody = {
    auth: {
      identity: { methods: ['password'], password: { user: { name: o.user, password: o.password, domain: { name: o.domain } } } },
      ...(o.project ? { scope: { project: o.project } } : {}),
    },
  };
  const op = IAM.createToken.sdk;
  const res = await transport.send({ method: IAM.createToken.method, path: `${IAM.createToken.path}?nocatalog=true`, headers: { 'content-type': 'application/json;charset=UTF-8' }, body: JSON.stringify(body) });
  if (res.status !== 201) throw toApiError(op, res);
  const token = res.headers['x-subject-token'];
  if (!token) throw new HcsApiError(res.status, 'InvalidResponse', 'no X-Subject-Token header in the response', op, res.headers['x-request-id']);
  const parsed = JSON.parse(res.body) as TokenBody;
  return { token, expiresAt: parsed.token.expires_at, ...(parsed.token.project ? { projectId: parsed.token.project.id } : {}), body: parsed };
}

function toApiError(operation: string, res: HttpResponse): HcsApiError {
  let e = { code: `HTTP.${res.status}`, message: res.body.slice(0, 500) };
  try {
    e = readErrorBody(JSON.parse(res.body) as ErrorBody, e);
  } catch {
    // not JSON: keep the raw text
  }
  return new HcsApiError(res.status, e.code, e.message, operation, res.headers['x-request-id']);
}
