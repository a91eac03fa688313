/**
 * The kubectl commands of a procedure document, taken from the document's
 * own text (the copies of the seeds in test/docs-verbatim/seeds/, which
 * the rule catalogue, docs/rules.md, is built from): the guided demo (src/harness/cli/demo.ts) prints and runs
 * them, test/docs-verbatim types them.
 *
 * A command is a line whose text starts with `kubectl ` plus the lines it
 * continues onto with a trailing backslash, as the document prints them
 * (the first line's indentation removed; continuation lines kept as they
 * are, which the shell reads the same). Placeholders (`<cluster-name>`,
 * `<new-replica-count>`, …) are replaced from a table of values; a
 * placeholder without a value is an error, and nothing else of the command
 * is touched.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { repoPath } from '../../core/repo.js';

export const SEEDS_DIR = repoPath('test', 'docs-verbatim', 'seeds');
export const WORKER_DOC = '000_e99b31504f290b7f.txt';
export const UPGRADE_DOC = '004_65166b788b802341.txt';

export interface DocCommand {
  /** 1-based line of the command's first line in the document. */
  line: number;
  /** The command as written (placeholders included). */
  text: string;
}

/** Every kubectl command line (with its continuations) of a document, in order. */
export function extractCommands(doc: string): DocCommand[] {
  const lines = doc.split('\n');
  const out: DocCommand[] = [];
  for (let i = 0; i < lines.length; i++) {
    const first = lines[i]!.trimStart();
    if (!first.startsWith('kubectl ')) continue;
    const parts = [first.trimEnd()];
    const line = i + 1;
    while (parts[parts.length - 1]!.endsWith('\\') && i + 1 < lines.length) parts.push(lines[++i]!.trimEnd());
    out.push({ line, text: parts.join('\n') });
  }
  return out;
}

export type Placeholders = Record<string, string>;

const PLACEHOLDER = /<[a-z0-9][a-z0-9.-]*>/g;

/** Replace the placeholders of `text` from `values`; every placeholder must have one. */
export function fill(text: string, values: Placeholders): string {
  return text.replace(PLACEHOLDER, (p) => {
    const v = values[p];
    if (v === undefined) throw new Error(`no value for the placeholder ${p} in: ${text}`);
    return v;
  });
}

/** A document's text and commands. */
export function loadDocument(file: string): { file: string; text: string; commands: DocCommand[] } {
  const text = readFileSync(join(SEEDS_DIR, file), 'utf8');
  return { file, text, commands: extractCommands(text) };
}

/**
 * A person's edit of a copied HCSMachineTemplate as the documents describe it (TPL-5):
 * metadata.name → `newName`, the fields the document lists removed (`metadata.uid`, `status`, or
 * `kubectl.kubernetes.io/last-applied-configuration` for that annotation), the runtime identity
 * fields checked empty (TPL-4), then `change` on spec.template.spec.
 */
export function editTemplateCopy(file: string, newName: string, remove: string[], change: (spec: Record<string, unknown>) => void): void {
  type Copy = { metadata: Record<string, unknown> & { annotations?: Record<string, string> }; spec: { template: { spec: Record<string, unknown> } }; status?: unknown };
  const t = parse(readFileSync(file, 'utf8')) as Copy;
  t.metadata.name = newName;
  for (const f of remove) {
    if (f === 'status') delete t.status;
    else if (f.startsWith('metadata.')) delete t.metadata[f.slice('metadata.'.length)];
    else if (t.metadata.annotations) {
      delete t.metadata.annotations[f];
      if (Object.keys(t.metadata.annotations).length === 0) delete t.metadata.annotations;
    }
  }
  const spec = t.spec.template.spec;
  if (spec.providerID || spec.serverId) throw new Error(`${file}: the copy carries providerID/serverId (TPL-4)`);
  change(spec);
  writeFileSync(file, stringify(t));
}
