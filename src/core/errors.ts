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
    /** 1-based column, when the error points at one character (YAML syntax and limits). */
    readonly col?: number,
  ) {
    super([inputErrorPrefix(file, line, field, col), message].filter(Boolean).join(': '));
    this.name = 'InputError';
  }
}

/** `file:line:col: field F` — what an InputError's message starts with (without the ': ' before the reason). */
export function inputErrorPrefix(file?: string, line?: number, field?: string, col?: number): string {
  return [file ? `${file}${line ? `:${line}${col ? `:${col}` : ''}` : ''}` : '', field ? `field ${field}` : ''].filter(Boolean).join(': ');
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
