/**
 * Every answer of the facade that is not a success is a metav1.Status, as the
 * apiserver's are (k8s.io/apimachinery pkg/apis/meta/v1 types.go: Status,
 * StatusReason, StatusCause). Handlers throw HttpStatus (built with status())
 * or KubeApiError (from the store); the facade's error handler turns either
 * into the Status sent (toStatus).
 */
import type { FastifyReply } from 'fastify';
import { KubeApiError } from '../../../core/kube/errors.js';
import type { ResourceInfo } from '../../../core/kube/resources.js';

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: { name?: string; group?: string; kind?: string; causes?: StatusCause[] };
  code: number;
}

/** A Status to answer, thrown by a handler. */
export class HttpStatus extends Error {
  constructor(readonly status: Status) {
    super(status.message);
  }
}

export function status(code: number, reason: string, message: string, details?: Status['details']): HttpStatus {
  return new HttpStatus({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code });
}

export const methodNotAllowed = (): HttpStatus => status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
export const notFound = (message = 'the server could not find the requested resource'): HttpStatus => status(404, 'NotFound', message);

/** `<plural>.<group>` (core kinds: the plural), as the apiserver names a resource in its messages. */
export const qualified = (info: ResourceInfo): string => (info.group ? `${info.plural}.${info.group}` : info.plural);

/** The reason of a field error, from its message (k8s.io/apimachinery pkg/util/validation/field errors.go: ErrorType). */
function causeReason(message: string): string {
  if (/^Required value/.test(message)) return 'FieldValueRequired';
  if (/^Forbidden/.test(message)) return 'FieldValueForbidden';
  if (/^Unsupported value/.test(message)) return 'FieldValueNotSupported';
  if (/^Duplicate/.test(message)) return 'FieldValueDuplicate';
  return 'FieldValueInvalid';
}

function fromKubeApiError(e: KubeApiError, info?: ResourceInfo, name?: string): Status {
  name ??= /^\S+ "([^"]*)" is invalid/.exec(e.message)?.[1];
  let message = e.message;
  if (e.reason === 'NotFound' && info && name) message = `${qualified(info)} "${name}" not found`;
  if (e.reason === 'Invalid' && info?.group && message.startsWith(`${info.kind} "`)) message = `${info.kind}.${info.group}${message.slice(info.kind.length)}`;
  const details: Status['details'] = {
    ...(name ? { name } : {}),
    ...(info ? { group: info.group, kind: e.reason === 'Invalid' ? info.kind : info.plural } : {}),
    ...(e.causes.length ? { causes: e.causes.map((c) => ({ reason: causeReason(c.message), message: c.rule ? `${c.rule}: ${c.message}` : c.message, field: c.field })) } : {}),
  };
  const reason = e.reason === 'Gone' ? 'Expired' : e.reason;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code: e.code };
}

/** The Status answering an error a handler raised; `info`/`name`: the resource the request was about (for the messages). */
export function toStatus(e: unknown, info?: ResourceInfo, name?: string): Status {
  if (e instanceof HttpStatus) return e.status;
  if (e instanceof KubeApiError) return fromKubeApiError(e, info, name);
  const msg = e instanceof Error ? e.message : String(e);
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: msg, reason: 'InternalError', details: { causes: [{ reason: 'UnexpectedServerResponse', message: msg }] }, code: 500 };
}

export function sendStatus(reply: FastifyReply, s: Status): FastifyReply {
  return reply.code(s.code).type('application/json').send(s);
}

/** A Status of fastify's own errors (body too large, a refused content type, a malformed request). */
export function frameworkStatus(code: number, message: string): Status {
  const reason = code === 413 ? 'RequestEntityTooLarge' : code === 415 ? 'UnsupportedMediaType' : code === 404 ? 'NotFound' : code >= 500 ? 'InternalError' : 'BadRequest';
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}
