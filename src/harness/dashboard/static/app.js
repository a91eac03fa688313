// The hcs-testbed live dashboard (served by hcs-testbed serve; plain JS, no build step, no network but this server).
// parts.js (loaded first) has the helpers: elements, the patch rules, the drill-down, the fix.
// The server sends the whole view once (`view`), then only what changed (`patch`, src/harness/dashboard/diff.ts);
// the page keeps the view, applies each patch and redraws only the parts whose data changed.
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  let view = null;
  const ui = { collapsed: new Set(), showAll: new Set(), expanded: new Set(), notReady: false, search: '' };
  /** What the last update cost on the page (tests and the bench read it). */
  window.__dashboard = { updates: 0, lastBytes: 0, lastRenderMs: 0 };

  const { el, cell, fmtTime, dur, applyPatch, drillLink, reattach, fixEl } = window.HcsParts;

  // ---- the stalls: pinned on top, counted; then the full list ----
  function groupStalls(stalls) {
    const groups = new Map();
    for (const s of stalls) {
      const k = s.reason + '|' + s.advice;
      const g = groups.get(k) || { reason: s.reason, summary: s.summary, advice: s.advice, fix: s.fix, rules: new Set(), objs: [] };
      for (const r of s.rules) g.rules.add(r);
      g.objs.push(s);
      groups.set(k, g);
    }
    return [...groups.values()].sort((a, b) => b.objs.length - a.objs.length);
  }
  function renderAttention() {
    const box = $('attention');
    const stalls = view.why || [];
    const badge = $('stall-badge');
    badge.textContent = stalls.length ? stalls.length + ' waiting' : 'nothing is waiting';
    badge.className = 'badge ' + (stalls.length ? 'bad' : 'ok');
    box.className = 'attention' + (stalls.length ? ' bad' : '');
    box.replaceChildren();
    if (!stalls.length) {
      box.appendChild(el('p', 'none', 'Nothing is waiting: every rollout is progressing or done.'));
      return;
    }
    const sum = el('p');
    sum.appendChild(el('span', 'count', stalls.length + (stalls.length === 1 ? ' object is waiting: ' : ' objects are waiting: ')));
    sum.appendChild(document.createTextNode((view.whySummary || []).map((x) => x.count + ' × ' + x.reason + (x.rules.length ? ' (' + x.rules.join(' ') + ')' : '')).join(', ')));
    box.appendChild(sum);
    const ul = el('ul');
    const groups = groupStalls(stalls);
    for (const g of groups.slice(0, 4)) {
      const li = el('li', 'stallgroup');
      li.dataset.reason = g.reason;
      const names = g.objs.map((s) => s.kind + ' ' + s.name + (s.hostname ? ' (' + s.hostname + ')' : ''));
      li.appendChild(el('span', 'what', g.reason + ': '));
      // One object: its summary names it; several: their names, then the summary of the first.
      if (names.length > 1) li.appendChild(el('span', 'objs', names.slice(0, 3).join(', ') + (names.length > 3 ? ' and ' + (names.length - 3) + ' more' : '') + ' — '));
      li.appendChild(el('span', 'summary', g.objs[0].summary));
      for (const r of g.rules) li.appendChild(el('span', 'rule', r));
      // Machines of the lane below ("Waiting for a pool entry") have their fix there, once.
      const inLane = g.objs.every((s) => s.kind === 'HCSMachine' && (view.waiting || []).some((w) => w.name === s.name));
      if (inLane) li.appendChild(el('span', 'dim', ' — ' + (g.objs.length === 1 ? 'its' : 'their') + ' fix: in "Waiting for a pool entry" below'));
      else li.appendChild(fixEl(g.fix, g.advice, false));
      ul.appendChild(li);
    }
    if (groups.length > 4) {
      const li = el('li');
      const a = el('a', null, (groups.length - 4) + ' more kinds of stall: see "Why is it waiting?"');
      a.href = '#why-section';
      li.appendChild(a);
      ul.appendChild(li);
    }
    box.appendChild(ul);
  }
  function renderWhy() {
    const ul = $('why');
    const frag = document.createDocumentFragment();
    const stalls = view.why || [];
    if (!stalls.length) frag.appendChild(el('li', 'none', 'nothing is waiting'));
    for (const s of stalls) {
      const li = el('li', 'stall ' + s.category);
      li.dataset.kind = s.kind;
      li.dataset.name = s.name;
      li.dataset.reason = s.reason;
      if (s.hostname) li.dataset.hostname = s.hostname;
      li.dataset.id = s.id;
      li.appendChild(drillLink(s.kind + ' ' + s.name + (s.hostname ? ' (' + s.hostname + ')' : ''), { kind: s.kind, namespace: s.namespace, name: s.name }, (a) => a.closest('li')));
      li.firstChild.classList.add('obj');
      li.appendChild(el('span', 'reason', s.condition + '=False ' + s.reason));
      for (const c of s.checks) li.appendChild(el('span', 'check', c));
      for (const r of s.rules) li.appendChild(el('span', 'rule', r));
      li.appendChild(el('span', 'msg', s.summary));
      li.appendChild(fixEl(s.fix, s.advice, true));
      li.title = s.message;
      frag.appendChild(li);
    }
    ul.replaceChildren(frag);
    for (const li of ul.children) reattach(li);
  }

  // ---- the owner tree and the rollouts ----
  const TREE_MACHINES = 8;
  const SHORT_KIND = { KubeadmControlPlane: 'KCP', MachineDeployment: 'MD', MachineSet: 'MS', Cluster: 'Cluster' };
  const TREE_FEW = 4;
  const BIG_NODES = 12;
  function renderTree() {
    const ro = $('rollouts');
    ro.replaceChildren(...(view.rollouts || []).map((r) => {
      const li = el('li', r.state, r.text);
      li.dataset.id = 'rollout:' + r.id;
      li.dataset.state = r.state;
      return li;
    }));
    const tbody = $('tree').querySelector('tbody');
    const frag = document.createDocumentFragment();
    const nodes = view.tree || [];
    const children = new Map();
    for (const n of nodes) children.set(n.parent, (children.get(n.parent) || []).concat([n]));
    const row = (n) => {
      const tr = el('tr', 'k-' + n.kind + (n.role ? ' ' + n.role : '') + (n.stalls.length ? ' stalled' : ''));
      tr.dataset.id = n.id;
      tr.dataset.kind = n.kind;
      tr.dataset.name = n.name;
      const name = el('td', 'name');
      name.style.paddingLeft = 6 + n.depth * 18 + 'px';
      if (n.kind !== 'Machine') {
        const k = el('span', 'kind', n.kind);
        k.dataset.short = SHORT_KIND[n.kind] || n.kind;
        name.appendChild(k);
      }
      name.appendChild(drillLink(n.name, { kind: n.kind, namespace: n.namespace, name: n.name }, (a) => a.closest('tr'), 7));
      if (n.role) name.appendChild(el('span', 'tag ' + n.role, n.role));
      tr.appendChild(name);
      tr.appendChild(cell(n.version, 'v'));
      const c = n.counts;
      for (const k of ['desired', 'current', 'updated', 'ready']) tr.appendChild(cell(c ? c[k] : '', 'n c-' + k));
      const st = el('td', 'st');
      if (n.machine) {
        const m = n.machine;
        st.appendChild(el('span', 'p-' + (m.deleting ? 'Deleting' : m.phase), m.deleting ? 'Deleting' : m.phase));
        st.appendChild(document.createTextNode(' → '));
        if (m.hostname) st.appendChild(drillLink(m.hostname, { kind: 'HCSMachine', namespace: n.namespace, name: m.name }, (a) => a.closest('tr'), 7));
        else st.appendChild(el('span', 'p-Deleting', 'no pool entry'));
        // The HCSMachine's reason only where it is a stall (the phase already says "Provisioning").
        st.appendChild(document.createTextNode(m.infraReady ? ' ✓' : m.infraReason && n.stalls.includes(m.infraReason) ? ' (' + m.infraReason + ')' : ''));
        if (m.server) st.appendChild(document.createTextNode(' → ' + m.serverStatus + (m.disks.length ? ' →' : '')));
        for (const d of m.disks) st.appendChild(el('span', 'chip d-' + d.state, 'pd' + d.slot + ' ' + d.state));
      } else {
        if (n.phase) st.appendChild(el('span', 'p-' + n.phase, n.phase));
        // The cluster's own API (its nodes, Kube-OVN): the workload section, and the context to type.
        if (n.kind === 'Cluster' && (view.workloads || []).some((w) => w.id === n.namespace + '/' + n.name)) {
          const a = el('a', 'ctx', 'kubectl --context ' + n.name);
          a.title = 'its workload cluster: the nodes and Kube-OVN below';
          a.href = '#workload-section';
          st.appendChild(document.createTextNode(' · '));
          st.appendChild(a);
        }
        if (n.stalls.length) st.appendChild(el('span', 'p-Deleting', ' waiting: ' + n.stalls.join(', ')));
      }
      tr.appendChild(st);
      frag.appendChild(tr);
    };
    const walk = (parent) => {
      const kids = children.get(parent) || [];
      const machines = kids.filter((k) => k.kind === 'Machine');
      const expanded = ui.expanded.has(parent);
      // Many machines under one owner: the stalled ones and a few not Running, then a count of the rest by phase (expandable).
      const many = machines.length > TREE_MACHINES && !expanded;
      const shown = new Set(
        many
          ? machines
              .filter((k) => k.stalls.length || k.phase !== 'Running')
              .sort((a, b) => b.stalls.length - a.stalls.length)
              .slice(0, TREE_FEW)
              .map((k) => k.id)
          : machines.map((k) => k.id),
      );
      for (const k of kids) {
        if (k.kind === 'Machine' && !shown.has(k.id)) continue;
        row(k);
        walk(k.id);
      }
      if (machines.length > TREE_MACHINES) {
        const rest = machines.filter((k) => !shown.has(k.id));
        const phases = new Map();
        for (const k of rest) phases.set(k.phase, (phases.get(k.phase) || 0) + 1);
        const tr = el('tr', 'k-more');
        tr.dataset.id = parent + '/more';
        const td = el('td');
        td.colSpan = 7;
        td.style.paddingLeft = 6 + machines[0].depth * 18 + 'px';
        const text = expanded ? 'show fewer machines' : rest.length + ' more machines (' + [...phases].map(([p, n]) => n + ' ' + p).join(', ') + '): show all ' + machines.length;
        const b = el('button', 'more', text);
        b.addEventListener('click', () => {
          if (expanded) ui.expanded.delete(parent);
          else ui.expanded.add(parent);
          renderTree();
        });
        td.appendChild(b);
        tr.appendChild(td);
        frag.appendChild(tr);
      }
    };
    walk('');
    tbody.replaceChildren(frag);
    for (const tr of [...tbody.children]) reattach(tr);
  }

  // ---- waiting for a pool entry ----
  function renderWaiting() {
    const w = view.waiting || [];
    $('waiting-section').hidden = w.length === 0;
    const ul = $('waiting');
    ul.replaceChildren(...w.map((m) => {
      const li = el('li');
      li.dataset.id = m.id;
      li.dataset.name = m.name;
      li.dataset.reason = m.reason;
      li.appendChild(drillLink(m.name, { kind: 'HCSMachine', namespace: m.namespace, name: m.name }, (a) => a.closest('li')));
      li.firstChild.classList.add('m');
      li.appendChild(el('span', 'dim', ' ' + m.phase + ' · ' + m.owner + ' · pool ' + m.pool + ' · ' + m.reason + ' '));
      li.appendChild(el('span', 's', m.summary.replace(m.name + ': ', '')));
      if (m.advice) li.appendChild(fixEl(m.fix, m.advice, true));
      return li;
    }));
    for (const li of [...ul.children]) reattach(li);
  }

  // ---- workload clusters: nodes, Kube-OVN ----
  function renderWorkloads() {
    const box = $('workloads');
    const ws = view.workloads || [];
    if (!ws.length) {
      box.replaceChildren(el('p', 'dim', 'no workload cluster yet'));
      return;
    }
    box.replaceChildren(...ws.map((w0) => {
      const w = { id: w0.id, context: w0.context, nodes: (view.nodes || []).filter((n) => n.cluster === w0.id), appReleases: (view.appReleases || []).filter((a) => a.cluster === w0.id) };
      const d = el('div', 'wl');
      d.dataset.cluster = w.id;
      d.appendChild(el('h3', null, 'cluster ' + w.id + ' · kubectl --context ' + w.context));
      const t = el('table', 'nodes');
      t.appendChild(el('tr')).append(el('th', null, 'node'), el('th', null, 'roles'), el('th', null, 'version'), el('th', null, 'status'));
      // Many nodes: the control plane and the nodes not Ready, then the rest counted by version (expandable).
      const all = ui.expanded.has('nodes:' + w.id) || w.nodes.length <= BIG_NODES;
      const shown = all ? w.nodes : w.nodes.filter((n) => n.roles.includes('control-plane') || !n.ready).slice(0, 8);
      for (const n of shown) {
        const tr = el('tr');
        tr.dataset.node = n.name;
        tr.dataset.id = n.id;
        const name = el('td');
        name.appendChild(drillLink(n.name, { kind: 'Node', namespace: '', name: n.name, cluster: w.id }, (a) => a.closest('tr'), 4));
        tr.append(name, cell(n.roles), cell(n.version), cell((n.ready ? 'Ready' : 'NotReady') + (n.unschedulable ? ',SchedulingDisabled' : ''), n.ready ? 'p-Running' : 'p-Deleting'));
        t.appendChild(tr);
      }
      if (w.nodes.length > BIG_NODES) {
        const rest = w.nodes.filter((n) => !shown.includes(n));
        const versions = new Map();
        for (const n of rest) versions.set(n.version, (versions.get(n.version) || 0) + 1);
        const tr = el('tr', 'k-more');
        const td = el('td');
        td.colSpan = 4;
        const b = el('button', 'more', all ? 'show fewer nodes' : rest.length + ' more nodes (' + rest.filter((n) => n.ready).length + ' Ready; ' + [...versions].map(([v, c]) => c + ' at ' + v).join(', ') + '): show all ' + w.nodes.length);
        b.addEventListener('click', () => {
          if (all) ui.expanded.delete('nodes:' + w.id);
          else ui.expanded.add('nodes:' + w.id);
          renderWorkloads();
        });
        td.appendChild(b);
        tr.appendChild(td);
        t.appendChild(tr);
      }
      d.appendChild(t);
      for (const a of w.appReleases) {
        const o = el('div', 'ovn');
        o.dataset.apprelease = a.name;
        o.dataset.phase = a.phase;
        o.appendChild(el('b', null, 'AppRelease ' + a.name));
        o.appendChild(document.createTextNode(' target ' + a.target + ' · installed ' + (a.installed || '—') + ' · phase '));
        o.appendChild(el('b', 'phase', a.phase || '—'));
        o.appendChild(el('span', a.done ? 'done' : 'notdone', a.done ? ' · done (Success at the target, OVN-6)' : a.phase === 'Success' ? ' · not the target yet' : ' · in progress (done only with Success at the target, OVN-6)'));
        // The phases it went through: re-syncs of the same revision (Syncing between two Success) left out, repeats merged.
        const steps = [];
        a.history.forEach((h, i) => {
          if (h.phase === 'Syncing' && i !== a.history.length - 1) return;
          const prev = steps[steps.length - 1];
          if (prev && prev.phase === h.phase && prev.installed === h.installed) return;
          steps.push(h);
        });
        const ph = el('ol', 'phases');
        steps.forEach((h, i) => {
          const li = el('li', 'ph-' + h.phase + (i === steps.length - 1 ? ' now' : ''), h.phase + ' ' + (h.installed || '—'));
          li.title = fmtTime(h.t) + ': ' + h.phase + ', installed ' + (h.installed || 'none') + ', target ' + h.target;
          ph.appendChild(li);
        });
        o.appendChild(ph);
        d.appendChild(o);
      }
      return d;
    }));
  }

  // ---- hostnames by pool: summary rows, collapsing, filters, a history bar per row ----
  const MCOLOR = { Pending: '#d0d7de', Provisioning: '#f4c542', Provisioned: '#a5d6ff', Running: '#2da44e', Deleting: '#cf222e', Failed: '#8250df' };
  const VCOLOR = { creating: '#d8b9ff', available: '#0969da', attaching: '#7ee8c8', 'in-use': '#1b7c83', detaching: '#fb8f44' };
  const BIG_POOL = 24;
  const rowCache = new Map();
  function pct(t) {
    const a = view.axis;
    return Math.max(0, Math.min(100, ((t - a.t0) / Math.max(1, a.t1 - a.t0)) * 100));
  }
  function shortOf(name) {
    for (const n of view.tree || []) if ((n.kind === 'MachineDeployment' || n.kind === 'KubeadmControlPlane') && name.startsWith(n.name + '-')) return name.slice(n.name.length + 1);
    return name;
  }
  function needsAttention(h) {
    return h.status !== 'serving' || h.phase !== 'Running' || h.stalls.length > 0 || h.disks.some((d) => d.state !== 'in-use');
  }
  function hostRow(h) {
    const r = el('div', 'hrow ' + h.status + (h.stalls.length ? ' stalled' : ''));
    r.dataset.id = h.id;
    r.dataset.hostname = h.hostname;
    r.dataset.status = h.status;
    r.dataset.machine = h.machine;
    r.dataset.phase = h.phase;
    r.dataset.diskState = h.disks.map((d) => d.state).join(',');
    r.appendChild(el('span', 'h', h.hostname));
    r.appendChild(el('span', 'ip', h.ip));
    const m = el('span', 'm');
    if (h.machine) m.appendChild(drillLink(shortOf(h.machine), { kind: 'Machine', namespace: nsOfPool(h.pool), name: h.machine }, () => r));
    else m.appendChild(el('span', 'dim', h.status === 'kept' ? 'free · data kept' : 'free'));
    m.title = h.machine;
    r.appendChild(m);
    r.appendChild(el('span', 'p-' + h.phase, h.status === 'serving' ? h.phase : ''));
    r.appendChild(el('span', 'v', h.version));
    const dk = el('span', 'dk');
    if (!h.disks.length) dk.appendChild(el('span', 'dim', 'no disk'));
    for (const d of h.disks) {
      const c = el('span', 'chip d-' + d.state, 'pd' + d.slot + ' ' + d.state);
      c.title = d.volume + (d.server ? ' on ' + d.server : '');
      dk.appendChild(c);
    }
    r.appendChild(dk);
    const bar = el('div', 'bar');
    const pos = (node, from, to) => {
      const x = pct(from);
      node.style.left = x + '%';
      node.style.width = to === null ? 'calc(var(--now) - ' + x + '%)' : Math.max(0.15, pct(to) - x) + '%';
    };
    for (const sp of h.spans) {
      sp.phases.forEach((p, i) => {
        const next = i + 1 < sp.phases.length ? sp.phases[i + 1][0] : sp.to;
        const d = el('div', 'ph');
        d.style.background = MCOLOR[p[1]] || '#eaeef2';
        pos(d, p[0], next);
        d.title = sp.machine + ': ' + p[1];
        bar.appendChild(d);
      });
      const lbl = el('div', 'lbl', shortOf(sp.machine));
      pos(lbl, sp.from, sp.to);
      lbl.style.width = 'auto';
      lbl.dataset.from = String(sp.from);
      lbl.dataset.to = sp.to === null ? '' : String(sp.to);
      bar.appendChild(lbl);
      if (sp.gone && sp.to !== null) {
        const g = el('div', 'gone');
        g.style.left = pct(sp.to) + '%';
        bar.appendChild(g);
      }
    }
    for (const ds of h.diskSpans) {
      const d = el('div', 'db');
      d.style.background = VCOLOR[ds[2]] || '#eaeef2';
      pos(d, ds[0], ds[1]);
      d.title = 'disk ' + ds[2];
      bar.appendChild(d);
    }
    for (const f of h.faults) {
      const d = el('div', 'fault');
      d.style.left = pct(f.t) + '%';
      d.title = f.message;
      bar.appendChild(d);
    }
    bar.appendChild(el('div', 'future'));
    r.appendChild(bar);
    return r;
  }
  function nsOfPool(pool) {
    const p = (view.pools || []).find((x) => x.name === pool);
    return p ? p.namespace : '';
  }
  function renderHosts(axisChanged) {
    const box = $('hosts');
    const q = ui.search.trim().toLowerCase();
    const byPool = new Map();
    for (const h of view.hosts || []) byPool.set(h.pool, (byPool.get(h.pool) || []).concat([h]));
    const frag = document.createDocumentFragment();
    let shown = 0;
    let total = 0;
    const used = new Set();
    for (const p of view.pools || []) {
      const rows = byPool.get(p.name) || [];
      total += rows.length;
      const sec = el('div', 'pool');
      sec.dataset.pool = p.name;
      const head = el('div', 'phead');
      const collapsed = ui.collapsed.has(p.id);
      head.appendChild(el('span', 'tw', collapsed ? '▸' : '▾'));
      head.appendChild(el('span', 'pn', p.name));
      head.appendChild(el('span', null, p.role + ' · ' + p.entries + ' entries: ' + p.serving + ' serving, ' + p.running + ' Running' + (p.kept ? ', ' + p.kept + ' free · data kept' : '') + (p.free ? ', ' + p.free + ' free' : '') + (p.persistent ? ' · persistent disks' : '')));
      if (p.notRunning) head.appendChild(el('span', 'warn', p.notRunning + ' not Running'));
      head.addEventListener('click', () => {
        if (ui.collapsed.has(p.id)) ui.collapsed.delete(p.id);
        else ui.collapsed.add(p.id);
        renderHosts(true);
      });
      sec.appendChild(head);
      if (!collapsed) {
        // A big pool shows the entries that need attention unless asked for all (or searched).
        const big = rows.length > BIG_POOL && !ui.showAll.has(p.id);
        const match = (h) => !q || (h.hostname + ' ' + h.machine + ' ' + h.ip).toLowerCase().includes(q);
        const attentionOnly = ui.notReady || (big && !q);
        const list = rows.filter((h) => match(h) && (!attentionOnly || needsAttention(h)));
        const filtered = list;
        const hh = el('div', 'hhead');
        for (const t of ['hostname', 'IP', 'machine', 'phase', 'version', 'disk', 'history (machines, disk under them)']) hh.appendChild(el('span', null, t));
        sec.appendChild(hh);
        for (const h of list) {
          const text = JSON.stringify(h);
          let c = rowCache.get(h.id);
          if (!c || c.text !== text || axisChanged) {
            c = { text, node: hostRow(h) };
            rowCache.set(h.id, c);
          }
          used.add(h.id);
          sec.appendChild(c.node);
          reattach(c.node);
          shown++;
        }
        if (rows.length > BIG_POOL) {
          const b = el('button', 'more showall', ui.showAll.has(p.id) ? 'show only the entries that need attention' : 'showing the ' + filtered.length + ' entries that need attention: show all ' + rows.length);
          b.addEventListener('click', () => {
            if (ui.showAll.has(p.id)) ui.showAll.delete(p.id);
            else ui.showAll.add(p.id);
            renderHosts(false);
          });
          sec.appendChild(b);
        }
        // The time axis under the pool's rows.
        sec.appendChild(axisRow());
      }
      frag.appendChild(sec);
    }
    for (const id of [...rowCache.keys()]) if (!used.has(id)) rowCache.delete(id);
    box.replaceChildren(frag);
    $('f-count').textContent = shown + ' of ' + total + ' entries shown';
    fitLabels();
  }
  function axisRow() {
    const r = el('div', 'hrow axisrow');
    for (let i = 0; i < 6; i++) r.appendChild(el('span'));
    const ax = el('div', 'axis');
    const a = view.axis;
    const span = a.t1 - a.t0;
    const steps = [5, 10, 15, 30, 60, 120, 240, 480, 720, 1440].map((m) => m * 60000);
    const step = steps.find((s) => span / s <= 6) || steps[steps.length - 1];
    for (let t = 0; t <= span; t += step) {
      const s = el('span', null, '+' + dur(t));
      const x = (t / span) * 100;
      s.style.left = x + '%';
      if (x > 90) {
        s.style.left = 'auto';
        s.style.right = '0';
      }
      ax.appendChild(s);
    }
    r.appendChild(ax);
    return r;
  }
  /** A machine's name on its span only where the span is wide enough: never cut. */
  function fitLabels() {
    for (const l of document.querySelectorAll('#hosts .bar .lbl')) {
      const bar = l.parentElement;
      const w = bar.clientWidth;
      const from = Number(l.dataset.from);
      const to = l.dataset.to === '' ? view.time.now : Number(l.dataset.to);
      const spanPx = ((Math.min(to, view.axis.t1) - Math.max(from, view.axis.t0)) / Math.max(1, view.axis.t1 - view.axis.t0)) * w;
      l.style.visibility = l.scrollWidth + 2 <= spanPx ? 'visible' : 'hidden';
    }
    // Time labels: the end always; the others left to right, none touching the one before or the end.
    for (const ax of document.querySelectorAll('#hosts .axis')) {
      const spans = [...ax.children];
      for (const sp of spans) sp.style.visibility = 'visible';
      const end = spans[spans.length - 1];
      const endLeft = end ? end.getBoundingClientRect().left : Infinity;
      let right = -Infinity;
      for (const sp of spans.slice(0, -1)) {
        const r = sp.getBoundingClientRect();
        if (r.left < right + 8 || r.right + 8 > endLeft) sp.style.visibility = 'hidden';
        else right = r.right;
      }
    }
  }

  // ---- tables ----
  function fill(tableId, rows, toCells, keyOf) {
    const tbody = $(tableId).querySelector('tbody');
    const frag = document.createDocumentFragment();
    for (const r of rows) {
      const tr = el('tr');
      if (keyOf) tr.dataset.name = keyOf(r);
      for (const c of toCells(r)) tr.appendChild(c);
      frag.appendChild(tr);
    }
    tbody.replaceChildren(frag);
  }
  function renderTables(changed) {
    if (changed.has('tree')) fill('mds', (view.tree || []).filter((n) => n.kind === 'MachineDeployment'), (m) => [cell(m.name), cell(m.counts.desired), cell(m.counts.updated), cell(m.counts.ready + '/' + m.counts.desired), cell(m.version)], (m) => m.name);
    if (changed.has('machines')) fill('machines', view.machines, (m) => [cell(m.name), cell(m.owner), cell(m.phase, 'p-' + m.phase), cell(m.node), cell(m.version)], (m) => m.name);
    if (changed.has('servers')) fill('servers', view.servers, (s) => [cell(s.name), cell(s.status), cell(s.id.slice(0, 8))], (s) => s.name);
    if (changed.has('volumes')) fill('volumes', view.volumes, (x) => [cell(x.name), cell(x.status, 'chip d-' + x.status), cell(x.attachedToName), cell(x.persistent ? 'yes' : '')], (x) => x.name);
  }
  function renderFaults() {
    const faults = $('faults');
    faults.replaceChildren();
    for (const f of view.faults || []) {
      const span = el('span', 'fault fault-rule', f.id + ': ' + f.service + ' ' + f.operation + ' ' + f.effect + ' (fired ' + f.fired + ') ');
      span.dataset.id = f.id;
      const b = el('button', 'release', 'Release');
      b.addEventListener('click', () => post('/_testbed/faults/' + encodeURIComponent(f.id) + '/release'));
      span.appendChild(b);
      faults.appendChild(span);
    }
  }
  function renderClock() {
    const t = view.time;
    $('vtime').textContent = fmtTime(t.now);
    $('vtime').dataset.now = String(t.now);
    const running = !t.paused && t.speed > 0;
    const st = $('vstate');
    st.textContent = running ? 'running ×' + t.speed : 'paused';
    st.className = 'state ' + (running ? 'running' : 'paused');
    if (document.activeElement !== $('speed')) $('speed').value = String(t.speed);
    $('hosts').style.setProperty('--now', pct(t.now) + '%');
  }

  // At most one timeline fetch per 500 ms; a change inside that window is drawn when it ends (a trailing
  // refresh: without it the last change of a burst was never drawn while the clock stood paused), and an
  // answer older than the newest one drawn is dropped.
  let timelineAt = 0;
  let timelineTimer = 0;
  let timelineSeq = 0;
  let timelineDrawn = 0;
  function refreshTimeline() {
    if (!$('detail').open) return;
    const now = Date.now();
    if (now - timelineAt < 500) {
      if (!timelineTimer) timelineTimer = window.setTimeout(() => { timelineTimer = 0; refreshTimeline(); }, 500 - (now - timelineAt));
      return;
    }
    timelineAt = now;
    const seq = ++timelineSeq;
    const w = Math.max(600, $('timeline').clientWidth - 4);
    fetch('/_testbed/timeline?width=' + w, { credentials: 'same-origin' }).then((r) => r.text()).then((svg) => {
      if (seq < timelineDrawn) return;
      timelineDrawn = seq;
      // The timeline SVG is drawn by the server (src/harness/report/timeline-svg.ts) from our own data only.
      $('timeline').innerHTML = svg;
    });
  }
  $('detail').addEventListener('toggle', refreshTimeline);

  function render(changed, bytes) {
    const t0 = performance.now();
    const all = changed === null;
    const has = (k) => all || changed.has(k);
    const axisChanged = has('axis');
    if (has('time') || axisChanged) renderClock();
    if (has('why') || has('whySummary')) {
      renderAttention();
      renderWhy();
    }
    if (has('tree') || has('rollouts')) renderTree();
    if (has('waiting')) renderWaiting();
    if (has('workloads') || has('nodes') || has('appReleases')) renderWorkloads();
    if (has('hosts') || has('pools') || axisChanged || has('tree')) renderHosts(axisChanged);
    else if (has('time')) fitLabels();
    renderTables(all ? new Set(['tree', 'machines', 'servers', 'volumes']) : changed);
    if (has('faults')) renderFaults();
    if (!all && changed.size && !(changed.size === 1 && changed.has('time'))) refreshTimeline();
    const d = window.__dashboard;
    d.updates++;
    d.lastBytes = bytes;
    d.lastRenderMs = performance.now() - t0;
  }

  async function post(path, body) {
    $('message').textContent = '';
    try {
      const r = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body || {}), credentials: 'same-origin' });
      const j = await r.json().catch(() => ({}));
      if (!r.ok) $('message').textContent = (j && j.message) || 'HTTP ' + r.status;
      return j;
    } catch (e) {
      $('message').textContent = String(e);
      return undefined;
    }
  }

  $('pause').addEventListener('click', () => post('/_testbed/time/pause'));
  $('resume').addEventListener('click', () => post('/_testbed/time/resume'));
  $('set-speed').addEventListener('click', () => post('/_testbed/time/speed', { speed: Number($('speed').value) }));
  $('advance').addEventListener('click', () => post('/_testbed/time/advance', { duration: $('advance-duration').value }));
  $('next').addEventListener('click', () => post('/_testbed/time/next'));
  $('inject').addEventListener('click', () => post('/_testbed/faults', { preset: $('fault-preset').value }));
  $('release-all').addEventListener('click', () => post('/_testbed/faults/release'));
  $('f-notready').addEventListener('change', (e) => {
    ui.notReady = e.target.checked;
    if (view) renderHosts(false);
  });
  $('f-search').addEventListener('input', (e) => {
    ui.search = e.target.value;
    if (view) renderHosts(false);
  });
  window.addEventListener('resize', () => view && fitLabels());

  fetch('/_testbed/faults/presets', { credentials: 'same-origin' }).then((r) => r.json()).then((presets) => {
    const sel = $('fault-preset');
    for (const [name, p] of Object.entries(presets)) {
      const o = document.createElement('option');
      o.value = name;
      o.textContent = name + ' — ' + p.title;
      sel.appendChild(o);
    }
  });

  const es = new EventSource('/_testbed/stream', { withCredentials: true });
  es.addEventListener('view', (e) => {
    view = JSON.parse(e.data);
    render(null, e.data.length);
  });
  es.addEventListener('patch', (e) => {
    if (!view) return;
    const patch = JSON.parse(e.data);
    view = applyPatch(view, patch);
    render(new Set(Object.keys(patch)), e.data.length);
  });
  es.addEventListener('kevent', (e) => {
    const ev = JSON.parse(e.data);
    const li = el('li', ev.type, ev.t + ' ' + ev.type + ' ' + ev.reason + ' ' + ev.object + ': ' + ev.message);
    const ul = $('events');
    ul.insertBefore(li, ul.firstChild);
    while (ul.childNodes.length > 300) ul.removeChild(ul.lastChild);
  });
  es.addEventListener('log', (e) => {
    const l = JSON.parse(e.data);
    const pre = $('logs');
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.appendChild(document.createTextNode(l.t + ' ' + l.deployment + ' ' + l.level + ' ' + l.controller + ': ' + l.msg + '\n'));
    while (pre.childNodes.length > 500) pre.removeChild(pre.firstChild);
    if (atEnd) pre.scrollTop = pre.scrollHeight;
  });
  es.addEventListener('open', () => {
    if (!view) $('vstate').textContent = 'connected';
  });
  es.addEventListener('error', () => {
    $('vstate').textContent = 'disconnected (retrying)';
    $('vstate').className = 'state';
  });
})();
