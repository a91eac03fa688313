/**
 * The routes `hcs-testbed serve` adds beside the Kubernetes API of the
 * management cluster: everything under /_testbed/ (docs/demo.md).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FacadeExtension } from '../facade/server.js';
import type { TimeControl } from '../facade/timecontrol.js';
import { ApiError, jsonBody, timeRequest } from './time-api.js';

export interface ExtensionParts {
  time: TimeControl;
}

export const PREFIX = '/_testbed';

export function testbedExtension(parts: ExtensionParts): FacadeExtension {
  return {
    async handle(req: FastifyRequest, reply: FastifyReply, path: string, query: URLSearchParams): Promise<FastifyReply | undefined> {
      if (path !== PREFIX && !path.startsWith(`${PREFIX}/`)) return undefined;
      const method = req.method.toUpperCase();
      try {
        if (path === `${PREFIX}/time` || path.startsWith(`${PREFIX}/time/`)) {
          const out = await timeRequest(parts.time, method, path.slice(`${PREFIX}/time`.length), method === 'POST' ? jsonBody(req.body) : {}, query);
          return reply.code(200).type('application/json').send(out);
        }
        throw new ApiError(404, 'NotFound', `the server could not find the requested resource ${path}`);
      } catch (e) {
        if (e instanceof ApiError) return reply.code(e.code).type('application/json').send(e.toStatus());
        throw e;
      }
    },
  };
}
