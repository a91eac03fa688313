/**
 * `hcs-testbed time`: control the live clock of a running `hcs-testbed serve`
 * through its time API (src/harness/dashboard/time-api.ts).
 */
import { parseArgs } from 'node:util';
import { formatDuration } from '../../core/clock.js';
import { errorMessage } from '../../core/errors.js';
import { call, resolveTarget, type Target } from '../dashboard/time-client.js';

export const TIME_HELP = `hcs-testbed time — control the live clock of hcs-testbed serve

Usage:
  hcs-testbed time [status]           show virtual time, speed, paused or running
  hcs-testbed time pause              stop virtual time (controllers stay, nothing falls due)
  hcs-testbed time resume             let it run again at the current speed
  hcs-testbed time speed X            X virtual seconds per wall second (0 = paused)
  hcs-testbed time advance DURATION   let DURATION of virtual time pass now (5m, 90s, 1h30m)
  hcs-testbed time next               run to the next pending timer (a requeue, a cloud transition)

Where the server is:
  --kubeconfig FILE    the kubeconfig serve wrote (default $KUBECONFIG); its management
                       context gives the address and the credentials
  --server URL         the address serve printed (overrides the kubeconfig's)
  --token T            bearer token (overrides the kubeconfig's)
  -h, --help           this text

Exit codes: 0 done, 1 the server refused or could not be reached, 2 bad usage.
`;

function describe(s: { iso?: string; paused?: boolean; speed?: number; nextDue?: number; now?: number; movedMs?: number }): string {
  const next = s.nextDue !== undefined && s.now !== undefined ? `, next timer in ${formatDuration(Math.max(0, s.nextDue - s.now))}` : '';
  const moved = s.movedMs !== undefined ? ` (moved ${formatDuration(s.movedMs)})` : '';
  return `virtual time ${s.iso}${moved}: ${s.paused || s.speed === 0 ? 'paused' : `running at ${s.speed}x`}${next}\n`;
}

export async function timeMain(argv: string[], write: (s: string) => void): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { kubeconfig: { type: 'string' }, server: { type: 'string' }, token: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
    });
  } catch (e) {
    write(`error: ${errorMessage(e)}\n(see hcs-testbed time --help)\n`);
    return 2;
  }
  if (parsed.values.help) {
    write(TIME_HELP);
    return 0;
  }
  const [op = 'status', arg, ...extra] = parsed.positionals;
  const usage = (m: string): number => {
    write(`error: ${m}\n(see hcs-testbed time --help)\n`);
    return 2;
  };
  if (extra.length) return usage(`unexpected arguments: ${extra.join(' ')}`);
  let method = 'POST';
  let path: string;
  let body: unknown;
  switch (op) {
    case 'status':
      method = 'GET';
      path = '_testbed/time';
      break;
    case 'pause':
    case 'resume':
    case 'next':
      path = `_testbed/time/${op}`;
      break;
    case 'speed':
      if (arg === undefined || arg.trim() === '' || !Number.isFinite(Number(arg))) return usage(`speed needs a number (virtual seconds per wall second), got ${arg === undefined ? 'nothing' : `"${arg}"`}`);
      path = '_testbed/time/speed';
      body = { speed: Number(arg) };
      break;
    case 'advance':
      if (!arg) return usage('advance needs a duration such as 5m, 90s or 1h30m');
      path = '_testbed/time/advance';
      body = { duration: arg };
      break;
    default:
      return usage(`unknown time command "${op}" (known: status, pause, resume, speed, advance, next)`);
  }
  if (['status', 'pause', 'resume', 'next'].includes(op) && arg !== undefined) return usage(`${op} takes no argument, got "${arg}"`);
  let target: Target;
  try {
    target = resolveTarget(parsed.values);
  } catch (e) {
    return usage(errorMessage(e));
  }
  try {
    const r = await call(target, method, path, body);
    if (r.code !== 200) {
      const msg = typeof r.json === 'object' && r.json !== null && 'message' in r.json ? String((r.json as { message: unknown }).message) : String(r.json);
      write(`error: ${target.server} answered ${r.code}: ${msg}\n`);
      return 1;
    }
    write(describe(r.json as Parameters<typeof describe>[0]));
    return 0;
  } catch (e) {
    write(`error: ${target.server}: ${errorMessage(e)}\n`);
    return 1;
  }
}
