/**
 * IAM (Keystone v3, paths as in @huaweicloud/huaweicloud-sdk-iam v3 IamClient):
 * POST /v3/auth/tokens (no AK/SK needed: the password or token authenticates; 201 with X-Subject-Token),
 * GET /v3/projects, GET /v3/auth/projects, GET /v3/auth/domains.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CloudBinding } from '../binding.js';
import type { ProjectConfig } from '../config.js';
import { CloudError, Codes } from '../errors.js';
import { q } from '../http.js';
import { IAM } from '../../../src/core/hcs/index.js';
import { obj, route } from './operation.js';

function endpointOf(req: FastifyRequest): string {
  return `${req.protocol}://${req.headers.host ?? 'localhost'}`;
}

function boolParam(v: string | undefined, name: string): boolean | undefined {
  if (v === undefined) return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new CloudError(400, Codes.iamBadParam, `Request parameter ${name} is invalid: must be true or false`);
}

function intParam(v: string | undefined, name: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new CloudError(400, Codes.iamBadParam, `Request parameter ${name} is invalid: must be an integer between ${min} and ${max}`);
  return Number(v);
}

export function iamRoutes(b: CloudBinding) {
  return async (app: FastifyInstance): Promise<void> => {
    // The user the body names (fault matching, HCS-6).
    const user = (r: { body: Record<string, unknown> | undefined; names(...v: unknown[]): unknown }) => void r.names(obj(obj(obj(obj(r.body?.auth)?.identity)?.password)?.user)?.name);
    route(app, IAM.createToken, { auth: 'none', resource: user }, async (req, reply) => {
      const header = req.headers['x-auth-token'];
      try {
        const nocatalog = q(req, 'nocatalog');
        const { token, body } = b.iam.issue(req.hcs.json, typeof header === 'string' ? header : undefined, { nocatalog: nocatalog !== undefined && nocatalog !== '', endpoint: endpointOf(req) });
        const t = body.token as { user: { name: string }; project?: { id: string }; expires_at: string };
        b.engine.record('iam.token-issued', `token issued to ${t.user.name}${t.project ? ` for project ${t.project.id}` : ' (domain scope)'}, expires ${t.expires_at}`, { user: t.user.name, projectId: t.project?.id, expiresAt: t.expires_at }, ['HCS-5']);
        void reply.code(201).header('X-Subject-Token', token);
        return body;
      } catch (e) {
        if (e instanceof CloudError && e.status === 401) {
          b.engine.record('auth.rejected', `POST /v3/auth/tokens: 401 ${e.message}`, { method: 'POST', path: '/v3/auth/tokens', reason: e.message }, ['HCS-5']);
        }
        throw e;
      }
    });

    route(app, IAM.listProjects, { resource: (r, req) => void r.names(q(req, 'name')) }, async (req) => {
      const pageNo = intParam(q(req, 'page'), 'page', 1, 1_000_000);
      const perPage = intParam(q(req, 'per_page'), 'per_page', 1, 5000);
      if ((pageNo === undefined) !== (perPage === undefined)) throw new CloudError(400, Codes.iamBadParam, 'Request parameter page is invalid: page and per_page must be given together');
      let list: ProjectConfig[] = b.iam.projects(req.hcs.domainId, {
        name: q(req, 'name'),
        domainId: q(req, 'domain_id'),
        enabled: boolParam(q(req, 'enabled'), 'enabled'),
        parentId: q(req, 'parent_id'),
        isDomain: boolParam(q(req, 'is_domain'), 'is_domain'),
      }, req.hcs.projectId);
      if (pageNo !== undefined && perPage !== undefined) list = list.slice((pageNo - 1) * perPage, pageNo * perPage);
      const ep = endpointOf(req);
      return { links: { self: `${ep}/v3/projects`, previous: null, next: null }, projects: list.map((p) => b.iam.renderProject(p, ep)) };
    });

    route(app, IAM.listAuthProjects, {}, async (req) => {
      const ep = endpointOf(req);
      const all = b.iam.projects(req.hcs.domainId, {});
      const list = req.hcs.projectId ? all.filter((p) => p.id === req.hcs.projectId) : all;
      return { links: { self: `${ep}/v3/auth/projects`, previous: null, next: null }, projects: list.map((p) => b.iam.renderProject(p, ep)) };
    });

    route(app, IAM.listAuthDomains, {}, async (req) => {
      const ep = endpointOf(req);
      const d = b.iam.domainById(req.hcs.domainId);
      return {
        links: { self: `${ep}/v3/auth/domains`, previous: null, next: null },
        domains: d ? [{ id: d.id, name: d.name, enabled: true, description: '', links: { self: `${ep}/v3/domains/${d.id}` } }] : [],
      };
    });
  };
}
