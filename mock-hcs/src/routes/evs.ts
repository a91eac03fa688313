/** EVS: cloud volumes (POST /v2.1/{project_id}/cloudvolumes, GET/PUT/DELETE /v2/{project_id}/cloudvolumes/..., POST /v2.1/{project_id}/cloudvolumes/{volume_id}/action). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CloudBinding } from '../binding.js';
import { CloudError, Codes } from '../errors.js';
import { q, sendJsonText } from '../http.js';
import { renderVolume, volumeJson } from '../render.js';
import type { VolumeRec } from '../state.js';
import { own } from '../validate.js';
import { EVS } from '../../../src/core/hcs/index.js';
import { intParam } from './ecs.js';
import { obj, route, strMap, type ResourceOf } from './operation.js';

type P = { project_id: string; volume_id?: string };

export function evsRoutes(b: CloudBinding) {
  return async (app: FastifyInstance): Promise<void> => {
    const create = async (req: FastifyRequest) => b.engine.withEffects(req.hcs.effects, () => b.engine.createVolume(req.hcs.projectId, req.hcs.json));
    route(app, EVS.createVolume, { resource: volumeToCreate }, create);

    route(app, EVS.listVolumes, { resource: (r, req) => void r.names(q(req, 'name')) }, async (req, reply) => {
      const limit = intParam(q(req, 'limit'), 'limit', 1000, 1, 1000, Codes.evsBadRequest);
      const offset = intParam(q(req, 'offset'), 'offset', 0, 0, 1_000_000, Codes.evsBadRequest);
      const name = q(req, 'name');
      const status = q(req, 'status');
      const az = q(req, 'availability_zone');
      const serverId = q(req, 'server_id');
      const metaText = q(req, 'metadata');
      let meta: Record<string, unknown> = {};
      if (metaText) {
        try {
          const parsed: unknown = JSON.parse(metaText);
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
          meta = parsed as Record<string, unknown>;
        } catch {
          throw new CloudError(400, Codes.evsBadRequest, `Invalid request parameter metadata: must be a JSON object such as {"key":"value"}`);
        }
      }
      // Values are strings (EVS metadata); numbers and booleans are compared as their text. Anything else is refused, not coerced.
      const metaPairs = Object.entries(meta).map(([k, v]) => {
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
          throw new CloudError(400, Codes.evsBadRequest, `Invalid request parameter metadata: the value of ${JSON.stringify(k)} must be a string`);
        }
        return [k, String(v)] as const;
      });
      // One pass over the project's volumes, cheap and selective tests first (same result and order as filtering in turn).
      const matches: VolumeRec[] = [];
      // server_id: only the volumes indexed under that server; metadata: only those indexed under its rarest pair
      // (same volumes, same order as scanning the project's).
      const candidates = serverId ? b.engine.volumesOfServer(req.hcs.projectId, serverId) : (b.engine.volumesWithMetadata(req.hcs.projectId, metaPairs) ?? b.engine.volumesOf(req.hcs.projectId));
      scan: for (const v of candidates) {
        if (serverId && v.attachment?.serverId !== serverId && v.pendingServerId !== serverId) continue;
        if ((status && v.status !== status) || (az && v.az !== az)) continue;
        for (const [k, val] of metaPairs) if (own(v.metadata, k) !== val) continue scan;
        // EVS `name` is a fuzzy (substring) match, like ECS: callers must check the exact name themselves.
        if (name && !v.name.includes(name)) continue;
        matches.push(v);
      }
      // marker (a volume id): the volumes after it, then offset from there (evs ListVolumes: marker, offset, limit).
      const marker = q(req, 'marker');
      let from = offset;
      if (marker !== undefined && marker !== '') {
        const i = matches.findIndex((v) => v.id === marker);
        if (i < 0) throw new CloudError(400, Codes.evsBadRequest, `Invalid request parameter marker: volume ${marker} is not in the list`);
        from = i + 1 + offset;
      }
      // JSON.stringify({ count, volumes: page.map(renderVolume), volumes_links? }), with each volume's text remembered while it is unchanged.
      const page = matches.slice(from, from + limit);
      let text = `{"count":${matches.length},"volumes":[`;
      for (let i = 0; i < page.length; i++) text += (i === 0 ? '' : ',') + volumeJson(page[i]!);
      text += ']';
      // volumes_links: when this page did not reach the end, the query of the next one (marker = its last volume), as EVS returns it.
      if (from + limit < matches.length && page.length > 0) {
        const next = `/v2/${req.hcs.projectId}/cloudvolumes/detail?limit=${limit}&marker=${page[page.length - 1]!.id}`;
        text += `,"volumes_links":[{"href":${JSON.stringify(next)},"rel":"next"}]`;
      }
      return sendJsonText(req, reply, b.engine, `${text}}`);
    });

    route(app, EVS.showVolume, { resource: pathVolume }, async (req, reply) => {
      const { volume_id } = req.params as P;
      const v = b.engine.volumeRec(req.hcs.projectId, volume_id!);
      if (!v) throw new CloudError(404, Codes.evsNotFound, `Volume ${volume_id} could not be found.`);
      return sendJsonText(req, reply, b.engine, `{"volume":${volumeJson(v)}}`);
    });

    route(app, EVS.updateVolume, {}, async (req) => {
      const { volume_id } = req.params as P;
      // The volume's fields at the top level, not under "volume": the EVS API reference (UpdateVolume response)
      // and both SDKs' UpdateVolumeResponse (huaweicloud-sdk-go-v3 evs/v2, huaweicloudsdkevs 3.1.219).
      return b.engine.withEffects(req.hcs.effects, () => renderVolume(b.engine.updateVolume(req.hcs.projectId, volume_id!, req.hcs.json)));
    });

    route(app, EVS.deleteVolume, { resource: pathVolume }, async (req) => {
      const { volume_id } = req.params as P;
      return b.engine.withEffects(req.hcs.effects, () => b.engine.deleteVolume(req.hcs.projectId, volume_id!));
    });

    route(app, EVS.resizeVolume, { resource: pathVolume }, async (req) => {
      const { volume_id } = req.params as P;
      return b.engine.withEffects(req.hcs.effects, () => b.engine.evs.resizeVolume(req.hcs.projectId, volume_id!, req.hcs.json));
    });
  };
}

/** The volume of the path (fault matching, HCS-6). */
const pathVolume: ResourceOf = (r) => void r.volume(r.param('volume_id'));

/** CreateVolume: the name, metadata and AZ the body asks for. */
const volumeToCreate: ResourceOf = (r) => {
  const v = obj(r.body?.volume);
  r.names(v?.name).tags(strMap(v?.metadata));
  if (typeof v?.availability_zone === 'string') r.info.az = v.availability_zone;
};
