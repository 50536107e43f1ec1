// The agentrt runs page: vanilla JS, no build step. It reads the same HTTP API as any client:
// GET /agents (the start form, built from each agent's input schema), POST /runs to start one,
// GET /runs (polled for live status), GET /runs/{id}/events (server-sent events, read with fetch so
// the bearer token can be sent; resumed with Last-Event-ID after a drop), GET /runs/{id}/dump, and
// POST /runs/{id}/reply to answer a task.ui.ask prompt, POST /runs/{id}/cancel to cancel a run.
// The address /#RUN_ID opens that run (a link to share).
"use strict";

const $ = (sel) => document.querySelector(sel);
const state = {
  token: sessionStorage.getItem("agentrt-token") || "", selected: null, stream: null, lastId: 0,
  run: null, dumpKey: null, agents: null, askSchema: null,
};

function headers(extra) {
  const h = Object.assign({}, extra || {});
  if (state.token) h["Authorization"] = "Bearer " + state.token;
  return h;
}

async function api(path, options) {
  const opts = Object.assign({}, options || {});
  opts.headers = headers(opts.headers);
  const response = await fetch(path, opts);
  if (response.status === 401) {
    $("#token-form").hidden = false;
    $("#conn").textContent = "token needed";
    throw new Error("unauthorized");
  }
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const message = body && body.error ? body.error.message : response.statusText;
    const err = new Error(message);
    err.status = response.status;
    throw err;
  }
  return body;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function short(value, n) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text && text.length > n ? text.slice(0, n - 1) + "…" : text;
}

// ---------------------------------------------------------------- the runs list

async function refreshRuns() {
  const status = $("#status-filter").value;
  let data;
  try {
    data = await api("runs" + (status ? "?status=" + encodeURIComponent(status) : ""));
  } catch (e) {
    if (e.message !== "unauthorized") $("#conn").textContent = "offline: " + e.message;
    return;
  }
  $("#conn").textContent = "live";
  $("#token-form").hidden = true;
  const body = $("#runs tbody");
  body.replaceChildren();
  for (const run of data.runs) {
    const row = el("tr", { "data-run": run.run_id },
      el("td", { title: run.run_id }, run.run_id),
      el("td", { title: run.agent }, run.agent.split(":").pop()),
      el("td", {}, el("span", { class: "status " + run.status }, run.status + (run.interrupted ? " (interrupted)" : ""))),
      el("td", { class: "age", title: run.created_at ? new Date(run.created_at * 1000).toISOString() : "" }, age(run.created_at)),
      el("td", { class: "waits", title: waitsOn(run, 500) }, waitsOn(run, 60)));
    if (run.run_id === state.selected) row.classList.add("selected");
    row.addEventListener("click", () => select(run.run_id));
    body.append(row);
  }
  $("#runs-empty").hidden = data.runs.length > 0;
  if (!state.agents) loadAgents();
}

// How long ago `seconds` (since the epoch) was, in the largest whole unit: 12s, 3m, 5h, 2d.
function age(seconds) {
  if (!seconds) return "";
  const s = Math.max(0, Date.now() / 1000 - seconds);
  if (s < 60) return Math.floor(s) + "s";
  if (s < 3600) return Math.floor(s / 60) + "m";
  if (s < 86400) return Math.floor(s / 3600) + "h";
  return Math.floor(s / 86400) + "d";
}

// The text of a task.ui.ask prompt: a string, or an object's question/text/message/prompt field.
function questionText(prompt) {
  if (prompt === null || prompt === undefined) return "";
  if (typeof prompt === "string") return prompt;
  if (typeof prompt === "object" && !Array.isArray(prompt)) {
    for (const key of ["question", "text", "message", "prompt", "title"]) {
      if (typeof prompt[key] === "string") return prompt[key];
    }
  }
  return JSON.stringify(prompt);
}

// What an unfinished run waits on, in words: its question, a timer, a sub-run, a tool, a worker.
function waitsOn(run, n) {
  if (["completed", "failed", "cancelled"].includes(run.status)) return "";
  if (run.status === "queued") return "a worker";
  if (run.status === "blocked") return "a code fix (blocked)";
  if (run.interrupted) return "a worker to recover it";
  if (run.waiting_on === "reply" || run.prompt !== undefined) return "reply: " + short(questionText(run.prompt), n);
  if (run.waiting_on === "timer") return "a timer";
  if (run.waiting_on === "child") return "a sub-run";
  const p = run.pending;
  if (p && p.kind === "tool") return "tool " + p.name;
  if (p && p.kind) return p.kind;
  return run.waiting_on || "";
}

// ---------------------------------------------------------------- forms from JSON schemas

// Form fields for an object schema's properties (string, number, integer, boolean, enum; anything
// else as a JSON text box). Returns false when the schema has no properties to show.
function buildFields(box, schema, prefix) {
  box.replaceChildren();
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const names = Object.keys(props);
  for (const name of names) {
    const p = props[name] || {};
    const id = prefix + "-" + name;
    const label = (p.title || name) + (required.has(name) ? " *" : "");
    let input;
    if (Array.isArray(p.enum)) {
      input = el("select", { id });
      if (!required.has(name)) input.append(el("option", { value: "" }, ""));
      for (const v of p.enum) input.append(el("option", { value: JSON.stringify(v) }, String(v)));
    } else if (p.type === "boolean") {
      input = el("input", { id, type: "checkbox" });
      if (p.default === true) input.checked = true;
    } else if (p.type === "integer" || p.type === "number") {
      input = el("input", { id, type: "number", step: p.type === "integer" ? "1" : "any" });
    } else if (p.type === "string") {
      input = el("input", { id, type: "text" });
    } else {
      input = el("textarea", { id, rows: "2", placeholder: "JSON" });
    }
    if (p.default !== undefined && p.type !== "boolean") {
      input.value = Array.isArray(p.enum) ? JSON.stringify(p.default) : (typeof p.default === "string" || typeof p.default === "number") ? String(p.default) : JSON.stringify(p.default);
    }
    input.dataset.name = name;
    input.dataset.type = Array.isArray(p.enum) ? "enum" : (p.type || "json");
    if (required.has(name)) input.dataset.required = "1";
    box.append(el("label", { for: id, class: "field" }, el("span", {}, label), input));
    if (p.description) box.append(el("div", { class: "muted hint" }, p.description));
  }
  return names.length > 0;
}

// The object the fields of `box` hold; an empty optional field is left out (its default applies).
function fieldValues(box) {
  const value = {};
  for (const input of box.querySelectorAll("[data-name]")) {
    const name = input.dataset.name;
    const type = input.dataset.type;
    if (type === "boolean") { value[name] = input.checked; continue; }
    const text = input.value;
    if (text === "" && !input.dataset.required) continue;
    if (type === "string") value[name] = text;
    else if (type === "integer" || type === "number") {
      if (text === "") throw new Error(name + ": required, a number");
      value[name] = Number(text);
    } else {
      try { value[name] = JSON.parse(text); } catch (e) { throw new Error(name + ": not valid JSON (" + e.message + ")"); }
    }
  }
  return value;
}

// ---------------------------------------------------------------- starting a run

async function loadAgents() {
  let data;
  try { data = await api("agents"); } catch (e) { return; }
  state.agents = data.agents;
  const select = $("#start-agent");
  select.replaceChildren(...data.agents.map((a) => el("option", { value: a.spec }, a.name)));
  $("#start-form").hidden = data.agents.length === 0;
  $("#start-none").hidden = data.agents.length > 0;
  showAgentForm();
}

function showAgentForm() {
  const agent = (state.agents || []).find((a) => a.spec === $("#start-agent").value);
  if (!agent) return;
  $("#start-description").textContent = agent.description || "";
  buildFields($("#start-fields"), agent.input_schema, "start");
}

$("#start-agent").addEventListener("change", showAgentForm);
$("#start-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const result = $("#start-result");
  let input;
  try { input = fieldValues($("#start-fields")); } catch (e) { result.textContent = e.message; return; }
  try {
    const answer = await api("runs", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ agent: $("#start-agent").value, input }),
    });
    result.textContent = "started " + answer.run_id;
    await refreshRuns();
    select(answer.run_id);
  } catch (e) {
    result.textContent = e.message;
  }
});

// ---------------------------------------------------------------- one run

async function select(runId) {
  if (state.stream) state.stream.abort();
  state.selected = runId;
  state.lastId = 0;
  history.replaceState(null, "", "#" + encodeURIComponent(runId));
  $("#run-pane").hidden = false;
  $("#run-id").textContent = runId;
  $("#events").replaceChildren();
  $("#events-count").textContent = "";
  $("#ask").hidden = true;
  $("#ask-result").textContent = "";
  state.run = null;
  state.dumpKey = null;
  state.askSeq = null;
  $("#dump").replaceChildren(el("p", { class: "muted" }, "loading…"));
  $("#cancel").hidden = true;
  $("#cancel-result").textContent = "";
  document.querySelectorAll("#runs tbody tr").forEach((r) => r.classList.toggle("selected", r.dataset.run === runId));
  await refreshRun();
  follow(runId);
}

async function refreshRun() {
  const runId = state.selected;
  if (!runId) return;
  let run;
  try { run = await api("runs/" + encodeURIComponent(runId)); } catch (e) { $("#run-summary").textContent = e.message; return; }
  if (runId !== state.selected) return;
  state.run = run;
  const badge = $("#run-status");
  badge.textContent = run.status + (run.interrupted ? " (interrupted)" : "");
  badge.className = "status " + run.status;
  let summary = run.agent + (run.created_at ? " · started " + age(run.created_at) + " ago" : "");
  if (run.status === "completed") summary += " → " + short(run.output, 200);
  else if (run.status === "failed") summary += " ✗ " + short(run.error && (run.error.message || run.error), 200);
  else if (run.status === "blocked") summary += " ⛔ " + short(run.blocked && (run.blocked.message || run.blocked), 200);
  else if (waitsOn(run, 160)) summary += " · waits on " + waitsOn(run, 160);
  $("#run-summary").textContent = summary;
  $("#cancel").hidden = !["queued", "running", "waiting", "blocked"].includes(run.status);
  const asking = run.status === "waiting" && run.waiting_on === "reply";
  $("#ask").hidden = !asking;
  if (asking && state.askSeq !== run.seq) showQuestion(run);
  // The frames follow the run: a new checkpoint or status (its end included) shows them again.
  const key = run.status + "/" + (run.seq || "") + "/" + (run.checkpoints ? run.checkpoints.length : "");
  if (key !== state.dumpKey) {
    state.dumpKey = key;
    refreshDump();
  }
  refreshTeam(runId);
}

// A team run as its lanes (GET /runs/{id}/team): the page's counterpart of one pane per lane.
async function refreshTeam(runId) {
  let team;
  try { team = await api("runs/" + encodeURIComponent(runId) + "/team"); } catch (e) { $("#team").hidden = true; return; }
  if (runId !== state.selected) return;
  $("#team").hidden = team.lanes.length === 0 && !team.gate;
  $("#team-gate").textContent = team.gate ? "gate: " + team.gate : (team.goal_status ? "goal: " + team.goal_status : "");
  $("#team-lanes tbody").replaceChildren(...team.lanes.map((l) => el("tr", { "data-lane": l.task_id, class: l.live ? "live" : "" },
    el("td", {}, l.task_id), el("td", {}, l.specialist), el("td", {}, l.tier), el("td", {}, l.model),
    el("td", { class: "status " + l.state }, l.state + (l.live ? " (live)" : "")),
    el("td", {}, String(l.attempts)), el("td", {}, String(l.receipts)),
    el("td", {}, String(l.escalations)), el("td", {}, String(l.reviews)))));
}

// The question as text; its other fields as a list; its schema (if any) as form fields.
function showQuestion(run) {
  state.askSeq = run.seq;
  const prompt = run.prompt;
  $("#ask-prompt").textContent = questionText(prompt);
  const details = $("#ask-details");
  details.replaceChildren();
  const isObject = prompt && typeof prompt === "object" && !Array.isArray(prompt);
  if (isObject) {
    const shown = questionText(prompt);
    for (const [k, v] of Object.entries(prompt)) {
      if (k === "schema" || (typeof v === "string" && v === shown)) continue;
      details.append(el("dt", {}, k), el("dd", {}, typeof v === "string" ? v : JSON.stringify(v)));
    }
  }
  const schema = isObject && prompt.schema && typeof prompt.schema === "object" ? prompt.schema : null;
  state.askSchema = schema && buildFields($("#ask-fields"), schema, "ask") ? schema : null;
  if (!state.askSchema) $("#ask-fields").replaceChildren();
  $("#ask-value").hidden = state.askSchema !== null;
  $("#ask-value").value = "";
}

function describe(kind, data) {
  const d = data || {};
  switch (kind) {
    case "started": return "agent " + d.agent + " input " + short(d.input, 80);
    case "tool_started": return d.tool + " (seq " + d.seq + ")";
    case "tool_finished": return d.tool + (d.ok ? " ok" : " failed: " + d.error);
    case "model_request": return d.method + " " + (d.src || "");
    case "model_result": return d.method + (d.ok ? " ok" : " failed: " + d.error);
    case "waiting": return "on " + d.waiting_on + (d.prompt !== undefined && d.prompt !== null ? ": " + short(questionText(d.prompt), 80) : "");
    case "checkpoint": return "seq " + d.seq + ", " + d.size_bytes + " bytes, " + requestText(d.request, 80);
    case "log": case "notify": return short(d.message !== undefined ? d.message : d, 120);
    default: return short(d, 120);
  }
}

// A checkpoint's request in words: a question's text, a tool's name and arguments.
function requestText(r, n) {
  if (r && r.kind === "ask") return "ask: " + short(questionText(r.prompt), n);
  if (r && r.kind === "tool") return "tool " + r.name + "(" + short(r.kwargs, n) + ")";
  return short(r, n);
}

function addEvent(id, kind, data) {
  const item = el("li", { value: id || "", "data-kind": kind },
    el("span", { class: "kind" }, kind), " ", describe(kind, data));
  $("#events").append(item);
  $("#events-count").textContent = "(" + $("#events").children.length + ")";
  item.scrollIntoView({ block: "nearest" });
}

// Server-sent events over fetch (EventSource cannot send an Authorization header).
async function follow(runId) {
  const controller = new AbortController();
  state.stream = controller;
  let delay = 250;
  while (!controller.signal.aborted) {
    try {
      const response = await fetch("runs/" + encodeURIComponent(runId) + "/events", {
        headers: headers(state.lastId ? { "Last-Event-ID": String(state.lastId) } : {}),
        signal: controller.signal,
      });
      if (!response.ok) throw new Error("HTTP " + response.status);
      delay = 250;
      if (await readEvents(response, runId)) return;  // the run ended
    } catch (e) {
      if (controller.signal.aborted) return;
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 5000);
  }
}

async function readEvents(response, runId) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let ev = { id: null, event: "message", data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return false;
    buffer += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer[nl] === "\r" ? 2 : 1));
      if (line === "") {
        if (ev.data.length) {
          if (handleEvent(ev, runId)) return true;
        }
        ev = { id: null, event: "message", data: [] };
      } else if (!line.startsWith(":")) {
        const i = line.indexOf(":");
        const field = i < 0 ? line : line.slice(0, i);
        const val = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
        if (field === "id") ev.id = val;
        else if (field === "event") ev.event = val;
        else if (field === "data") ev.data.push(val);
      }
    }
  }
}

function handleEvent(ev, runId) {
  if (runId !== state.selected) return true;
  const payload = JSON.parse(ev.data.join("\n"));
  if (ev.id) state.lastId = Number(ev.id);
  if (ev.event === "end") {
    addEvent(ev.id, "end", { status: payload.status });
    refreshRun();
    refreshRuns();
    return true;
  }
  addEvent(ev.id, ev.event, payload.data);
  if (["started", "waiting", "replied", "checkpoint", "resumed", "blocked", "retried", "tool_started"].includes(ev.event)) {
    refreshRun();  // and the frames, when the run has moved
    refreshRuns();
  }
  return false;
}

// ---------------------------------------------------------------- the frame dump

function describePending(dump) {
  const p = dump.pending_summary;
  if (!p) return valueText(dump.pending);
  switch (p.kind) {
    case "ask": return "ask " + short(questionText(p.prompt), 200);
    case "tool": case "agent": return p.kind + " " + p.name + "(" + short(p.kwargs || p.input, 160) + ")";
    case "llm": return "llm " + p.method + " " + (p.model || "") + ": " + short(p.prompt, 160);
    case "sleep": return "sleep until " + new Date(p.until * 1000).toISOString();
    default: return short(p, 200);
  }
}

function valueText(v) { return v ? v.repr + "  : " + v.type : "∅"; }

function vars(title, list) {
  const dl = el("dl", { class: "vars" });
  for (const v of list) dl.append(el("dt", {}, v.name), el("dd", {}, v.empty ? "<empty>" : valueText(v.value)));
  return list.length ? [el("div", { class: "muted" }, title), dl] : [];
}

async function refreshDump() {
  const runId = state.selected;
  const box = $("#dump");
  let dump;
  try { dump = await api("runs/" + encodeURIComponent(runId) + "/dump"); } catch (e) {
    if (runId === state.selected) box.replaceChildren(el("p", { class: "muted" }, e.message));
    return;
  }
  if (runId !== state.selected) return;
  const parts = [];
  parts.push(el("p", { class: "muted" }, "checkpoint seq " + dump.source.seq + (dump.source.latest ? " (newest)" : "")));
  const run = state.run;
  const over = run && ["completed", "failed", "cancelled"].includes(run.status);
  if (over) {
    // A finished run waits on nothing: its newest checkpoint shows where it was, not what is pending.
    parts.push(el("div", { class: "pending past", id: "pending" },
      "the run is " + run.status + "; at this checkpoint it waited on: " + describePending(dump)));
  } else if (dump.pending_summary || dump.pending) {
    parts.push(el("div", { class: "pending", id: "pending" }, "pending: " + describePending(dump)));
  }
  if (dump.frames_error) parts.push(el("p", { class: "error" }, dump.frames_error));
  for (const f of dump.frames || []) {
    const src = el("pre", { class: "src" });
    for (const s of f.source) {
      const line = el("span", s.current ? { class: "cur" } : {}, String(s.lineno).padStart(5) + (s.current ? " → " : "   ") + s.text);
      src.append(line, "\n");
    }
    const stack = f.stack.map((e) => ({ name: "[" + e.position + "] " + (e.label || e.role || ""), empty: e.null, value: e.value }));
    const body = el("div", { class: "body" }, src, ...vars("locals", f.locals), ...vars("cells", f.cells), ...vars("value stack", stack));
    if (f.awaiting) body.append(el("div", { class: "muted" }, "awaiting " + f.awaiting));
    if (f.error) body.append(el("div", { class: "error" }, f.error));
    const details = el("details", { class: "frame", open: "" },
      el("summary", {}, "#" + f.index + " " + f.function + "  " + f.filename.split("/").pop() + ":" + f.lineno), body);
    parts.push(details);
  }
  box.replaceChildren(...parts);
}

// ---------------------------------------------------------------- replying

$("#ask").addEventListener("submit", async (event) => {
  event.preventDefault();
  let value;
  if (state.askSchema) {
    try { value = fieldValues($("#ask-fields")); } catch (e) { $("#ask-result").textContent = e.message; return; }
  } else {
    const text = $("#ask-value").value;
    try { value = JSON.parse(text); } catch (e) { value = text; }
  }
  try {
    const answer = await api("runs/" + encodeURIComponent(state.selected) + "/reply", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ value }),
    });
    $("#ask-result").textContent = "replied; the run is " + answer.status;
    $("#ask-value").value = "";
    $("#ask").hidden = true;
    refreshRun();
  } catch (e) {
    $("#ask-result").textContent = e.message;
  }
});

// ---------------------------------------------------------------- cancelling

$("#cancel").addEventListener("click", async () => {
  const runId = state.selected;
  $("#cancel").disabled = true;
  try {
    const answer = await api("runs/" + encodeURIComponent(runId) + "/cancel", { method: "POST" });
    const others = (answer.runs || []).filter((id) => id !== runId);
    $("#cancel-result").textContent = "cancel requested" + (others.length ? " (and " + others.join(", ") + ")" : "");
  } catch (e) {
    $("#cancel-result").textContent = e.message;
  } finally {
    $("#cancel").disabled = false;
  }
  refreshRun();
  refreshRuns();
});

$("#token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.token = $("#token").value;
  sessionStorage.setItem("agentrt-token", state.token);
  state.agents = null;
  refreshRuns();
  if (state.selected) select(state.selected);
});
$("#status-filter").addEventListener("change", refreshRuns);
$("#dump-refresh").addEventListener("click", refreshDump);

refreshRuns();
setInterval(() => { refreshRuns(); if (state.selected) refreshRun(); }, 1500);
// Deep links: /#RUN_ID opens that run, on load and when the address changes.
function openFromHash() {
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (wanted && wanted !== state.selected) select(wanted);
}
window.addEventListener("hashchange", openFromHash);
openFromHash();
