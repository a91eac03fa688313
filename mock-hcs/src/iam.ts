/**
 * IAM (HCS-5): Keystone v3 token issue (POST /v3/auth/tokens, methods
 * "password" and "token") and token verification for the other APIs
 * (X-Auth-Token as the alternative to AK/SK signing), projects and domains.
 *
 * Users come from the configuration (`projects[].users`, default one
 * `<project>-admin` per project); a user may get tokens scoped to the
 * projects it is configured on. Tokens are opaque strings from the seeded
 * Rng; the state keeps sha256(token) only, with the scope and the expiry on
 * the injected clock, so they survive a restart from the data file.
 */
import { createHash } from 'node:crypto';
import type { Clock, Rng } from '../../src/core/index.js';
import { DEFAULT_DOMAIN, DEFAULT_TOKEN_TTL_MS, usersOf, type CloudConfig, type DomainConfig, type ProjectConfig } from './config.js';
import type { Store, TokenRec } from './state.js';
import { CloudError, Codes } from './errors.js';
import { Validator } from './validate.js';

const iamV: Validator = new Validator(Codes.iamBadBody);

export interface IamUser {
  id: string;
  name: string;
  password: string;
  domain: DomainConfig;
  projects: ProjectConfig[];
}

export type TokenCheck = { ok: true; rec: TokenRec } | { ok: false; reason: string };

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** Keystone times: ISO 8601 with microseconds. */
export function keystoneTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

const TOKEN_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export class IamService {
  readonly domain: DomainConfig;
  private readonly tokenRng: Rng;
  private readonly ttlMs: number;
  /** Key: `${domain name}|${user name}`. */
  readonly users = new Map<string, IamUser>();
  private readonly domains = new Map<string, DomainConfig>();

  constructor(
    private readonly store: Store,
    private readonly config: CloudConfig,
    private readonly clock: Clock,
    rng: Rng,
  ) {
    this.domain = config.domain ?? DEFAULT_DOMAIN;
    this.tokenRng = rng.fork('mock-hcs/tokens');
    this.ttlMs = config.tokenTtlMs ?? DEFAULT_TOKEN_TTL_MS;
    this.domains.set(this.domain.name, this.domain);
    for (const p of config.projects) {
      for (const u of usersOf(p)) {
        const domainName = u.domain ?? this.domain.name;
        let domain = this.domains.get(domainName);
        if (!domain) this.domains.set(domainName, (domain = { id: sha256(`domain|${domainName}`).slice(0, 32), name: domainName }));
        const key = `${domainName}|${u.name}`;
        const known = this.users.get(key);
        if (known) known.projects.push(p);
        else this.users.set(key, { id: sha256(`user|${key}`).slice(0, 32), name: u.name, password: u.password, domain, projects: [p] });
      }
    }
  }

  domainById(id: string): DomainConfig | undefined {
    return [...this.domains.values()].find((d) => d.id === id);
  }

  /** Check an X-Auth-Token: known and not expired (injected clock). Messages as APIGW documents them. */
  verify(token: string): TokenCheck {
    const rec = this.store.data.tokens[sha256(token)];
    if (!rec) return { ok: false, reason: 'decrypt token fail' };
    if (this.clock.now() >= rec.expiresAt) return { ok: false, reason: `token expires, expires_at: ${keystoneTime(rec.expiresAt)}` };
    return { ok: true, rec };
  }

  private fail(message: string): never {
    throw new CloudError(401, Codes.iamAuthFailed, message, ['HCS-5']);
  }

  /**
   * POST /v3/auth/tokens. `headerToken` is X-Auth-Token (the "token" method may take
   * the token from there). Returns the new token and the Keystone response body.
   */
  issue(body: unknown, headerToken: string | undefined, opts: { nocatalog: boolean; endpoint: string }): { token: string; body: Record<string, unknown> } {
    const root = iamV.obj(body, 'body');
    const auth = iamV.obj(root.auth, 'auth');
    const identity = iamV.obj(auth.identity, 'auth.identity');
    const methods = iamV.arr(identity.methods, 'auth.identity.methods', 1, 2).map((m, i) => iamV.str(m, `auth.identity.methods[${i}]`));
    let user: IamUser;
    if (methods.includes('password')) {
      const pw = iamV.obj(identity.password, 'auth.identity.password');
      const u = iamV.obj(pw.user, 'auth.identity.password.user');
      const password = iamV.str(u.password, 'auth.identity.password.user.password', { max: 1024 });
      const id = iamV.optStr(u.id, 'auth.identity.password.user.id');
      if (id !== undefined) {
        user = [...this.users.values()].find((x) => x.id === id) ?? this.fail('The username or password is wrong.');
      } else {
        const name = iamV.str(u.name, 'auth.identity.password.user.name', { max: 255 });
        const d = iamV.obj(u.domain, 'auth.identity.password.user.domain');
        const dName = iamV.optStr(d.name, 'auth.identity.password.user.domain.name');
        const dId = iamV.optStr(d.id, 'auth.identity.password.user.domain.id');
        if (dName === undefined && dId === undefined) iamV.fail('auth.identity.password.user.domain', 'needs a name or an id');
        const domain = dName !== undefined ? this.domains.get(dName) : this.domainById(dId!);
        user = (domain && this.users.get(`${domain.name}|${name}`)) ?? this.fail('The username or password is wrong.');
      }
      if (user.password !== password) this.fail('The username or password is wrong.');
    } else if (methods.includes('token')) {
      const t = iamV.optObj(identity.token, 'auth.identity.token');
      const given = (t ? iamV.optStr(t.id, 'auth.identity.token.id') : undefined) ?? headerToken;
      if (given === undefined) iamV.fail('auth.identity.token.id', 'is required (or an X-Auth-Token header)');
      const check = this.verify(given);
      if (!check.ok) this.fail(`The token is not valid: ${check.reason}`);
      user = [...this.users.values()].find((x) => x.id === check.rec.userId) ?? this.fail('The user of the token no longer exists.');
    } else {
      iamV.fail('auth.identity.methods', `must contain "password" or "token" (got ${methods.join(', ')})`);
    }

    let project: ProjectConfig | undefined;
    const scope = iamV.optObj(auth.scope, 'auth.scope');
    if (scope?.project !== undefined) {
      const sp = iamV.obj(scope.project, 'auth.scope.project');
      const pid = iamV.optStr(sp.id, 'auth.scope.project.id');
      const pname = iamV.optStr(sp.name, 'auth.scope.project.name');
      if (pid === undefined && pname === undefined) iamV.fail('auth.scope.project', 'needs an id or a name');
      project = this.config.projects.find((p) => (pid !== undefined ? p.id === pid : p.name === pname));
      if (!project) throw new CloudError(404, Codes.iamNotFound, `Could not find project: ${pid ?? pname}.`, ['HCS-5']);
      if (!user.projects.includes(project)) {
        throw new CloudError(401, Codes.iamAuthFailed, `User ${user.name} has no role on project ${project.name} (${project.id}).`, ['HCS-5']);
      }
    } else if (scope?.domain !== undefined) {
      const sd = iamV.obj(scope.domain, 'auth.scope.domain');
      const did = iamV.optStr(sd.id, 'auth.scope.domain.id');
      const dname = iamV.optStr(sd.name, 'auth.scope.domain.name');
      if ((did ?? dname) === undefined) iamV.fail('auth.scope.domain', 'needs an id or a name');
      if ((did !== undefined && did !== user.domain.id) || (dname !== undefined && dname !== user.domain.name)) {
        throw new CloudError(401, Codes.iamAuthFailed, `User ${user.name} cannot get a token for domain ${did ?? dname}.`, ['HCS-5']);
      }
    } else if (scope !== undefined) {
      iamV.fail('auth.scope', 'must name a project or a domain');
    }

    const now = this.clock.now();
    this.prune(now);
    const token = `MII${this.tokenRng.string(125, TOKEN_ALPHABET)}`;
    const rec: TokenRec = {
      userName: user.name,
      userId: user.id,
      domainId: user.domain.id,
      ...(project ? { projectId: project.id } : {}),
      methods: methods.filter((m) => m === 'password' || m === 'token'),
      issuedAt: now,
      expiresAt: now + this.ttlMs,
    };
    this.store.data.tokens[sha256(token)] = rec;
    this.store.markDirty();
    const projectDomain = this.domain;
    const response: Record<string, unknown> = {
      token: {
        expires_at: keystoneTime(rec.expiresAt),
        issued_at: keystoneTime(rec.issuedAt),
        methods: rec.methods,
        user: { domain: { id: user.domain.id, name: user.domain.name }, id: user.id, name: user.name, password_expires_at: '' },
        roles: [
          { id: sha256('role|te_admin').slice(0, 32), name: 'te_admin' },
          { id: sha256('role|op_service').slice(0, 32), name: 'op_service' },
        ],
        ...(project
          ? { project: { domain: { id: projectDomain.id, name: projectDomain.name }, id: project.id, name: project.name } }
          : { domain: { id: user.domain.id, name: user.domain.name } }),
        ...(opts.nocatalog ? {} : { catalog: this.catalog(opts.endpoint, project) }),
      },
    };
    return { token, body: response };
  }

  /** Drop expired tokens (keeps the state small). */
  private prune(now: number): void {
    for (const [k, t] of Object.entries(this.store.data.tokens)) if (t.expiresAt <= now) delete this.store.data.tokens[k];
  }

  private catalog(endpoint: string, project: ProjectConfig | undefined): unknown[] {
    const region = project?.region ?? this.config.projects[0]?.region ?? '';
    const pid = project?.id ?? '$(tenant_id)';
    const svc = (type: string, path: string) => ({
      type,
      name: type,
      id: sha256(`service|${type}`).slice(0, 32),
      endpoints: [{ id: sha256(`endpoint|${type}|${region}`).slice(0, 32), interface: 'public', region, region_id: region, url: `${endpoint}${path}` }],
    });
    return [svc('compute', `/v1/${pid}`), svc('evs', `/v2/${pid}`), svc('vpc', `/v1/${pid}`), svc('image', ''), svc('iam', '/v3')];
  }

  /** Projects of a domain, filtered as GET /v3/projects does. */
  /**
   * The projects of the domain matching the filter. `name` matches a
   * project's own name, and a region id matches the region's project: on
   * Huawei IAM a region's project is named after the region, and both
   * official SDKs find the project of AK/SK credentials given only a region
   * with GET /v3/projects?name=<region id> (huaweicloud-sdk-go-v3
   * core/auth/basic_credentials.go ProcessAuthParams, huaweicloudsdkcore
   * auth/credentials.py), expecting exactly one. Here several tenants share
   * a region, so the region's project is the credentials' own project
   * (`ownProjectId`, AK or project-scoped token) or, for domain-scoped
   * credentials, the first configured project of the region.
   */
  projects(domainId: string, f: { name?: string; domainId?: string; enabled?: boolean; parentId?: string; isDomain?: boolean }, ownProjectId = ''): ProjectConfig[] {
    if (domainId !== this.domain.id) return [];
    const regionProject = (p: ProjectConfig) => (ownProjectId ? p.id === ownProjectId : this.config.projects.find((x) => x.region === p.region) === p);
    return this.config.projects.filter(
      (p) =>
        (f.name === undefined || p.name === f.name || (f.name === p.region && regionProject(p))) &&
        (f.domainId === undefined || f.domainId === this.domain.id) &&
        (f.enabled === undefined || f.enabled) &&
        (f.parentId === undefined || f.parentId === this.domain.id) &&
        (f.isDomain === undefined || !f.isDomain),
    );
  }

  /** Wire rendering of a project (ProjectResult). */
  renderProject(p: ProjectConfig, endpoint: string): Record<string, unknown> {
    return {
      id: p.id,
      name: p.name,
      domain_id: this.domain.id,
      parent_id: this.domain.id,
      enabled: true,
      is_domain: false,
      description: '',
      links: { self: `${endpoint}/v3/projects/${p.id}` },
    };
  }
}
