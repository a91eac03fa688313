/** Reading a bundle file (the whole of it, checked before anything uses it). */
import { readFileSync } from 'node:fs';
import { errorMessage } from '../../core/errors.js';
import { BundleError, parseBundle, type Bundle } from './bundle.js';

/** Read and check a bundle file. Throws BundleError naming the file and the problem. */
export function readBundleFile(file: string): Bundle {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new BundleError(code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory, not a bundle file' : errorMessage(e), file);
  }
  return parseBundle(text, file);
}
