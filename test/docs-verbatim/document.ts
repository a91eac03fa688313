/**
 * The kubectl commands of a procedure document, taken from the document
 * itself (test/docs-verbatim/seeds/, copies of the seeds SPEC.md is built
 * from), so that a test types them as written and notices when the
 * document changes.
 *
 * A command is a line whose text starts with `kubectl ` plus the lines it
 * continues onto with a trailing backslash, as the document prints them
 * (the first line's indentation removed; continuation lines kept as they
 * are, which the shell reads the same). Commands are kept in document
 * order; a test walks them with `next()`, which must name the command it
 * expects (its start, with the placeholders as written), so the test
 * follows the document's order and fails on drift. `done()` says which
 * commands were never typed.
 *
 * Placeholders (`<cluster-name>`, `<new-replica-count>`, …) are replaced
 * from the values a test gives (its table); a placeholder without a value
 * is an error, and nothing else of the command is touched.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

export const SEEDS_DIR = join(fileURLToPath(new URL('.', import.meta.url)), 'seeds');
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

export class SeedDocument {
  readonly text: string;
  readonly commands: DocCommand[];
  private cursor = 0;
  private readonly typed = new Set<number>();

  constructor(readonly file: string) {
    this.text = readFileSync(join(SEEDS_DIR, file), 'utf8');
    this.commands = extractCommands(this.text);
  }

  /**
   * The next command of the document, which must start with `start` (as
   * written, placeholders included), filled in from `values`.
   */
  next(start: string, values: Placeholders): string {
    const c = this.commands[this.cursor];
    if (!c) throw new Error(`${this.file}: no command left, expected "${start}"`);
    if (!c.text.startsWith(start)) throw new Error(`${this.file}:${c.line}: the document's next command is\n${c.text}\nnot "${start}…" (did the document change?)`);
    this.typed.add(this.cursor);
    this.cursor++;
    return fill(c.text, values);
  }

  /** A command met earlier in the document, typed again (e.g. the copy procedure for another template). */
  again(start: string, values: Placeholders): string {
    const c = this.commands.slice(0, this.cursor).find((x) => x.text.startsWith(start));
    if (!c) throw new Error(`${this.file}: no earlier command starts with "${start}"`);
    return fill(c.text, values);
  }

  /**
   * A command of this document found anywhere by what it contains, for a procedure another document
   * points to (the upgrade document's worker steps are the worker document's commands); order not checked.
   */
  lookup(containing: string, values: Placeholders): string {
    const found = this.commands.filter((x) => x.text.includes(containing));
    if (found.length !== 1) throw new Error(`${this.file}: ${found.length} commands contain "${containing}" (want exactly one)`);
    return fill(found[0]!.text, values);
  }

  /** A command written inside a sentence of the document (not on its own line); it must be there verbatim. */
  inline(command: string, values: Placeholders): string {
    if (!this.text.includes(command)) throw new Error(`${this.file}: the document no longer says "${command}"`);
    return fill(command, values);
  }

  /** The commands not typed (yet), as "line: text". */
  untyped(): string[] {
    return this.commands.filter((_, i) => !this.typed.has(i)).map((c) => `${c.line}: ${c.text}`);
  }
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
