/** EVS calls of the HCS client: cloud volumes. */
import { EVS, queryString, type CreateVolumeBody, type CreateVolumeResponse, type ResizeVolumeBody, type ResizeVolumeResponse, type UpdateVolumeBody, type Volume } from '../../core/hcs/index.js';
import type { HcsCaller } from './caller.js';

const EVS_MAX_PAGE = 1000;

export const evsCalls = {
  createVolume(this: HcsCaller, body: CreateVolumeBody): Promise<CreateVolumeResponse> {
    return this.call(EVS.createVolume, {}, { body });
  },

  async showVolume(this: HcsCaller, id: string): Promise<Volume | undefined> {
    return (await this.find<{ volume: Volume }>(EVS.showVolume, { volume_id: id }))?.volume;
  },

  /** List volumes (all pages). `metadata` matches volumes carrying every given key/value. `name` is a fuzzy (substring) match. */
  async listVolumes(this: HcsCaller, q: { name?: string; status?: string; metadata?: Record<string, string>; serverId?: string } = {}): Promise<Volume[]> {
    const out: Volume[] = [];
    for (let offset = 0; ; offset += EVS_MAX_PAGE) {
      const query = queryString({
        name: q.name,
        status: q.status,
        server_id: q.serverId,
        metadata: q.metadata && Object.keys(q.metadata).length ? JSON.stringify(q.metadata) : undefined,
        limit: EVS_MAX_PAGE,
        offset,
      });
      const r = await this.call<{ count: number; volumes: Volume[] }>(EVS.listVolumes, {}, { query });
      out.push(...r.volumes);
      if (r.volumes.length < EVS_MAX_PAGE || out.length >= r.count) return out;
    }
  },

  /** EVS UpdateVolume: name, description, metadata keys (null removes a key). The response is the volume itself, not `{volume}` (EVS API reference). */
  updateVolume(this: HcsCaller, id: string, volume: UpdateVolumeBody['volume']): Promise<Volume> {
    return this.call<Volume>(EVS.updateVolume, { volume_id: id }, { body: { volume } });
  },

  async deleteVolume(this: HcsCaller, id: string): Promise<void> {
    await this.call(EVS.deleteVolume, { volume_id: id });
  },

  /**
   * EVS ResizeVolume (os-extend): grow a disk to `newSize` GB through an extendVolume job (ShowJob);
   * the disk is `extending` until the job ends, then has the new size. An in-use disk can grow while
   * its server is ACTIVE or SHUTOFF; the guest sees the new size, its file system still has to grow.
   */
  resizeVolume(this: HcsCaller, id: string, newSize: number): Promise<ResizeVolumeResponse> {
    const body: ResizeVolumeBody = { 'os-extend': { new_size: newSize } };
    return this.call(EVS.resizeVolume, { volume_id: id }, { body });
  },
};
