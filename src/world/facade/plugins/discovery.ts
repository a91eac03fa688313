/**
 * Discovery routes of one cluster's scope (the documents are discovery.ts):
 * /, /version, the health checks, /api, /apis, /api/v1, /apis/<g>[/<v>] and
 * the OpenAPI v3 documents. All are read-only: another verb than GET/HEAD is
 * a 405 Status (DELETE /api with a body, ...); the health checks answer any.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { versionInfo, workloadKubernetesVersion } from '../../workload/system-pods.js';
import { apiGroupInfo, apiGroupList, apiResourceList, apiVersions, groupVersions, openApiV3, openApiV3Index, SERVER_VERSION } from '../discovery.js';
import type { FacadeContext } from '../http/context.js';
import { methodNotAllowed, notFound, status } from '../http/status.js';

/** What the apiserver answers at / (metav1.RootPaths); Cluster API's cluster cache probes it. */
export function rootPaths(): string[] {
  const paths = ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/openapi/v3', '/readyz', '/version'];
  for (const gv of groupVersions()) if (gv.group) paths.push(`/apis/${gv.group}`, `/apis/${gv.group}/${gv.version}`);
  return [...new Set(paths)].sort();
}

type Params = Record<string, string>;

export async function discoveryRoutes(app: FastifyInstance, _o: { ctx: FacadeContext }): Promise<void> {
  /** A read-only document: GET/HEAD, else 405; undefined from `answer` is a 404. */
  const doc = (url: string, answer: (req: FastifyRequest<{ Params: Params }>) => unknown): void => {
    app.all<{ Params: Params }>(url, async (req, reply: FastifyReply) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed();
      const body = answer(req);
      if (body === undefined) throw notFound();
      return reply.send(body);
    });
  };
  doc('/', () => ({ paths: rootPaths() }));
  // A workload cluster reports the version its control plane runs (src/world/workload/system-pods.ts).
  doc('/version', (req) => (req.kube.base ? versionInfo(SERVER_VERSION, workloadKubernetesVersion(req.kube.store)) : SERVER_VERSION));
  for (const check of ['/healthz', '/livez', '/readyz']) app.all(check, async (_req, reply) => reply.type('text/plain').send('ok'));
  doc('/api', (req) => apiVersions(`${req.hostname}`));
  doc('/apis', () => apiGroupList());
  doc('/api/v1', () => apiResourceList('', 'v1'));
  doc('/apis/:group', (req) => apiGroupInfo(req.params.group!));
  doc('/apis/:group/:version', (req) => apiResourceList(req.params.group!, req.params.version!));
  doc('/openapi/v3', (req) => openApiV3Index(req.kube.base));
  doc('/openapi/v3/api/v1', () => openApiV3('', 'v1'));
  doc('/openapi/v3/apis/:group/:version', (req) => openApiV3(req.params.group!, req.params.version!));
  doc('/openapi/v2', () => {
    throw status(404, 'NotFound', 'the server could not find the requested resource (OpenAPI v2 is not served; kubectl uses /openapi/v3)');
  });
}
