/**
 * The error shape of every HCS service. mock-hcs always answers
 * `{"error":{"code","message"}}`; clients also read the other spellings the
 * services document (`error_code`/`error_msg`, top-level `code`/`message`),
 * as the official SDKs do.
 */

export interface ErrorBody {
  error?: { code?: string; message?: string };
  error_code?: string;
  error_msg?: string;
  code?: string;
  message?: string;
}

/** The one error document mock-hcs sends. */
export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

/** Code and message of an error document (`fallback` for what it does not say). */
export function readErrorBody(b: ErrorBody, fallback: { code: string; message: string }): { code: string; message: string } {
  return { code: b.error?.code ?? b.error_code ?? b.code ?? fallback.code, message: b.error?.message ?? b.error_msg ?? b.message ?? fallback.message };
}
