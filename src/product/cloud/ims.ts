/** IMS calls of the HCS client: images. */
import { IMS, queryString, type Image } from '../../core/hcs/index.js';
import type { HcsCaller } from './caller.js';

export const imsCalls = {
  async listImages(this: HcsCaller, q: { name?: string; status?: string } = {}): Promise<Image[]> {
    return (await this.call<{ images: Image[] }>(IMS.listImages, {}, { query: queryString({ name: q.name, status: q.status }) })).images;
  },
};
