/**
 * ECS calls a provider commonly makes besides the lifecycle (issue 24): server
 * tags (ShowServerTags, BatchCreateServerTags, BatchDeleteServerTags), server
 * metadata (UpdateServerMetadata, DeleteServerMetadata), a data disk's
 * delete_on_termination (UpdateServerBlockDevice), NICs (ListServerInterfaces)
 * and the AZ list (NovaListAvailabilityZones). Tags and metadata live on the
 * server record, so they are in the data file and survive restarts; ShowServer /
 * ListServersDetails show them. Paths and bodies as in the ECS API reference and the SDK models
 * (huaweicloud-sdk-go-v3 services/ecs/v2).
 */
import type { FastifyInstance } from 'fastify';
import type { CloudBinding } from '../binding.js';
import type { CloudEngine } from '../cloud.js';
import { CloudError, Codes } from '../errors.js';
import type { ServerRec } from '../state.js';
import { own, setOwn, Validator } from '../validate.js';
import { ECS } from '../../../src/core/hcs/index.js';
import { serverAndVolume } from './ecs.js';
import { route, type ResourceOf } from './operation.js';

const ecsV: Validator = new Validator(Codes.ecsBadRequest);
/** ECS tag rules: at most 10 tags (Ecs.0905), key 1-36 and value 0-43 characters of letters, digits, '_', '-' and (value) '.' (Ecs.0906 / Ecs.0907). */
const MAX_TAGS = 10;
const TAG_KEY = /^[\p{L}\p{N}_-]{1,36}$/u;
const TAG_VALUE = /^[\p{L}\p{N}_.-]{0,43}$/u;

type P = { project_id?: string; server_id?: string };

function server(engine: CloudEngine, projectId: string, id: string): ServerRec {
  const s = engine.serverRec(projectId, id);
  if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${id}] could not be found.`);
  return s;
}

function parseTags(body: unknown, withValues: boolean): { key: string; value: string }[] {
  const root = ecsV.obj(body, 'body');
  const list = ecsV.optArr(root.tags, 'tags', 1, 1000) ?? ecsV.fail('tags', 'is required');
  const tags = list.map((t, i) => {
    const o = ecsV.obj(t, `tags[${i}]`);
    if (typeof o.key !== 'string') ecsV.fail(`tags[${i}].key`, 'is required');
    const key = o.key;
    if (key.length === 0 || key.length > 36) throw new CloudError(400, Codes.ecsTagInvalid, `Invalid tag key: tags[${i}].key must be 1-36 characters`);
    if (!TAG_KEY.test(key)) throw new CloudError(400, Codes.ecsTagCharset, `Tag key [${key}] contains invalid characters (tags[${i}].key)`);
    const value = o.value === undefined ? '' : o.value;
    if (typeof value !== 'string') ecsV.fail(`tags[${i}].value`, 'must be a string');
    if (withValues && !TAG_VALUE.test(value)) throw new CloudError(400, Codes.ecsTagCharset, `Tag value of [${key}] contains invalid characters or is longer than 43 (tags[${i}].value)`);
    return { key, value };
  });
  if (new Set(tags.map((t) => t.key)).size !== tags.length) throw new CloudError(400, Codes.ecsTagDuplicate, 'The tag key cannot be duplicate (tags)');
  return tags;
}

/** The server of the path (fault matching, HCS-6): its id, name, tags and metadata. */
const pathServer: ResourceOf = (r) => void r.server(r.param('server_id'));

export function ecsServerExtraRoutes(b: CloudBinding) {
  return async (app: FastifyInstance): Promise<void> => {
    // ShowServerTags: GET /v1/{project_id}/cloudservers/{server_id}/tags -> {tags:[{key,value}]}
    route(app, ECS.showServerTags, {}, async (req) => {
      const { server_id } = req.params as P;
      const s = server(b.engine, req.hcs.projectId, server_id!);
      return { tags: s.tags.map((t) => ({ key: t.key, value: t.value })) };
    });

    // BatchCreateServerTags / BatchDeleteServerTags: POST .../tags/action {action:"create"|"delete", tags} -> 204.
    route(app, ECS.serverTagsAction, {}, async (req, reply) => {
      const { server_id } = req.params as P;
      const s = server(b.engine, req.hcs.projectId, server_id!);
      const root = ecsV.obj(req.hcs.json, 'body');
      const action = root.action;
      if (action !== 'create' && action !== 'delete') ecsV.fail('action', 'must be "create" or "delete"');
      const tags = parseTags(req.hcs.json, action === 'create');
      if (action === 'create') {
        // An existing key takes the new value (the reference: "if the key exists, its value is overwritten").
        const next = [...s.tags];
        for (const t of tags) {
          const i = next.findIndex((x) => x.key === t.key);
          if (i >= 0) next[i] = t;
          else next.push(t);
        }
        if (next.length > MAX_TAGS) throw new CloudError(400, Codes.ecsTagLimit, `The number of tags cannot be greater than ${MAX_TAGS} (server ${s.id} would have ${next.length})`);
        s.tags = next;
      } else {
        // Delete: by key, and by value when one is given; keys not present are ignored.
        s.tags = s.tags.filter((x) => !tags.some((t) => t.key === x.key && (t.value === '' || t.value === x.value)));
      }
      s.updated = b.engine.now();
      b.engine.storeRef.markDirty();
      b.engine.record(`server.tags-${action === 'create' ? 'created' : 'deleted'}`, `server ${s.name} (${s.id}) tags ${action}: ${tags.map((t) => t.key).join(', ')}`, { serverId: s.id, keys: tags.map((t) => t.key) });
      return reply.code(204).send();
    });

    // UpdateServerMetadata: POST /v1/{project_id}/cloudservers/{server_id}/metadata {metadata:{k:v}} -> {metadata} (all of it).
    route(app, ECS.updateServerMetadata, {}, async (req) => {
      const { server_id } = req.params as P;
      const s = server(b.engine, req.hcs.projectId, server_id!);
      const root = ecsV.obj(req.hcs.json, 'body');
      const meta = ecsV.stringMap(root.metadata, 'metadata');
      if (root.metadata === undefined) ecsV.fail('metadata', 'is required');
      // Every key and value is checked before any is stored: a refused call changes nothing (issue 32).
      for (const [k, v] of Object.entries(meta)) {
        if (k.length === 0 || k.length > 255) ecsV.fail(`metadata.${k}`, 'keys must be 1-255 characters');
        if (v.length > 255) ecsV.fail(`metadata.${k}`, 'values must be at most 255 characters');
      }
      for (const [k, v] of Object.entries(meta)) setOwn(s.metadata, k, v);
      s.updated = b.engine.now();
      b.engine.storeRef.markDirty();
      b.engine.record('server.metadata-updated', `server ${s.name} (${s.id}) metadata: ${Object.keys(meta).join(', ')}`, { serverId: s.id, keys: Object.keys(meta) });
      const out: Record<string, string> = {};
      for (const k of Object.keys(s.metadata)) setOwn(out, k, own(s.metadata, k)!);
      return { metadata: out };
    });

    // DeleteServerMetadata (ecs_02_0702): DELETE /v1/{project_id}/cloudservers/{server_id}/metadata/{key} -> 204, no body.
    // The behaviour (404 as ShowServer, the key checked as UpdateServerMetadata checks one, a key the server
    // does not have) is EcsService.deleteServerMetadata's; fault rules see the server of the path.
    route(app, ECS.deleteServerMetadata, { resource: pathServer }, async (req, reply) => {
      const { server_id, key } = req.params as P & { key?: string };
      b.engine.ecs.deleteServerMetadata(req.hcs.projectId, server_id!, key ?? '');
      return reply.code(204).send();
    });

    // UpdateServerBlockDevice (ecs_02_0607): PUT /v1/{project_id}/cloudservers/{server_id}/block_device/{volume_id}
    // {block_device:{delete_on_termination}} -> no body (the SDKs' UpdateServerBlockDeviceResponse carries none;
    // the page points to the common return values). Only delete_on_termination can change, and "system disks cannot
    // be modified" (the page's constraints). No ECS code names that case: Ecs.0005, as for other invalid parameters.
    // It decides whether DeleteServers removes the disk (DISK-9: a persistent disk must survive its server).
    route(app, ECS.updateServerBlockDevice, { resource: serverAndVolume }, async (req, reply) => {
      const { server_id, volume_id } = req.params as P & { volume_id?: string };
      const s = server(b.engine, req.hcs.projectId, server_id!);
      const root = ecsV.obj(req.hcs.json, 'body');
      if (root.block_device === undefined) ecsV.fail('block_device', 'is required');
      const bd = ecsV.obj(root.block_device, 'block_device');
      if (typeof bd.delete_on_termination !== 'boolean') ecsV.fail('block_device.delete_on_termination', 'is required and must be a boolean');
      const value = bd.delete_on_termination as boolean;
      const sv = s.volumes.find((v) => v.volumeId === volume_id);
      // As GET on the same path answers a volume that is not attached (Ecs.0111).
      if (!sv) throw new CloudError(404, Codes.ecsVolumeNotAttached, `Volume ${volume_id} is not attached to server ${s.id}`);
      if (sv.bootIndex === 0) ecsV.fail('volume_id', `${volume_id} is the system disk of server ${s.id}; system disks cannot be modified (ecs_02_0607)`);
      const was = sv.deleteOnTermination;
      sv.deleteOnTermination = value;
      s.updated = b.engine.now();
      b.engine.storeRef.markDirty();
      b.engine.record('server.block-device-updated', `server ${s.name} (${s.id}) volume ${volume_id}: delete_on_termination ${String(was)} -> ${String(value)}`, {
        serverId: s.id,
        volumeId: volume_id,
        deleteOnTermination: value,
      });
      return reply.code(204).send();
    });

    // ListServerInterfaces: GET /v1/{project_id}/cloudservers/{server_id}/os-interface -> {interfaceAttachments}
    route(app, ECS.listServerInterfaces, {}, async (req) => {
      const { server_id } = req.params as P;
      const s = server(b.engine, req.hcs.projectId, server_id!);
      return {
        interfaceAttachments: s.nics.map((n) => {
          const sub = b.engine.subnetInfo(n.subnetId);
          return {
            port_state: s.status === 'ACTIVE' ? 'ACTIVE' : 'DOWN',
            fixed_ips: [{ subnet_id: sub?.cfg.neutron_subnet_id ?? n.subnetId, ip_address: n.ip }],
            net_id: n.subnetId,
            port_id: n.portId,
            mac_addr: n.mac,
          };
        }),
      };
    });

    // NovaListAvailabilityZones: GET /v2.1/{project_id}/os-availability-zone -> {availabilityZoneInfo}
    route(app, ECS.listAvailabilityZones, {}, async () => ({
      availabilityZoneInfo: b.engine.config.availabilityZones.map((zoneName) => ({ zoneName, zoneState: { available: true }, hosts: null })),
    }));
  };
}
