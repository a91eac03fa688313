/**
 * A Stryker reporter that appends every tested mutant to `<out>/mutants.jsonl` as soon as its verdict is known
 * (HCS_MUTATION_OUT, default out/mutation). Stryker writes its JSON and HTML reports only at the end of a run; a
 * run stopped early (a shared machine, a session's time, a pod's deadline) keeps its verdicts so far here, and
 * `npm run mutation -- partial` turns them into a report.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { declareClassPlugin, PluginKind } from '@stryker-mutator/api/plugin';
import type { MutantResult } from '@stryker-mutator/api/core';
import type { Reporter } from '@stryker-mutator/api/report';

export const PROGRESS_FILE = 'mutants.jsonl';

export class ProgressReporter implements Reporter {
  private readonly file = join(process.env.HCS_MUTATION_OUT ?? 'out/mutation', PROGRESS_FILE);

  constructor() {
    mkdirSync(join(this.file, '..'), { recursive: true });
    writeFileSync(this.file, '');
  }

  onMutantTested(r: Readonly<MutantResult>): void {
    const line = {
      file: relative(process.cwd(), r.fileName),
      id: r.id,
      mutatorName: r.mutatorName,
      replacement: r.replacement,
      location: r.location,
      status: r.status,
      ...(r.statusReason ? { statusReason: r.statusReason.slice(0, 500) } : {}),
      ...(r.coveredBy ? { coveredBy: r.coveredBy } : {}),
      ...(r.killedBy ? { killedBy: r.killedBy } : {}),
      ...(r.static ? { static: true } : {}),
      ...(r.testsCompleted !== undefined ? { testsCompleted: r.testsCompleted } : {}),
    };
    appendFileSync(this.file, JSON.stringify(line) + '\n');
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, 'hcs-progress', ProgressReporter)];
