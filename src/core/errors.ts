/**
 * Typed errors. Every rule violation names the SPEC rule ID and the field, so
 * that users see e.g. "DISK-2: spec.configs[1].persistentDisks[1].slot: ...".
 */
export class RuleViolation extends Error {
  constructor(
    readonly rule: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${rule}: ${field}: ${reason}`);
    this.name = 'RuleViolation';
  }
}

/** Input (a file, a manifest, a CLI flag) that cannot be used as given. */
export class InputError extends Error {
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
    readonly field?: string,
  ) {
    super(
      [file ? `${file}${line ? `:${line}` : ''}` : '', field ? `field ${field}` : '', message]
        .filter(Boolean)
        .join(': '),
    );
    this.name = 'InputError';
  }
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
