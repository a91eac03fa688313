/** The provider's HCS client (ECS, EVS, VPC, IMS over signed HTTP). */
export { HcsClient, HcsApiError, type HcsClientOptions, type ListServersQuery } from './client.js';
export { signRequest, sdkDate, sdkUrlEncode } from './signer.js';
export { injectTransport, fetchTransport, type HcsTransport, type HttpRequest, type HttpResponse } from './transport.js';
export type * from './types.js';
