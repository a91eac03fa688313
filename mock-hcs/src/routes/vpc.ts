/** VPC: subnets (GET /v1/{project_id}/subnets[?vpc_id=], GET /v1/{project_id}/subnets/{subnet_id}). */
import type { FastifyInstance } from 'fastify';
import type { CloudEngine } from '../cloud.js';
import { CloudError, Codes } from '../errors.js';
import { q } from '../http.js';
import { renderSubnet } from '../render.js';

export function vpcRoutes(engine: CloudEngine, createdMs: number) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/v1/:project_id/subnets', { config: { op: 'listSubnets' } }, async (req) => {
      const vpcId = q(req, 'vpc_id');
      const subnets = engine.config.subnets.filter((s) => !vpcId || s.vpc_id === vpcId);
      return { subnets: subnets.map((s) => renderSubnet(s, req.hcs.projectId, createdMs)) };
    });
    app.get('/v1/:project_id/subnets/:subnet_id', { config: { op: 'showSubnet' } }, async (req) => {
      const { subnet_id } = req.params as { subnet_id: string };
      const s = engine.config.subnets.find((x) => x.id === subnet_id);
      if (!s) throw new CloudError(404, Codes.vpcNotFound, `Subnet ${subnet_id} could not be found.`);
      return { subnet: renderSubnet(s, req.hcs.projectId, createdMs) };
    });
  };
}
