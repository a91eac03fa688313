// The dashboard's helpers (plain JS, no build step; app.js uses them through window.HcsParts): elements,
// the patch rules (the same as src/harness/dashboard/diff.ts applyPatch), the drill-down in place, the fix.
'use strict';
(function () {
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function cell(text, cls) {
    return el('td', cls, text === undefined || text === null ? '' : text);
  }
  function fmtTime(ms) {
    return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }
  function dur(ms) {
    const m = Math.round(ms / 60000);
    return Math.floor(m / 60) + ':' + String(m % 60).padStart(2, '0');
  }

  // ---- patches (the same rules as diff.ts applyPatch) ----
  function applyPatch(v, patch) {
    const out = Object.assign({}, v);
    for (const k of Object.keys(patch)) {
      const p = patch[k];
      if ('set' in p) {
        if (p.set === undefined || p.set === null) delete out[k];
        else out[k] = p.set;
        continue;
      }
      const prev = out[k] || [];
      const removed = new Set(p.list.remove || []);
      const byId = new Map((p.list.upsert || []).map((x) => [x.id, x]));
      if (p.list.order) {
        const cur = new Map(prev.filter((x) => !removed.has(x.id)).map((x) => [x.id, x]));
        for (const [id, x] of byId) cur.set(id, x);
        out[k] = p.list.order.map((id) => cur.get(id)).filter(Boolean);
        continue;
      }
      const list = prev.filter((x) => !removed.has(x.id)).map((x) => byId.get(x.id) || x);
      for (const [id, i] of p.list.at || []) list.splice(i, 0, byId.get(id));
      out[k] = list;
    }
    return out;
  }

  // ---- drill-down: conditions, events, YAML in place ----
  /** Open drill-downs: the id of the row they belong to → the element under it (kept across redraws). */
  const openDrills = new Map();
  function reattach(row) {
    const d = row.dataset.id && openDrills.get(row.dataset.id);
    if (d && d.previousSibling !== row) row.after(d);
  }
  async function drill(row, q, colspan) {
    const id = row.dataset.id;
    const key = q.kind + '/' + q.namespace + '/' + q.name;
    const cur = openDrills.get(id);
    if (cur) {
      cur.remove();
      openDrills.delete(id);
      if (cur.dataset.drill === key) return;
    }
    const box = el('div', 'drillbox');
    box.textContent = 'loading ' + q.kind + ' ' + q.name + '…';
    let wrap = box;
    if (colspan) {
      wrap = el('tr', 'drill');
      const td = el('td');
      td.colSpan = colspan;
      td.appendChild(box);
      wrap.appendChild(td);
    }
    wrap.dataset.drill = key;
    wrap.classList.add('drill');
    row.after(wrap);
    openDrills.set(id, wrap);
    try {
      const r = await fetch('/_testbed/object?' + new URLSearchParams(q).toString(), { credentials: 'same-origin' });
      const d = await r.json();
      box.replaceChildren();
      if (!r.ok) {
        box.textContent = (d && d.message) || 'HTTP ' + r.status;
        return;
      }
      box.appendChild(el('h3', null, d.kind + ' ' + (d.namespace ? d.namespace + '/' : '') + d.name + ': conditions'));
      const ct = el('table', 'conds');
      ct.appendChild(el('tr')).append(el('th', null, 'type'), el('th', null, 'status'), el('th', null, 'reason'), el('th', null, 'message'));
      for (const c of d.conditions) ct.appendChild(el('tr')).append(cell(c.type), cell(c.status, c.status === 'True' ? 'p-Running' : 'p-Deleting'), cell(c.reason), cell(c.message));
      if (!d.conditions.length) ct.appendChild(el('tr')).append(cell('none'));
      box.appendChild(ct);
      box.appendChild(el('h3', null, 'events'));
      const et = el('table', 'evs');
      for (const e of d.events) et.appendChild(el('tr', e.type)).append(cell(e.t), cell(e.type), cell(e.reason), cell(e.message + (e.count > 1 ? ' (×' + e.count + ')' : '')));
      if (!d.events.length) et.appendChild(el('tr')).append(cell('no events'));
      box.appendChild(et);
      box.appendChild(el('h3', null, 'YAML'));
      box.appendChild(el('pre', 'yaml', d.yaml));
    } catch (e) {
      box.textContent = String(e);
    }
  }
  /** A name that opens the object's drill-down under `rowOf(link)` (a row with a data-id). */
  function drillLink(text, q, rowOf, colspan) {
    const a = el('span', 'link', text);
    a.tabIndex = 0;
    a.dataset.kind = q.kind;
    a.dataset.name = q.name;
    const go = () => drill(rowOf(a), Object.assign({ cluster: '' }, q), colspan);
    if (q.cluster) a.title = 'on the workload cluster ' + q.cluster;
    a.addEventListener('click', go);
    a.addEventListener('keydown', (e) => e.key === 'Enter' && go());
    return a;
  }

  /** The fix, readable without hovering: what to do, the command, and (where asked) why. */
  function fixEl(fix, advice, withWhy) {
    const d = el('div', 'advice');
    if (!fix) {
      d.textContent = advice;
      return d;
    }
    d.appendChild(el('b', null, 'Fix: ' + fix.what));
    if (fix.command) d.appendChild(el('code', 'cmd', fix.command));
    if (withWhy && fix.why) d.appendChild(el('span', 'because', 'Why: ' + fix.why));
    return d;
  }

  window.HcsParts = { el, cell, fmtTime, dur, applyPatch, drillLink, reattach, fixEl };
})();
