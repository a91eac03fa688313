/** IMS: GET /v2/cloudimages?name=&status=&id= (name is an exact match, as in IMS). */
import type { FastifyInstance } from 'fastify';
import type { CloudEngine } from '../cloud.js';
import { q } from '../http.js';
import { renderImage } from '../render.js';

export function imsRoutes(engine: CloudEngine, createdMs: number) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/v2/cloudimages', { config: { op: 'listImages' } }, async (req) => {
      const name = q(req, 'name');
      const status = q(req, 'status');
      const id = q(req, 'id');
      const images = engine.config.images.filter(
        (i) => (!name || i.name === name) && (!status || (i.status ?? 'active') === status) && (!id || i.id === id),
      );
      return { images: images.map((i) => renderImage(i, createdMs)) };
    });
  };
}
