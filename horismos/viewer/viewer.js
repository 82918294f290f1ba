/* Horismos viewer. The data is gzipped JSON in base64 (see horismos/_viewer.py), inflated
   with DecompressionStream: no request leaves the page. Everything from the trace is written
   as text (textContent), never parsed as HTML. The instance table draws only the rows in view. */
"use strict";

const H = {};  // the page's state, for tests and the console

function el(tag, attrs, ...children) {
  const node = tag.startsWith("svg:")
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.setAttribute("class", v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

async function loadData() {
  const text = document.getElementById("horismos-data").textContent.trim();
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

/* -- names ------------------------------------------------------------------------------ */

let PREFIXES = [];
function curie(iri) {
  if (iri === null || iri === undefined) return "";
  const s = String(iri);
  for (const [p, ns] of PREFIXES) if (s.startsWith(ns) && s.length > ns.length) return p + ":" + s.slice(ns.length);
  return s;
}
function term(n3) {  // an N3 term as written in the trace: <iri>, "lex"^^<dt>, "text"@lang
  if (typeof n3 !== "string") return JSON.stringify(n3);
  if (n3.startsWith("<") && n3.endsWith(">")) return curie(n3.slice(1, -1));
  const m = n3.match(/^("(?:[^"\\]|\\.)*")\^\^<([^>]*)>$/s);
  if (m) return m[1] + "^^" + curie(m[2]);
  return n3;
}
function shortId(iri) { const s = String(iri || ""); return s.slice(s.lastIndexOf(":") + 1, s.lastIndexOf(":") + 9); }
function ms(v) {
  if (v === null || v === undefined) return "";
  if (v < 1) return v.toFixed(2) + " ms";
  if (v < 1000) return v.toFixed(1) + " ms";
  if (v < 60000) return (v / 1000).toFixed(2) + " s";
  return (v / 60000).toFixed(1) + " min";
}
function pretty(v) {  // JSON with IRIs compacted where they are whole strings
  return JSON.stringify(v, (k, x) => {
    if (typeof x !== "string") return x;
    if (/^<[^<>\s]+>$/.test(x) || /^"(?:[^"\\]|\\.)*"\^\^<[^>]*>$/s.test(x)) return term(x);
    if (/^https?:\/\/\S+$/.test(x)) return curie(x);
    return x;
  }, 2);
}

/* -- the page --------------------------------------------------------------------------- */

async function main() {
  let D;
  try {
    D = await loadData();
  } catch (e) {
    document.body.prepend(el("p", {class: "error"}, "This page's data could not be read: " + e));
    throw e;
  }
  H.data = D;
  PREFIXES = (D.prefixes || []).slice().sort((a, b) => b[1].length - a[1].length);
  setupTabs(D);
  if (D.mode === "diagram") { diagramOnly(D); H.ready = true; return; }
  summary(D);
  prepare(D);
  filters(D);
  table(D);
  if (D.mode === "replay") replayBanner(D);
  if (H.selected < 0 && D.instances.id.length) {  // open the first that did not complete
    const S = D.strings, I = D.instances;
    let first = I.status.findIndex((s) => S[s] !== "completed");
    selectInstance(first >= 0 ? first : 0);
  }
  H.readyAt = performance.now();  // ms since navigation started
  H.ready = true;
  document.body.dataset.ready = "1";
}

function setupTabs(D) {
  const hasDiagram = !!document.querySelector("#diagram svg");
  const tabs = {instances: document.getElementById("tab-instances"),
                diagram: document.getElementById("tab-diagram")};
  if (!hasDiagram) tabs.diagram.hidden = true;
  if (D.mode === "diagram") tabs.instances.hidden = true;
  for (const b of Object.values(tabs)) b.addEventListener("click", () => showTab(b.dataset.tab));
  showTab(D.mode === "diagram" ? "diagram" : "instances");
}

function showTab(name) {
  for (const v of ["instances", "diagram"]) {
    document.getElementById("view-" + v).hidden = v !== name;
    document.getElementById("tab-" + v).classList.toggle("on", v === name);
  }
  if (name === "instances") renderRows();
}

function summary(D) {
  const r = D.run, S = D.strings, I = D.instances;
  const counts = {};
  for (const s of I.status) counts[S[s]] = (counts[S[s]] || 0) + 1;
  H.counts = counts;
  const parts = [
    ["workflow", curie(r.workflow)],
    ["instances", I.id.length.toLocaleString() + " (" + Object.entries(counts).map(([k, n]) => n + " " + k).join(", ") + ")"],
    ["steps", D.steps.inst.length.toLocaleString()],
    ["run", r.complete ? r.status : "stopped: the trace has no end event"],
    ["started", r.started || "?"],
    ["took", ms(r.duration)],
    ["events", r.events.toLocaleString() + " (hash chain checked" + (r.signed ? (r.verified ? ", signatures verified" : ", signed, signatures not checked: no key was set") : "") + ")"],
    ["world", r.world_digest || "—"],
  ];
  const box = document.getElementById("summary");
  for (const [k, v] of parts) box.append(el("span", {}, k + " ", el("b", {}, v)));
}

function prepare(D) {
  const St = D.steps, n = St.inst.length;
  const byInst = new Map();
  for (let i = 0; i < n; i++) {
    const a = St.inst[i];
    let list = byInst.get(a);
    if (!list) byInst.set(a, list = []);
    list.push(i);
  }
  H.byInst = byInst;
  H.stepOfSeq = new Map();
  for (let i = 0; i < n; i++) H.stepOfSeq.set(St.seq[i], i);
  H.statusFilter = null;
  H.text = "";
  H.visible = null;
  H.selected = -1;
  H.selectedStep = -1;
}

/* -- filters and the virtualised table -------------------------------------------------- */

function filters(D) {
  const box = document.getElementById("filters");
  const order = ["completed", "failed", "blocked", "waiting", "running"];
  const mk = (label, status, n) => el("button", {type: "button", "data-status": status || "all",
      onclick: () => { H.statusFilter = status; applyFilter(D); }}, label + " " + n.toLocaleString());
  box.append(mk("all", null, D.instances.id.length));
  for (const s of order) if (H.counts[s]) box.append(mk(s, s, H.counts[s]));
  box.append(el("input", {type: "search", id: "search", placeholder: "focus or instance id…",
      oninput: (e) => { H.text = e.target.value.trim().toLowerCase(); applyFilter(D); }}));
  box.append(el("span", {class: "shown", id: "shown"}));
  applyFilter(D);
}

function applyFilter(D) {
  const I = D.instances, S = D.strings, n = I.id.length;
  const want = H.statusFilter, text = H.text;
  const out = [];
  for (let i = 0; i < n; i++) {
    if (want && S[I.status[i]] !== want) continue;
    if (text) {
      const f = I.focus[i] >= 0 ? S[I.focus[i]] : "";
      if (!curie(f).toLowerCase().includes(text) && !I.id[i].toLowerCase().includes(text)) continue;
    }
    out.push(i);
  }
  H.visible = Int32Array.from(out);
  for (const b of document.querySelectorAll("#filters button"))
    b.classList.toggle("on", b.dataset.status === (want || "all"));
  document.getElementById("shown").textContent = out.length.toLocaleString() + " shown";
  const rows = document.getElementById("rows");
  document.getElementById("spacer").style.height = (out.length * rowHeight()) + "px";
  rows.style.height = Math.min(300, Math.max(3, D.instances.id.length) * rowHeight() + 2) + "px";
  rows.scrollTop = 0;
  renderRows(true);
}

function rowHeight() {
  if (!H.rowH) H.rowH = parseInt(getComputedStyle(document.documentElement).getPropertyValue("--row")) || 26;
  return H.rowH;
}

let drawn = [-1, -1];
const pool = [];  // row elements, reused as the table scrolls: only their text changes

function poolRow(k) {
  while (pool.length <= k) {
    const cells = ["c-n", "c-id mono", "c-focus", "c-status", "c-at", "c-steps", "c-dur"]
      .map((c) => el("span", {class: c}));
    const badge = el("span", {class: "badge"});
    cells[3].append(badge);
    const row = el("div", {class: "row"}, cells);
    row.cells = cells;
    row.badge = badge;
    pool.push(row);
  }
  return pool[k];
}

function renderRows(force) {
  const D = H.data;
  if (!D || !H.visible) return;
  const rows = document.getElementById("rows"), spacer = document.getElementById("spacer");
  const h = rowHeight(), total = H.visible.length;
  const first = Math.max(0, Math.floor(rows.scrollTop / h) - 8);
  const last = Math.min(total, Math.ceil((rows.scrollTop + (rows.clientHeight || 300)) / h) + 8);
  if (!force && first === drawn[0] && last === drawn[1]) return;
  drawn = [first, last];
  const I = D.instances, S = D.strings, St = D.steps;
  const shown = [];
  for (let v = first; v < last; v++) {
    const i = H.visible[v];
    const status = S[I.status[i]];
    const steps = H.byInst.get(i) || [];
    const lastStep = steps.length ? steps[steps.length - 1] : -1;
    const row = poolRow(v - first), c = row.cells;
    row.className = "row" + (i === H.selected ? " sel" : "") + (H.divergentInst === i ? " divergent" : "");
    row.style.top = (v * h) + "px";
    row.dataset.index = i;
    row.dataset.instance = I.id[i];
    c[0].textContent = String(v + 1);
    c[1].textContent = shortId(I.id[i]);
    c[2].textContent = I.focus[i] >= 0 ? curie(S[I.focus[i]]) : "(resumed)";
    row.badge.className = "badge " + status;
    row.badge.textContent = status;
    c[4].textContent = lastStep >= 0 && status !== "completed" ? curie(S[St.step[lastStep]]) : "";
    c[5].textContent = String(I.count[i]);
    c[6].textContent = I.t0[i] !== null ? ms(I.t1[i] - I.t0[i]) : "";
    shown.push(row);
  }
  spacer.replaceChildren(...shown);
}

let pending = false;
function onScroll() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => { pending = false; renderRows(false); });
}

function table() {
  const rows = document.getElementById("rows");
  rows.addEventListener("scroll", onScroll, {passive: true});
  rows.addEventListener("click", (e) => {
    const row = e.target.closest(".row");
    if (row) selectInstance(+row.dataset.index);
  });
}

/* -- an instance: timeline and steps ---------------------------------------------------- */

function selectInstance(i, step) {
  const D = H.data, I = D.instances, S = D.strings, St = D.steps;
  H.selected = i;
  renderRows(true);
  const steps = H.byInst.get(i) || [];
  const box = document.getElementById("instance");
  const status = S[I.status[i]];
  box.replaceChildren(
    el("h2", {}, "Instance ", el("span", {class: "mono"}, shortId(I.id[i])), " for ",
       I.focus[i] >= 0 ? curie(S[I.focus[i]]) : "(resumed here)", " ",
       el("span", {class: "badge " + status}, status)),
    el("div", {class: "summary"},
       el("span", {}, "id ", el("b", {class: "mono"}, I.id[i])),
       el("span", {}, "workflow ", el("b", {}, I.workflow[i] >= 0 ? curie(S[I.workflow[i]]) : "—")),
       el("span", {}, "event ", el("b", {}, "#" + I.seq[i])),
       I.continued[i] ? el("span", {}, el("b", {}, "continued from an earlier process")) : null),
    timeline(i, steps),
    el("ol", {class: "steplist", id: "steplist"}, steps.map((s) => {
      const st = S[St.status[s]];
      return el("li", {"data-step": s, "data-seq": St.seq[s],
          class: H.divergentStep === s ? "divergent" : null, onclick: () => selectStep(s)},
        el("span", {class: "mono"}, "#" + St.seq[s]),
        el("span", {}, curie(S[St.step[s]])),
        el("span", {}, el("span", {class: "badge " + st}, st)),
        el("span", {class: "c-dur"}, ms(St.t1[s] - St.t0[s])));
    })));
  const others = (D.others || []).filter((o) => o.inst === i);  // resumes, continuations
  if (others.length) {
    box.append(el("h3", {}, "Other events"));
    for (const o of others) {
      const {inst, type, seq, ...rest} = o;
      box.append(el("details", {class: "other"}, el("summary", {}, type + " (event #" + seq + ", +" + ms(o.t) + ")"),
                    el("pre", {}, pretty(rest))));
    }
  }
  const pick = step !== undefined ? step : (steps.length ? steps[steps.length - 1] : -1);
  if (pick >= 0) selectStep(pick);
}

const COLOURS = {completed: "#1e8449", failed: "#c0392b", rejected: "#c0392b",
                 timed_out: "#c0392b", blocked: "#d68910", waiting: "#2e86c1"};

function timeline(i, steps) {
  const D = H.data, S = D.strings, St = D.steps, I = D.instances;
  const lanes = steps.slice(0, 200);
  const status = S[I.status[i]];
  const t0 = lanes.length ? St.t0[lanes[0]] : 0;
  let t1 = lanes.length ? St.t1[lanes[lanes.length - 1]] : 1;
  const waits = status === "waiting";
  if (waits) t1 = Math.max(t1, D.run.duration || t1);  // still waiting when the trace ends
  const span = Math.max(t1 - t0, 0.001);
  const W = 640, L = 150, R = 10, top = 18, lane = 18;
  const Hh = top + lanes.length * lane + 6;
  const x = (t) => L + (t - t0) / span * (W - L - R);
  const svg = el("svg:svg", {class: "timeline", id: "timeline", viewBox: "0 0 " + W + " " + Hh,
                             width: "100%", preserveAspectRatio: "xMinYMin meet"});
  svg.append(el("svg:defs", {}, el("svg:pattern", {id: "hatch", width: 6, height: 6,
      patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)"},
    el("svg:rect", {width: 6, height: 6, fill: "#d6eaf8"}),
    el("svg:line", {x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#2e86c1", "stroke-width": 2}))));
  for (let k = 0; k <= 4; k++) {
    const t = t0 + span * k / 4, xx = x(t);
    svg.append(el("svg:line", {class: "tick", x1: xx, x2: xx, y1: top - 4, y2: Hh}));
    svg.append(el("svg:text", {x: xx, y: 11, "text-anchor": k === 0 ? "start" : k === 4 ? "end" : "middle"},
                  "+" + ms(t - t0)));
  }
  lanes.forEach((s, k) => {
    const y = top + k * lane;
    const st = S[St.status[s]];
    const isWait = S[St.kind[s]] === "WaitStep" && st === "waiting";
    const end = isWait ? t1 : St.t1[s];
    const w = Math.max(x(end) - x(St.t0[s]), 3);
    svg.append(el("svg:text", {class: "lane-label", x: 4, y: y + 12}, curie(S[St.step[s]]).slice(0, 24)));
    svg.append(el("svg:rect", {class: "bar" + (isWait ? " wait" : ""), "data-step": s,
        x: x(St.t0[s]), y: y + 2, width: w, height: lane - 5, rx: 2,
        fill: isWait ? "url(#hatch)" : (COLOURS[st] || "#7f8c8d"),
        onclick: () => selectStep(s)},
      el("svg:title", {}, curie(S[St.step[s]]) + ": " + st + (isWait ? " (still waiting when the trace ends)" : "") +
         ", " + ms(St.t1[s] - St.t0[s]))));
  });
  const wrap = el("div", {}, el("h3", {}, "Timeline" + (waits ? " (hatched: waiting)" : "")), svg);
  if (steps.length > lanes.length) wrap.append(el("p", {class: "hint"}, "first 200 of " + steps.length + " steps drawn"));
  return wrap;
}

/* -- the step panel --------------------------------------------------------------------- */

function selectStep(s) {
  const D = H.data, S = D.strings, St = D.steps;
  H.selectedStep = s;
  for (const li of document.querySelectorAll("#steplist li")) li.classList.toggle("sel", +li.dataset.step === s);
  for (const r of document.querySelectorAll("#timeline rect.bar")) r.classList.toggle("sel", +r.dataset.step === s);
  const d = D.details[s] || {};
  const iri = S[St.step[s]], status = S[St.status[s]], kind = S[St.kind[s]];
  const tool = St.tool[s] >= 0 ? S[St.tool[s]] : null;
  const panel = document.getElementById("panel");
  const parts = [
    el("h2", {id: "step-title"}, curie(iri), " ", el("span", {class: "badge kind"}, kind), " ",
       el("span", {class: "badge " + status}, status)),
  ];
  const node = (D.nodes || {})[iri];
  if (node) parts.push(el("a", {href: "#" + node, class: "to-diagram", id: "to-diagram",
      onclick: (e) => { e.preventDefault(); showNode(node); }}, "show in the diagram"));
  if (H.divergentStep === s) parts.push(el("p", {class: "bad"}, "Replay diverged at this event: see the comparison above."));
  parts.push(kv([
    ["tool", tool ? curie(tool) : null],
    ["attempts", d.attempts],
    ["next", St.next[s] >= 0 ? curie(S[St.next[s]]) : "— (the instance ends here)"],
    ["started", "+" + ms(St.t0[s]) + " into the run"],
    ["took", ms(St.t1[s] - St.t0[s])],
  ]));
  if (d.args && d.args.length) {
    parts.push(el("h3", {}, "Arguments"));
    d.args.forEach((call, k) => parts.push(kv(Object.entries(call).map(([n, v]) => [n, term(v)]),
                                             d.args.length > 1 ? "call " + (k + 1) : null)));
  }
  if (d.precondition) {
    parts.push(el("h3", {}, "Precondition"));
    parts.push(d.precondition.failing
      ? el("div", {}, el("span", {class: "bad"}, "does not hold: "), el("pre", {}, d.precondition.failing))
      : el("div", {class: "ok"}, "holds"));
  }
  if (d.outcomes) {
    parts.push(el("h3", {}, "Tool outcome"));
    parts.push(el("pre", {}, pretty(d.outcomes)));
  }
  if (tool && status !== "blocked" && d.attempts) {
    const g = d.gate || {conforms: true, messages: []};
    parts.push(el("h3", {}, "Gate verdict"));
    parts.push(el("div", {class: g.conforms ? "ok" : "bad", id: "gate"},
                  g.conforms ? "conforms: the result fits the declared effect and shapes"
                             : "rejected: nothing of the result landed"));
    if (g.messages && g.messages.length) {
      parts.push(el("table", {class: "shacl"}, el("tr", {}, el("th", {}, "focus"), el("th", {}, "path"),
        el("th", {}, "message"), el("th", {}, "value")),
        g.messages.map((m) => el("tr", {}, el("td", {}, m.focus || ""), el("td", {}, m.path || ""),
          el("td", {}, m.message || ""), el("td", {class: "mono"}, m.value || "")))));
    }
  }
  if (d.error) {
    parts.push(el("h3", {}, "Error"));
    parts.push(el("div", {class: "bad"}, (d.error.type || "") + " (" + (d.error.kind || "") + ")"));
    parts.push(el("pre", {}, d.error.message || ""));
  }
  if (d.effects && d.effects.length) {
    parts.push(el("h3", {}, "Effects (" + d.effects.length + " triple" + (d.effects.length > 1 ? "s" : "") + ")"));
    parts.push(el("pre", {class: "effects"}, d.effects.map((t) => t.map(term).join(" ") + " .").join("\n")));
    if (d.graph) parts.push(el("div", {class: "hint"}, "in graph ", el("span", {class: "mono"}, d.graph)));
    parts.push(el("pre", {class: "prefixes"}, usedPrefixes(d.effects.flat().join(" "))));
  }
  if (d.wait && d.wait.brief) {
    parts.push(el("h3", {}, "Brief for the operator"));
    parts.push(el("pre", {class: "brief"}, d.wait.brief));
  }
  for (const key of ["proposal", "wait", "approval", "approved", "policy"]) {
    if (!d[key]) continue;
    const shown = key === "wait" ? Object.fromEntries(Object.entries(d.wait).filter(([k]) => k !== "brief")) : d[key];
    parts.push(el("h3", {}, key));
    parts.push(el("pre", {}, pretty(shown)));
  }
  parts.push(el("h3", {}, "Hash chain"));
  parts.push(kv([
    ["position", "event " + St.seq[s] + " of " + D.run.events + " (line " + (St.seq[s] + 1) + ")"],
    ["hash", d.hash ? d.hash + "…" : null],
    ["reads answered", d.reads],
    ["timings", d.timings ? Object.entries(d.timings).map(([k, v]) => k + " " + ms(v * 1000)).join(", ") : null],
  ]));
  panel.replaceChildren(...parts);
}

function kv(rows, caption) {
  const t = el("table", {class: "kv"});
  if (caption) t.append(el("caption", {}, caption));
  for (const [k, v] of rows) if (v !== null && v !== undefined && v !== "") t.append(el("tr", {}, el("th", {}, k), el("td", {}, String(v))));
  return t;
}

function usedPrefixes(text) {
  return PREFIXES.filter(([p, ns]) => text.includes("<" + ns)).map(([p, ns]) => "@prefix " + p + ": <" + ns + "> .").join("\n");
}

/* -- the diagram ------------------------------------------------------------------------ */

function showNode(id) {
  showTab("diagram");
  for (const g of document.querySelectorAll("#diagram g.hl")) g.classList.remove("hl");
  const g = document.getElementById(id);
  if (g) { g.classList.add("hl"); g.scrollIntoView({block: "center", inline: "center"}); }
  H.highlighted = id;
}

function diagramOnly(D) {
  const box = document.getElementById("summary");
  const traces = D.run.traces || [];
  box.append(el("span", {}, traces.length ? "counts from " : "no traces: the workflow as declared",
                traces.length ? el("b", {}, traces.join(", ")) : ""));
  if (!D.counts.length) return;
  const cols = ["ran", "completed", "blocked", "failed", "waiting"];
  document.getElementById("counts").append(el("table", {},
    el("tr", {}, el("th", {}, "step"), cols.map((c) => el("th", {}, c))),
    D.counts.map((r) => el("tr", {"data-step": r.step, onclick: () => r.node && showNode(r.node)},
      el("td", {}, r.name), cols.map((c) => el("td", {}, String(r[c] || 0)))))));
}

/* -- replay ----------------------------------------------------------------------------- */

function replayBanner(D) {
  const R = D.replay, box = document.getElementById("replay");
  box.hidden = false;
  box.classList.add(R.diverged ? "diverged" : "same");
  box.append(el("div", {class: "verdict", id: "verdict"}, R.verdict));
  if (!R.diverged) return;
  box.append(el("div", {}, "first divergence at event " + R.event + " (line " + (R.event + 1) + "), field ",
                el("b", {class: "mono"}, R.field)));
  box.append(el("div", {class: "sides"},
    el("div", {class: "side recorded", id: "recorded"}, el("h3", {}, "recorded"), el("pre", {}, pretty(R.recorded))),
    el("div", {class: "side now", id: "now"}, el("h3", {}, "now"), el("pre", {}, pretty(R.now)))));
  const s = H.stepOfSeq.get(R.event);
  const at = D.instances.seq.indexOf(R.event);  // or diverged at an instance's own event
  if (s === undefined && at >= 0) {
    H.divergentInst = at;
    selectInstance(at);
  }
  if (s !== undefined) {
    H.divergentStep = s;
    H.divergentInst = D.steps.inst[s];
    box.append(el("button", {type: "button", onclick: () => selectInstance(H.divergentInst, s)}, "show the divergent step"));
    selectInstance(H.divergentInst, s);
    const v = Array.prototype.indexOf.call(H.visible, H.divergentInst);
    if (v >= 0) document.getElementById("rows").scrollTop = Math.max(0, (v - 3) * rowHeight());
  }
}

H.main = main();
window.horismos = H;
