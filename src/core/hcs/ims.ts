/** IMS (Image Management Service): GET /v2/cloudimages (the IMS API reference, ListImages). */
import { defineOperations } from './operation.js';

export const IMS = defineOperations('ims', {
  listImages: { sdk: 'ListImages', method: 'GET', path: '/v2/cloudimages' },
});

/** ListImages' `images[]`. */
export interface Image {
  id: string;
  name: string;
  status: string;
  min_disk: number;
  __os_version?: string;
  /** Kubernetes version carried by the image (mock-hcs extension, see mock-hcs/README.md; HCS-4, BOOT-4). */
  __support_kubernetes_version?: string;
  [k: string]: unknown;
}
