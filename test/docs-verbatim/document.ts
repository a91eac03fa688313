/**
 * The kubectl commands of a procedure document (extracted by
 * src/harness/demo/document.ts, shared with the guided demo), taken from the document
 * itself (test/docs-verbatim/seeds/, copies of the seeds the rule catalogue (docs/rules.md) is built
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
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractCommands, fill, SEEDS_DIR, type DocCommand, type Placeholders } from '../../src/harness/demo/document.js';

export { extractCommands, fill, SEEDS_DIR, UPGRADE_DOC, WORKER_DOC, type DocCommand, type Placeholders } from '../../src/harness/demo/document.js';

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

export { editTemplateCopy } from '../../src/harness/demo/document.js';
