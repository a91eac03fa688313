/**
 * Authentication (auth.ts has who may talk to the facade), as an onRequest
 * hook of the whole server: it runs before fastify reads a body, so a request
 * without credentials is answered 401 with its body unread (issue 32: 60
 * unauthenticated 15 MiB bodies were buffered first and took the facade's RSS
 * from 483 MB to 1.33 GB). Node discards what the client still sends; nothing
 * of it is kept.
 *
 * Also here: impersonation refused (access.ts), the dashboard's login cookie,
 * and the review APIs that answer who a client is (kubectl auth whoami /
 * can-i), registered in each cluster's scope.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rfc3339 } from '../../../core/clock.js';
import { impersonationRefusal, selfSubjectAccessReview, selfSubjectRulesReview } from '../access.js';
import { identify, PUBLIC_PATHS, selfSubjectReview, TOKEN_COOKIE, UNAUTHORIZED } from '../auth.js';
import { parseBody } from '../http/body.js';
import { unencapsulated, type FacadeContext, type Query } from '../http/context.js';
import { methodNotAllowed, sendStatus, status } from '../http/status.js';

export interface AuthOptions {
  ctx: FacadeContext;
  /** Whether the facade serves TLS (the login cookie is then Secure). */
  tls: boolean;
}

const LOGIN_PAGE = '<!doctype html><title>hcs-testbed</title><p>Unauthorized. Open the login address in the <code>dashboard-url</code> file that <code>hcs-testbed serve</code> names (it ends in <code>/?token=…</code>).</p>\n';

/** The request's URL; a path such as "//x" must not be taken for a host (not new URL(req.url, base)). */
function requestUrl(raw: string): URL | undefined {
  try {
    const url = new URL(`http://facade${raw.startsWith('/') ? '' : '/'}${raw}`);
    decodeURIComponent(url.pathname);
    return url;
  } catch {
    return undefined;
  }
}

/** The answer to a request without credentials: the dashboard's login (cookie), a page for a browser, else the apiserver's 401 Status. */
function refuse(req: FastifyRequest, reply: FastifyReply, url: URL, path: string, o: AuthOptions): FastifyReply {
  const { token } = o.ctx;
  // The dashboard's link carries the token once: keep it in an HttpOnly cookie and drop it from the address.
  const given = url.searchParams.get('token');
  if (path === '/' && given !== null && given === token) {
    const secure = o.tls ? '; Secure' : '';
    return reply.code(303).header('Set-Cookie', `${TOKEN_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Strict${secure}`).header('Location', '/').send();
  }
  if (path === '/' && /\btext\/html\b/.test(String(req.headers.accept ?? ''))) return reply.code(401).type('text/html; charset=utf-8').send(LOGIN_PAGE);
  return reply.code(401).type('application/json').send(UNAUTHORIZED);
}

/** The onRequest hook of the whole server (unencapsulated): sets request.kube for the management cluster, or answers. */
export const authPlugin = unencapsulated(async function auth(app: FastifyInstance, o: AuthOptions): Promise<void> {
  app.decorateRequest('kube', null as unknown as FastifyRequest['kube']);
  app.addHook('onRequest', async (req, reply) => {
    const url = requestUrl(req.url);
    if (!url) return sendStatus(reply, status(400, 'BadRequest', `the request URL could not be parsed: ${JSON.stringify(req.url)}`).status);
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const browserPath = path === '/' || path === '/_testbed' || path.startsWith('/_testbed/');
    const who = identify(req, o.ctx.token, browserPath, o.ctx.clientCa);
    if (who) {
      // kubectl --as: refused with a Status, never served as the admin (access.ts).
      const refused = impersonationRefusal(req, who);
      if (refused) return sendStatus(reply, status(refused.code, refused.reason, refused.message, refused.details).status);
    } else if (!PUBLIC_PATHS.has(path)) {
      return refuse(req, reply, url, path, o);
    }
    const query: Query = Object.fromEntries(url.searchParams.entries());
    req.kube = { url, query, path, who, store: o.ctx.mgmt, base: '' };
    return undefined;
  });
});

/** The review APIs (kubectl auth whoami, kubectl auth can-i), in a cluster's scope. */
export async function reviewRoutes(app: FastifyInstance, o: { ctx: FacadeContext }): Promise<void> {
  const post = (url: string, answer: (req: FastifyRequest) => unknown): void => {
    app.all(url, async (req, reply) => {
      if (req.method !== 'POST') throw methodNotAllowed();
      return reply.code(201).send(answer(req));
    });
  };
  // kubectl auth whoami: the request's own user (a token, or a client certificate's CN and O).
  post('/apis/authentication.k8s.io/v1/selfsubjectreviews', (req) => selfSubjectReview(req.kube.who!, rfc3339(o.ctx.clock.now())));
  // kubectl auth can-i (access.ts).
  post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', (req) => selfSubjectAccessReview(parseBody(req), req.kube.who!));
  post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', (req) => selfSubjectRulesReview(parseBody(req)));
}
