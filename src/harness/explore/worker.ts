/**
 * The worker process (src/harness/explore/pool.ts starts it through worker-entry.mjs):
 * runs one job at a time as the parent sends them over IPC and answers with
 * a summary (explore) or the full scenario result (`run --jobs`). Everything
 * is caught: a run that throws is an answer, not a dead worker. A run that
 * stops making progress (no new event and no move of the virtual clock for
 * `stallMs` of wall time while nothing else runs) is answered as a stall, and
 * the worker then exits (the parent starts a fresh one).
 */
import { errorMessage, InputError } from '../../core/errors.js';
import { MockHcsAppPool } from '../../../mock-hcs/src/index.js';
import { loadScenario } from '../scenario/parse.js';
import { runScenario } from '../scenario/runner.js';
import type { Scenario } from '../scenario/types.js';
import type { Testbed } from '../testbed/testbed.js';
import { embeddedFactory, loadPlugin, type TestbedPlugin } from './plugin.js';
import type { Reply, Request } from './pool.js';
import { hashEvents, runOne } from './run-one.js';
import { recordBundleRun } from './bundle.js';
import { armScenarioSchedule } from './schedule.js';

let plugin: TestbedPlugin | undefined;
/** One pool of mock-hcs apps for all the runs of this worker (TestbedOptions.appPool): ~6 ms of CPU less per run. */
const appPool = new MockHcsAppPool();
let stallMs = 8_000;
const scenarios = new Map<string, Scenario>();
let current: { id: number; tb?: Testbed; mark: string; since: number } | undefined;

function send(m: Reply, then?: () => void): void {
  process.send!(m, undefined, undefined, then);
}

function scenario(file: string): Scenario {
  let s = scenarios.get(file);
  if (!s) scenarios.set(file, (s = loadScenario(file)));
  return s;
}

const watchdog = setInterval(() => {
  if (!current?.tb) return;
  const mark = `${current.tb.events.size()}@${current.tb.clock.now()}`;
  const now = performance.now();
  if (mark !== current.mark) {
    current.mark = mark;
    current.since = now;
    return;
  }
  // The interval only runs when the run is awaiting something other than its own work: with no progress for this long it never will.
  if (now - current.since < stallMs) return;
  const events = current.tb.events.all();
  const last = events[events.length - 1];
  send({
    id: current.id,
    summary: {
      ok: false,
      failure: { signature: 'stall: the run stopped making progress', error: `no event and no virtual time passed for ${Math.round(stallMs / 1000)}s of wall time; last event #${last?.seq ?? 0}: ${last?.message ?? '-'}` },
      events: events.length,
      eventsHash: hashEvents(events),
      virtualMs: 0,
      wallMs: now - current.since,
    },
    dying: true,
  }, () => process.exit(3));
  current = undefined;
}, 1000);
watchdog.unref();

async function handle(m: Request): Promise<void> {
  if (m.type === 'init') {
    if (m.plugin) plugin = await loadPlugin(m.plugin);
    if (m.stallMs) stallMs = m.stallMs;
    send({ id: m.id, ready: true });
    return;
  }
  current = { id: m.id, mark: '', since: performance.now() };
  const track = (tb: Testbed): void => {
    if (current) current.tb = tb;
  };
  try {
    if (m.type === 'explore') {
      const s = scenario(m.file);
      const summary = await runOne(s, m.seed, m.schedule ?? s.schedule ?? [], { ...(plugin ? { plugin } : {}), ...(m.profile ? { profile: true } : {}), onTestbed: track, appPool });
      send({ id: m.id, summary });
    } else if (m.type === 'bundle') {
      send({ id: m.id, summary: await recordBundleRun(m.file, m.dir, plugin, track) });
    } else {
      const s = m.scenario ?? scenario(m.file);
      const result = await runScenario(s, embeddedFactory(plugin, track, appPool), { ...(m.seed !== undefined ? { seed: m.seed } : {}), prepare: armScenarioSchedule });
      send({ id: m.id, result });
    }
  } catch (e) {
    send({ id: m.id, error: errorMessage(e), input: e instanceof InputError });
  } finally {
    current = undefined;
  }
}

let chain = Promise.resolve();
process.on('message', (m: Request) => {
  chain = chain.then(() => handle(m));
});
process.on('disconnect', () => process.exit(0));
