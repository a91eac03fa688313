/**
 * A writer process of the kill -9 durability test (kill9.test.ts): against
 * the mock-hcs at URL it creates COUNT resources, alternating a server
 * (CreateServers with X-Client-Token = its name, retried with the same token
 * until acknowledged) and a volume (CreateVolume, never retried: an
 * unacknowledged one may or may not exist). Every acknowledged create is
 * printed as one JSON line: {kind, name, id, job}; an unknown outcome as
 * {kind, name, maybe: true}. Exits 1 on a 4xx (a refused create is a bug).
 * Paced by the test: each line on stdin is a number N, "you may make up to N
 * creates"; the writer waits before create N+1 until it is allowed (so the
 * test's kills always come while the writers still have work, however the
 * machine's load starves the test process). Stdin closed: no limit.
 *
 *   node --import tsx test/mock-hcs/kill9-writer.ts URL WRITER COUNT
 */
import { RealClock } from '../../src/core/index.js';
import { HcsClient, fetchTransport } from '../../src/product/cloud/index.js';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';

const [url, writer, countText] = process.argv.slice(2);
const count = Number(countText);
const cfg = defaultCloudConfig();
const p = cfg.projects[0]!;
const subnet = cfg.subnets.find((s) => s.name === 'worker-subnet')!;
// Each call bounded at 10 s: a call to a killed server fails (outcome unknown) instead of hanging.
const client = new HcsClient({ transport: fetchTransport(url!, { timeoutMs: 10_000 }), ak: p.ak, sk: p.sk, projectId: p.id, clock: new RealClock() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const out = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);
// Bounded, but long enough for a loaded 2-core machine (8 restarts of a tsx-started mock-hcs can
// take minutes there); a writer the deadline stops says so and exits 4, never looks finished.
const deadline = Date.now() + 300_000;

let allowed = 0;
let wake: (() => void) | undefined;
let stdinBuf = '';
process.stdin.on('data', (d: Buffer) => {
  stdinBuf += d.toString();
  const lines = stdinBuf.split('\n');
  stdinBuf = lines.pop()!;
  for (const l of lines) if (l.trim()) allowed = Math.max(allowed, Number(l));
  wake?.();
});
process.stdin.on('end', () => {
  allowed = Infinity;
  wake?.();
});
/** Until create i (0-based) is allowed; bounded by the deadline (exit 4, never looks finished). */
async function allowedTo(i: number): Promise<void> {
  while (allowed <= i) {
    if (Date.now() > deadline) {
      process.stderr.write(`writer ${writer}: deadline reached waiting for permission to write ${i + 1}\n`);
      process.exit(4);
    }
    await new Promise<void>((r) => {
      wake = r;
      setTimeout(r, 1_000);
    });
  }
}

/** A connection failure or a 5xx (the server died mid-request): the outcome is unknown. */
function transient(e: unknown): boolean {
  const status = (e as { status?: unknown }).status;
  return typeof status !== 'number' || status >= 500;
}

function refused(e: unknown): never {
  process.stderr.write(`writer ${writer}: refused: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}

for (let i = 0; i < count; i++) {
  await allowedTo(i);
  if (Date.now() > deadline) {
    process.stderr.write(`writer ${writer}: deadline reached after ${i} of ${count} writes\n`);
    process.exit(4);
  }
  if (i % 2 === 0) {
    const name = `w${writer}-s${i}`;
    const body = {
      server: {
        name,
        imageRef: cfg.images.find((x) => x.kubernetesVersion === 'v1.31.6')!.id,
        flavorRef: 's6.large.2',
        availability_zone: 'az1',
        vpcid: cfg.vpcs[0]!.id,
        nics: [{ subnet_id: subnet.id }],
        root_volume: { volumetype: 'SSD', size: 40 },
      },
    };
    for (;;) {
      try {
        const r = await client.createServers(body, name);
        out({ kind: 'server', name, id: r.serverIds[0], job: r.job_id });
        break;
      } catch (e) {
        if (!transient(e)) refused(e);
        if (Date.now() > deadline) process.exit(3);
        await sleep(50);
      }
    }
  } else {
    const name = `w${writer}-v${i}`;
    try {
      const r = await client.createVolume({ volume: { name, size: 10, volume_type: 'SSD', availability_zone: 'az1' } });
      out({ kind: 'volume', name, id: r.volume_ids[0], job: r.job_id });
    } catch (e) {
      if (!transient(e)) refused(e);
      out({ kind: 'volume', name, maybe: true });
      await sleep(50);
    }
  }
}
process.exit(0);
