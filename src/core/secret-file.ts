/**
 * Files that hold a credential (a bearer token, a private key, an AK/SK):
 * owner-only (0600) whether or not the file existed before. `writeFileSync`
 * with `{ mode: 0o600 }` sets the mode of a new file only; an existing
 * file keeps its mode, so a kubeconfig once written 0644 stayed readable by
 * every user of the machine (issue 24). Here the content goes to a fresh
 * 0600 file in the same directory, which is then renamed over the target:
 * the target is never readable by others, not even for a moment, and a reader
 * sees either the old or the new content, never half of it.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

export const SECRET_FILE_MODE = 0o600;

/** Write `data` to `path` with mode 0600 (also when `path` exists with another mode). */
export function writeSecretFile(path: string, data: string | Uint8Array): void {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  // 'wx': a new file (never follows an existing name), created 0600 before a byte is written.
  const fd = openSync(tmp, 'wx', SECRET_FILE_MODE);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
