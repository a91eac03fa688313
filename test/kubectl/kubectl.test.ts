import { describe, expect, it } from 'vitest';
import { jsonpath, runKubectl, tokenize } from '../../src/harness/kubectl/index.js';
import { createEmbeddedEnv } from '../../src/world/embedded.js';

describe('tokenize', () => {
  it('handles the quoting and line continuations of the documents', () => {
    const cmd = `kubectl patch machinedeployment demo-md-0 -n cpaas-system \\\n     --type='json' -p='[{"op": "replace", "path": "/spec/replicas", "value": 4}]'`;
    expect(tokenize(cmd)).toEqual(['kubectl', 'patch', 'machinedeployment', 'demo-md-0', '-n', 'cpaas-system', '--type=json', '-p=[{"op": "replace", "path": "/spec/replicas", "value": 4}]']);
    expect(tokenize(`kubectl get x -o jsonpath='Installed: {.a}{"\\n"}'`)).toEqual(['kubectl', 'get', 'x', '-o', 'jsonpath=Installed: {.a}{"\\n"}']);
    expect(() => tokenize("kubectl get 'x")).toThrow(/unterminated/);
  });
});

describe('jsonpath', () => {
  it('evaluates the subset the documents use', () => {
    const o = { status: { charts: { a: { installedRevision: 'v1', phase: 'Success' } } } };
    expect(jsonpath('Installed: {.status.charts.*.installedRevision}{"\\n"}Phase: {.status.charts.*.phase}{"\\n"}', o)).toBe('Installed: v1\nPhase: Success\n');
  });
});

describe('runKubectl', () => {
  it('patches with --type json and merge, annotates with --overwrite, and reports errors like kubectl', async () => {
    const env = createEmbeddedEnv({ seed: 1 });
    await env.mgmt.create({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment', metadata: { name: 'md', namespace: 'cpaas-system' }, spec: { clusterName: 'c', replicas: 3, template: { spec: { version: 'v1.31.6' } } } });
    await env.mgmt.create({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: { name: 'c', namespace: 'cpaas-system', annotations: { 'cpaas.io/kube-ovn-version': 'v1' } }, spec: {} });
    const kenv = { mgmt: env.mgmt, workloads: env.workloads, clock: env.clock, logs: () => '', cwd: '.' };
    const r1 = await runKubectl(`kubectl patch machinedeployment md -n cpaas-system --type='json' -p='[{"op": "replace", "path": "/spec/replicas", "value": 4}]'`, kenv);
    expect(r1).toMatchObject({ code: 0, stdout: 'machinedeployment.cluster.x-k8s.io/md patched\n' });
    const r2 = await runKubectl(`kubectl patch machinedeployment md -n cpaas-system --type='merge' -p='{"spec":{"template":{"spec":{"version":"v1.32.3"}}}}'`, kenv);
    expect(r2.code).toBe(0);
    const md = await env.mgmt.get<{ apiVersion: string; kind: string; metadata: { name: string }; spec: { replicas: number; template: { spec: { version: string } } } }>({ kind: 'MachineDeployment', namespace: 'cpaas-system', name: 'md' });
    expect(md?.spec.replicas).toBe(4);
    expect(md?.spec.template.spec.version).toBe('v1.32.3');
    const noOverwrite = await runKubectl('kubectl annotate cluster c -n cpaas-system cpaas.io/kube-ovn-version=v2', kenv);
    expect(noOverwrite.code).toBe(1);
    expect(noOverwrite.stderr).toContain('--overwrite is false');
    expect((await runKubectl('kubectl annotate cluster c -n cpaas-system cpaas.io/kube-ovn-version=v2 --overwrite', kenv)).code).toBe(0);
    const got = await runKubectl(`kubectl get cluster c -n cpaas-system -o jsonpath='{.metadata.annotations.cpaas\\.io/kube-ovn-version}'`, kenv);
    expect(got).toMatchObject({ code: 0, stdout: 'v2' });
    const table = await runKubectl('kubectl get machinedeployment -n cpaas-system', kenv);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+CLUSTER\s+DESIRED\s+REPLICAS\s+READY\s+UPDATED\s+UNAVAILABLE\s+PHASE\s+AGE\s+VERSION$/);
    const nf = await runKubectl('kubectl get machine nope -n cpaas-system', kenv);
    expect(nf).toMatchObject({ code: 1 });
    expect(nf.stderr).toContain('Error from server (NotFound): machines.cluster.x-k8s.io "nope" not found');
  });

  it('annotates every object a label selector matches (annotate TYPE -l SELECTOR k=v), and only those', async () => {
    const env = createEmbeddedEnv({ seed: 2 });
    const kenv = { mgmt: env.mgmt, workloads: env.workloads, clock: env.clock, logs: () => '', cwd: '.' };
    for (const [name, md] of [['m1', 'a'], ['m2', 'a'], ['m3', 'b']] as const) {
      await env.mgmt.create({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine', metadata: { name, namespace: 'cpaas-system', labels: { 'cluster.x-k8s.io/deployment-name': md } }, spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { kind: 'HCSMachine', name } } });
    }
    const r = await runKubectl('kubectl annotate machines -n cpaas-system -l cluster.x-k8s.io/deployment-name=a cluster.x-k8s.io/delete-machine=yes --overwrite', kenv);
    expect(r).toMatchObject({ code: 0, stdout: 'machine.cluster.x-k8s.io/m1 annotated\nmachine.cluster.x-k8s.io/m2 annotated\n' });
    const ann = (n: string): string | undefined => env.mgmt.getSync({ kind: 'Machine', namespace: 'cpaas-system', name: n })?.metadata.annotations?.['cluster.x-k8s.io/delete-machine'];
    expect([ann('m1'), ann('m2'), ann('m3')]).toEqual(['yes', 'yes', undefined]);
    expect((await runKubectl('kubectl annotate machines -n cpaas-system cluster.x-k8s.io/delete-machine=yes', kenv)).code).toBe(1);
  });
});

describe('kubectl delete -l', () => {
  it('deletes every object the selector matches, one line each, and says so when none does', { timeout: 10_000 }, async () => {
    const env = createEmbeddedEnv({ seed: 1 });
    for (const [name, team] of [['a', 'x'], ['b', 'x'], ['c', 'y']] as const) {
      await env.mgmt.create({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment', metadata: { name, namespace: 'ns', labels: { team } }, spec: { clusterName: 'c', replicas: 1, template: { spec: {} } } });
    }
    const kenv = { mgmt: env.mgmt, workloads: env.workloads, clock: env.clock, logs: () => '', cwd: '.' };
    const r = await runKubectl('kubectl delete machinedeployments -n ns -l team=x', kenv);
    expect(r).toMatchObject({ code: 0, stdout: 'machinedeployment.cluster.x-k8s.io "a" deleted\nmachinedeployment.cluster.x-k8s.io "b" deleted\n' });
    expect((await env.mgmt.list('MachineDeployment', { namespace: 'ns' })).map((o) => o.metadata.name)).toEqual(['c']);
    expect(await runKubectl('kubectl delete machinedeployments -n ns -l team=z', kenv)).toMatchObject({ code: 0, stdout: '', stderr: 'No resources found in ns namespace.\n' });
    expect((await runKubectl('kubectl delete machinedeployments -n ns', kenv)).stderr).toContain('no name was specified');
  });
});
