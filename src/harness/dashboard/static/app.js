// The hcs-testbed live dashboard (served by hcs-testbed serve; plain JS, no build step, no network but this server).
// Everything on the page comes from the server-sent event stream /_testbed/stream; the buttons call the time and fault API.
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  let last = null;

  function cell(text, cls) {
    const td = document.createElement('td');
    td.textContent = text === undefined || text === null ? '' : String(text);
    if (cls) td.className = cls;
    return td;
  }

  function fill(tableId, rows, toCells, keyOf) {
    const tbody = $(tableId).querySelector('tbody');
    const frag = document.createDocumentFragment();
    for (const r of rows) {
      const tr = document.createElement('tr');
      if (keyOf) tr.dataset.name = keyOf(r);
      for (const c of toCells(r)) tr.appendChild(c);
      frag.appendChild(tr);
    }
    tbody.replaceChildren(frag);
  }

  function fmtTime(ms) {
    return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }

  function render(v) {
    last = v;
    const t = v.time;
    $('vtime').textContent = fmtTime(t.now);
    $('vtime').dataset.now = String(t.now);
    const running = !t.paused && t.speed > 0;
    const st = $('vstate');
    st.textContent = running ? 'running ×' + t.speed : 'paused';
    st.className = 'state ' + (running ? 'running' : 'paused');
    if (document.activeElement !== $('speed')) $('speed').value = String(t.speed);
    fill('clusters', v.clusters, (c) => [cell(c.namespace + '/' + c.name), cell(c.phase, 'phase-' + c.phase), cell(c.infrastructureReady ? 'ready' : 'not ready'), cell(c.controlPlaneReady ? 'ready' : 'not ready')], (c) => c.name);
    fill('kcps', v.controlPlanes, (k) => [cell(k.name), cell(k.cluster), cell(k.ready + '/' + k.replicas), cell(k.updated), cell(k.version), cell(String(k.initialized))], (k) => k.name);
    fill('mds', v.machineDeployments, (m) => [cell(m.name), cell(m.cluster), cell(m.ready + '/' + m.replicas), cell(m.updated), cell(m.phase, 'phase-' + m.phase), cell(m.version)], (m) => m.name);
    fill('mss', v.machineSets, (m) => [cell(m.name), cell(m.deployment), cell(m.ready + '/' + m.replicas), cell(m.available)], (m) => m.name);
    fill('machines', v.machines, (m) => [cell(m.name), cell(m.owner), cell(m.phase, 'phase-' + m.phase), cell(m.node), cell(m.version)], (m) => m.name);
    const entries = [];
    for (const p of v.pools) for (const e of p.entries) entries.push({ pool: p.name, ...e });
    fill('pools', entries, (e) => [cell(e.pool), cell(e.hostname), cell(e.ip), cell(e.machine), cell(e.disks.map((d) => 'slot ' + d.slot + ' ' + d.mountPath + ': ' + d.phase).join('; '))], (e) => e.hostname);
    fill('servers', v.servers, (s) => [cell(s.name), cell(s.status, 'st-' + s.status), cell(s.id.slice(0, 8))], (s) => s.name);
    fill('volumes', v.volumes, (x) => [cell(x.name), cell(x.status, 'st-' + x.status), cell(x.attachedToName), cell(x.persistent ? 'yes' : '')], (x) => x.name);
    const faults = $('faults');
    faults.replaceChildren();
    for (const f of v.faults) {
      const span = document.createElement('span');
      span.className = 'fault';
      span.dataset.id = f.id;
      span.textContent = f.id + ': ' + f.service + ' ' + f.operation + ' ' + f.effect + ' (fired ' + f.fired + ') ';
      const b = document.createElement('button');
      b.textContent = 'Release';
      b.className = 'release';
      b.addEventListener('click', () => post('/_testbed/faults/' + encodeURIComponent(f.id) + '/release'));
      span.appendChild(b);
      faults.appendChild(span);
    }
    // The hostname view (SVG drawn by the server from our own data only) and the "why" panel.
    $('hostnames').innerHTML = v.hostnames;
    renderWhy(v.why);
    // The timeline SVG is drawn by the server (src/harness/report/html.ts timelineSvg, the report's lanes) from our own data only.
    $('timeline').innerHTML = v.timeline;
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function renderWhy(stalls) {
    const ul = $('why');
    const frag = document.createDocumentFragment();
    if (!stalls.length) frag.appendChild(el('li', 'none', 'nothing is waiting'));
    for (const s of stalls) {
      const li = el('li', 'stall ' + s.category);
      li.dataset.kind = s.kind;
      li.dataset.name = s.name;
      li.dataset.reason = s.reason;
      if (s.hostname) li.dataset.hostname = s.hostname;
      li.appendChild(el('span', 'obj', s.kind + ' ' + s.name + (s.hostname ? ' (' + s.hostname + ')' : '')));
      li.appendChild(el('span', 'reason', s.condition + '=False ' + s.reason));
      for (const c of s.checks) li.appendChild(el('span', 'check', c));
      for (const r of s.rules) li.appendChild(el('span', 'rule', r));
      li.appendChild(el('span', 'msg', s.summary));
      li.title = s.message;
      frag.appendChild(li);
    }
    ul.replaceChildren(frag);
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
  es.addEventListener('view', (e) => render(JSON.parse(e.data)));
  es.addEventListener('kevent', (e) => {
    const ev = JSON.parse(e.data);
    const li = document.createElement('li');
    li.className = ev.type;
    li.textContent = ev.t + ' ' + ev.type + ' ' + ev.reason + ' ' + ev.object + ': ' + ev.message;
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
    if (!last) $('vstate').textContent = 'connected';
  });
  es.addEventListener('error', () => {
    $('vstate').textContent = 'disconnected (retrying)';
    $('vstate').className = 'state';
  });
})();
