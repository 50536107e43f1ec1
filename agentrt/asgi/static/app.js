// The agentrt runs page: vanilla JS, no build step. It reads the same HTTP API as any client:
// GET /runs (polled for live status), GET /runs/{id}/events (server-sent events, read with fetch so
// the bearer token can be sent; resumed with Last-Event-ID after a drop), GET /runs/{id}/dump, and
// POST /runs/{id}/reply to answer a task.ui.ask prompt, POST /runs/{id}/cancel to cancel a run.
"use strict";

const $ = (sel) => document.querySelector(sel);
const state = { token: sessionStorage.getItem("agentrt-token") || "", selected: null, stream: null, lastId: 0 };

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
      el("td", {}, run.run_id),
      el("td", {}, el("span", { class: "status " + run.status }, run.status + (run.interrupted ? " (interrupted)" : ""))),
      el("td", { title: run.agent }, run.agent.split(":").pop()));
    if (run.run_id === state.selected) row.classList.add("selected");
    row.addEventListener("click", () => select(run.run_id));
    body.append(row);
  }
  $("#runs-empty").hidden = data.runs.length > 0;
}

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
  $("#cancel").hidden = true;
  $("#cancel-result").textContent = "";
  document.querySelectorAll("#runs tbody tr").forEach((r) => r.classList.toggle("selected", r.dataset.run === runId));
  await refreshRun();
  follow(runId);
  refreshDump();
}

async function refreshRun() {
  const runId = state.selected;
  if (!runId) return;
  let run;
  try { run = await api("runs/" + encodeURIComponent(runId)); } catch (e) { $("#run-summary").textContent = e.message; return; }
  if (runId !== state.selected) return;
  const badge = $("#run-status");
  badge.textContent = run.status;
  badge.className = "status " + run.status;
  let summary = run.agent;
  if (run.status === "completed") summary += " → " + short(run.output, 200);
  else if (run.status === "failed") summary += " ✗ " + short(run.error && (run.error.message || run.error), 200);
  else if (run.status === "blocked") summary += " ⛔ " + short(run.blocked && (run.blocked.message || run.blocked), 200);
  else if (run.pending) summary += " · pending " + short(run.pending, 160);
  $("#run-summary").textContent = summary;
  $("#cancel").hidden = !["queued", "running", "waiting", "blocked"].includes(run.status);
  const asking = run.status === "waiting" && run.waiting_on === "reply";
  $("#ask").hidden = !asking;
  if (asking) $("#ask-prompt").textContent = typeof run.prompt === "string" ? run.prompt : JSON.stringify(run.prompt);
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

function describe(kind, data) {
  const d = data || {};
  switch (kind) {
    case "started": return "agent " + d.agent + " input " + short(d.input, 80);
    case "tool_started": return d.tool + " (seq " + d.seq + ")";
    case "tool_finished": return d.tool + (d.ok ? " ok" : " failed: " + d.error);
    case "model_request": return d.method + " " + (d.src || "");
    case "model_result": return d.method + (d.ok ? " ok" : " failed: " + d.error);
    case "waiting": return "on " + d.waiting_on + (d.prompt !== undefined && d.prompt !== null ? ": " + short(d.prompt, 80) : "");
    case "checkpoint": return "seq " + d.seq + ", " + d.size_bytes + " bytes, " + short(d.request, 80);
    case "log": case "notify": return short(d.message !== undefined ? d.message : d, 120);
    default: return short(d, 120);
  }
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
    refreshDump();
    return true;
  }
  addEvent(ev.id, ev.event, payload.data);
  if (["waiting", "replied", "checkpoint", "resumed", "blocked", "retried"].includes(ev.event)) {
    refreshRun();
    refreshRuns();
  }
  if (ev.event === "checkpoint" || ev.event === "waiting") refreshDump();
  return false;
}

// ---------------------------------------------------------------- the frame dump

function describePending(dump) {
  const p = dump.pending_summary;
  if (!p) return valueText(dump.pending);
  switch (p.kind) {
    case "ask": return "ask " + short(p.prompt, 200);
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
  if (dump.pending_summary || dump.pending) {
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
  const text = $("#ask-value").value;
  let value;
  try { value = JSON.parse(text); } catch (e) { value = text; }
  try {
    const answer = await api("runs/" + encodeURIComponent(state.selected) + "/reply", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ value }),
    });
    $("#ask-result").textContent = "replied; the run is " + answer.status;
    $("#ask-value").value = "";
    $("#ask").hidden = true;
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
  refreshRuns();
  if (state.selected) select(state.selected);
});
$("#status-filter").addEventListener("change", refreshRuns);
$("#dump-refresh").addEventListener("click", refreshDump);

refreshRuns();
setInterval(refreshRuns, 1500);
if (location.hash.length > 1) select(decodeURIComponent(location.hash.slice(1)));
