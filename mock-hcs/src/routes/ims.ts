/**
 * IMS: GET /v2/cloudimages?name=&status=&id=&limit=&marker= (name is an exact
 * match, as in IMS; limit 1..1000, default 25, and marker = the last image id
 * of the previous page, as the IMS ListImages API describes them).
 */
import type { FastifyInstance } from 'fastify';
import type { CloudBinding } from '../binding.js';
import { CloudError, Codes } from '../errors.js';
import { q } from '../http.js';
import { renderImage } from '../render.js';
import { IMS } from '../../../src/core/hcs/index.js';
import { intParam } from './ecs.js';
import { route } from './operation.js';

export function imsRoutes(b: CloudBinding) {
  return async (app: FastifyInstance): Promise<void> => {
    route(app, IMS.listImages, { resource: (r, req) => void r.names(q(req, 'name')).ids(q(req, 'id')) }, async (req) => {
      const name = q(req, 'name');
      const status = q(req, 'status');
      const id = q(req, 'id');
      const limit = intParam(q(req, 'limit'), 'limit', 25, 1, 1000, Codes.imsBadRequest);
      const marker = q(req, 'marker');
      const images = b.engine.config.images.filter(
        (i) => (!name || i.name === name) && (!status || (i.status ?? 'active') === status) && (!id || i.id === id),
      );
      let from = 0;
      if (marker !== undefined && marker !== '') {
        const i = images.findIndex((x) => x.id === marker);
        if (i < 0) throw new CloudError(400, Codes.imsBadRequest, `Invalid request parameter marker: image ${marker} is not in the list`);
        from = i + 1;
      }
      return { images: images.slice(from, from + limit).map((i) => renderImage(i, b.createdMs)) };
    });
  };
}
