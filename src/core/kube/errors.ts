/** Errors shaped like the apiserver's Status responses, shared by all backends. */
export type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'BadRequest'
  | 'Forbidden'
  | 'Gone'
  | 'MethodNotAllowed'
  | 'UnsupportedMediaType'
  | 'InternalError';

const CODES: Record<StatusReason, number> = {
  NotFound: 404,
  AlreadyExists: 409,
  Conflict: 409,
  Invalid: 422,
  BadRequest: 400,
  Forbidden: 403,
  Gone: 410,
  MethodNotAllowed: 405,
  UnsupportedMediaType: 415,
  InternalError: 500,
};

export interface FieldCause {
  field: string;
  message: string;
  /** SPEC rule ID, when the rejection comes from a documented rule. */
  rule?: string;
}

export class KubeApiError extends Error {
  readonly code: number;
  constructor(
    readonly reason: StatusReason,
    message: string,
    readonly causes: FieldCause[] = [],
  ) {
    super(message);
    this.name = 'KubeApiError';
    this.code = CODES[reason];
  }

  static notFound(kind: string, name: string): KubeApiError {
    return new KubeApiError('NotFound', `${kind} "${name}" not found`);
  }

  /** Build an Invalid error the way the apiserver words it: `Kind "name" is invalid: field: msg`. */
  static invalid(kind: string, name: string, causes: FieldCause[]): KubeApiError {
    const detail = causes.map((c) => `${c.field}: ${c.rule ? `${c.rule}: ` : ''}${c.message}`).join(', ');
    return new KubeApiError('Invalid', `${kind} "${name}" is invalid: ${detail}`, causes);
  }
}

export function isNotFound(e: unknown): boolean {
  return e instanceof KubeApiError && e.reason === 'NotFound';
}

export function isConflict(e: unknown): boolean {
  return e instanceof KubeApiError && e.reason === 'Conflict';
}

/**
 * The message of an Invalid error with its causes in one canonical form,
 * `<head> is invalid: <field>: <RULE>: <message>, ...`, whichever backend
 * produced it. The embedded store words it this way already; a real
 * apiserver's CEL rules put the error type first ("field: Forbidden: NET-1:
 * ..."), which statusToError (src/core/kube/client-node.ts) splits into the same
 * causes. Scenario steps that expect a rejection match on this form.
 */
export function canonicalMessage(e: KubeApiError): string {
  if (e.reason !== 'Invalid' || !e.causes.some((c) => c.rule)) return e.message;
  const i = e.message.indexOf(' is invalid: ');
  const head = i >= 0 ? e.message.slice(0, i) : e.message.replace(/:.*$/s, '');
  return `${head} is invalid: ${e.causes.map((c) => `${c.field}: ${c.rule ? `${c.rule}: ` : ''}${c.message}`).join(', ')}`;
}
