/**
 * The data file: read and checked once at start, written atomically (a
 * temporary file in the same directory, then rename) on every durable
 * change. A file that cannot be read as this cloud's state is refused with
 * its name and the reason, and left untouched: never a silent reset.
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { CloudConfig } from './config.js';
import { checkIntegrity, validateDbData } from './state-validate.js';
import { emptyData, normalizeDbData, type DbData } from './state-data.js';

export class DataFileError extends Error {
  override name = 'DataFileError';
}

const HOW_TO_FIX = 'refusing to start with an empty cloud — fix the file, restore a backup or remove it deliberately';

/**
 * Read the data file: `undefined` when it does not exist (a fresh cloud),
 * else the checked document. Throws DataFileError naming the file and the
 * problem for anything else (a directory, unreadable, empty, not JSON, not
 * a state document, inconsistent with `config`).
 */
export async function readStateFile(file: string, config?: CloudConfig): Promise<{ doc: DbData; text: string } | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ENOENT') return undefined;
    const why = code === 'EISDIR' ? 'it is a directory, not a file' : code === 'EACCES' ? 'permission denied' : e instanceof Error ? e.message : String(e);
    throw new DataFileError(`mock-hcs: cannot read data file ${file}: ${why}`);
  }
  if (text.trim() === '') throw new DataFileError(`mock-hcs: data file ${file} is empty; ${HOW_TO_FIX}`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new DataFileError(`mock-hcs: data file ${file} is not valid JSON (${e instanceof Error ? e.message : String(e)}); ${HOW_TO_FIX}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new DataFileError(`mock-hcs: data file ${file} is not a mock-hcs state document: it holds ${JSON.stringify(doc)?.slice(0, 40) ?? String(doc)}, not a JSON object; ${HOW_TO_FIX}`);
  }
  const version = (doc as { version?: unknown }).version;
  if (version !== undefined && version !== 1) throw new DataFileError(`mock-hcs: unsupported data file version ${JSON.stringify(version)} in ${file}`);
  const problems = validateDbData(doc);
  if (problems.length > 0) throw new DataFileError(`mock-hcs: data file ${file} is not a mock-hcs state document: ${problems.slice(0, 5).join('; ')}`);
  const d = normalizeDbData(doc as DbData);
  const bad = config ? checkIntegrity(d, config) : [];
  if (bad.length > 0) throw new DataFileError(`mock-hcs: data file ${file} is inconsistent with itself or this cloud's configuration: ${bad.slice(0, 5).join('; ')}; ${HOW_TO_FIX}`);
  return { doc: d, text };
}

/** Atomic whole-file writes: the file holds either the previous or the new text, never a mix (process-crash safe). */
export class AtomicFile {
  private readonly tmp: string;

  constructor(readonly file: string) {
    this.tmp = join(dirname(file), `.${basename(file)}.tmp`);
  }

  async write(text: string): Promise<void> {
    try {
      await writeFile(this.tmp, text, 'utf8');
      await rename(this.tmp, this.file);
    } catch (e) {
      await rm(this.tmp, { force: true }).catch(() => undefined);
      const why = e instanceof Error ? e.message : String(e);
      throw new DataFileError(`mock-hcs: cannot write data file ${this.file}: ${why}`);
    }
  }
}

export { emptyData };
