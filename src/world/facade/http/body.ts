/**
 * Request bodies: JSON, YAML (server-side apply) and Kubernetes protobuf
 * (kubectl create namespace), decoded with the depth and size limits of
 * src/world/facade/validate.ts and src/core/yaml-limits.ts. The facade's
 * content parsers keep a body as it came (a string, a Buffer for protobuf);
 * a handler decodes it when it needs it, after authentication (plugins/auth.ts).
 */
import type { FastifyRequest } from 'fastify';
import { parseYamlValue } from '../../../core/yaml-limits.js';
import { decodeKubeProtobuf, PROTOBUF_CONTENT_TYPE, ProtobufError } from '../protobuf/decode.js';
import { jsonDepth, MAX_BODY_DEPTH, valueDepth } from '../validate.js';
import { status, type HttpStatus } from './status.js';

/** The largest request body the facade reads (a larger one is answered 413 RequestEntityTooLarge). */
export const BODY_LIMIT_BYTES = 16 * 1024 * 1024;

/** Whether the request carries a body (a DELETE may, with DeleteOptions). */
export function hasBody(req: FastifyRequest): boolean {
  if (Buffer.isBuffer(req.body)) return req.body.length > 0;
  return typeof req.body === 'string' && req.body.trim() !== '';
}

/** The media type of the request's body, without parameters. */
export function contentType(req: FastifyRequest): string {
  return String(req.headers['content-type'] ?? '').split(';')[0]!.trim();
}

export function parseBody(req: FastifyRequest): unknown {
  if (String(req.headers['content-type'] ?? '').startsWith(PROTOBUF_CONTENT_TYPE) && Buffer.isBuffer(req.body)) {
    try {
      return decodeKubeProtobuf(req.body);
    } catch (e) {
      if (e instanceof ProtobufError) throw status(e.code, e.code === 415 ? 'UnsupportedMediaType' : 'BadRequest', e.message);
      throw e;
    }
  }
  const raw = typeof req.body === 'string' ? req.body : Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  if (raw.trim() === '') throw status(400, 'BadRequest', 'the request body is empty');
  const ct = String(req.headers['content-type'] ?? 'application/json');
  const tooDeep = (): HttpStatus => status(400, 'BadRequest', `the body of the request could not be decoded: it nests deeper than ${MAX_BODY_DEPTH} levels`);
  if (!ct.includes('yaml') && jsonDepth(raw) > MAX_BODY_DEPTH) throw tooDeep();
  let v: unknown;
  try {
    v = ct.includes('yaml') ? parseYamlValue(raw) : (JSON.parse(raw) as unknown); // YAML: the size, depth and alias limits of src/core/yaml-limits.ts, duplicate keys in linear time
  } catch (e) {
    throw status(400, 'BadRequest', `the body of the request could not be decoded: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (ct.includes('yaml') && valueDepth(v, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) throw tooDeep();
  return v;
}
