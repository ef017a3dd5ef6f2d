// The board view: kanban columns by status for one team or all, filters, a task's detail in a
// dialog (description, comments, dependencies both ways, ancestor chain), and "add comment".
"use strict";

import { get, post, seg, el, reconcile, age, time, duration, orDash, Pager, serial, say, sayError, route, loaded } from "./api.js";

/** The stored statuses in the board's canonical order; any other status seen gets a column too. */
const STATUSES = ["backlog", "todo", "in_progress", "in_review", "blocked", "done", "cancelled"];
const LABELS = { backlog: "Backlog", todo: "To do", in_progress: "In progress", in_review: "In review", blocked: "Blocked", done: "Done", cancelled: "Cancelled" };
const AUTHORS = { agent: "agent", user: "operator", system: "system" };

const $ = (id) => document.getElementById(id);
const filters = { team: "", assignee: "", status: "", q: "" };
let teams = [];
let shownOnce = false;
let openTaskId = null;
let opener = null;

const pager = new Pager(async (cursor, limit) => {
  const data = await get("/api/board", { team: filters.team, assignee: filters.assignee, status: filters.status, q: filters.q, limit, cursor });
  if (Array.isArray(data.teams)) teams = data.teams;
  return { items: data.tasks, nextCursor: data.nextCursor };
}, (t) => t.id);

function label(status) {
  return Object.prototype.hasOwnProperty.call(LABELS, status) ? LABELS[status] : String(status);
}

const seenStatuses = new Set(STATUSES);

/** Every status seen so far, canonical ones first. */
function knownStatuses() {
  for (const t of pager.items) seenStatuses.add(t.status);
  if (filters.status) seenStatuses.add(filters.status);
  return [...seenStatuses];
}

function statusesShown() {
  return filters.status ? [filters.status] : knownStatuses();
}

function marks(t) {
  const out = [];
  if (t.blocked) out.push(el("span", { class: "mark blocked", testid: "mark-blocked", text: "blocked", title: "waits on an unfinished dependency" }));
  else if (t.ready && (t.status === "todo" || t.status === "backlog")) out.push(el("span", { class: "mark ready", testid: "mark-ready", text: "ready", title: "every dependency is done" }));
  if (typeof t.leaseExpiresAt === "number") {
    const left = t.leaseExpiresAt - Date.now();
    out.push(el("span", { class: "mark lease", testid: "mark-lease", text: left > 0 ? "lease " + duration(left) : "lease expired", title: "lease until " + time(t.leaseExpiresAt) }));
  }
  return out;
}

function assignee(t) {
  if (!t.assigneeAgentId) return "unassigned";
  return t.assigneeRuntime ? t.assigneeAgentId + " (" + t.assigneeRuntime + ")" : t.assigneeAgentId;
}

function card(t) {
  return el("button", { type: "button", class: "card", testid: "task-card", data: { taskId: t.id, status: t.status }, onclick: (e) => openTask(t.id, e.currentTarget) },
    el("span", { class: "card-title", text: t.title === "" ? "(untitled)" : orDash(t.title) }),
    el("span", { class: "card-meta" },
      el("span", { class: "pill", text: "P" + orDash(t.priority), title: "priority (higher is more urgent)" }),
      el("span", { class: "who", text: assignee(t) })),
    filters.team ? null : el("span", { class: "card-team", text: "team " + orDash(t.teamId) }),
    el("span", { class: "card-foot" }, age(t.createdAt), ...marks(t)));
}

function column(status) {
  return el("section", { class: "column", testid: "board-column-" + status, data: { status }, label: label(status) },
    el("h3", {}, label(status), " ", el("span", { class: "count", testid: "board-column-count", text: "0" })),
    el("div", { class: "cards" }));
}

function renderFilters() {
  const select = $("board-team");
  const names = teams.slice();
  if (filters.team && !names.includes(filters.team)) names.push(filters.team);
  reconcile(select, [""].concat(names), (n) => n, (n) => el("option", { value: n, text: n === "" ? "All teams" : n }));
  select.value = filters.team;

  const statusSelect = $("board-status");
  reconcile(statusSelect, [""].concat(knownStatuses()), (s) => s,
    (s) => el("option", { value: s, text: s === "" ? "All statuses" : label(s) }));
  statusSelect.value = filters.status;

  const agents = [...new Set(pager.items.map((t) => t.assigneeAgentId).filter(Boolean))].sort();
  reconcile($("board-assignees"), agents, (a) => a, (a) => el("option", { value: a }));
}

function render() {
  renderFilters();
  const byStatus = new Map();
  for (const t of pager.items) {
    if (!byStatus.has(t.status)) byStatus.set(t.status, []);
    byStatus.get(t.status).push(t);
  }
  const columns = $("board-columns");
  reconcile(columns, statusesShown(), (s) => s, column);
  for (const col of columns.children) {
    const tasks = byStatus.get(col.dataset.status) || [];
    reconcile(col.querySelector(".cards"), tasks, (t) => t.id, card);
    col.querySelector(".count").textContent = String(tasks.length);
  }
  $("board-empty").hidden = pager.items.length > 0;
  $("board-load-more").hidden = !pager.cursor;
  loaded();
}

async function load(how) {
  try {
    if (await pager[how]()) render();
  } catch (e) {
    sayError("could not read the board", e);
  }
}

const refresh = serial(() => load("refresh"));

// ---- the task dialog ----

function taskLink(t) {
  return el("li", {},
    el("button", { type: "button", class: "link", testid: "task-link", data: { taskId: t.id }, onclick: () => openTask(t.id) },
      orDash(t.title)),
    " ", el("span", { class: "pill", text: label(t.status) }),
    t.blocked ? el("span", { class: "mark blocked", text: "blocked" }) : null);
}

function links(list, tasks) {
  if (!tasks || tasks.length === 0) list.replaceChildren(el("li", { class: "muted", text: "none" }));
  else list.replaceChildren(...tasks.map(taskLink));
}

function comment(c) {
  const who = Object.prototype.hasOwnProperty.call(AUTHORS, c.authorType) ? AUTHORS[c.authorType] : String(c.authorType);
  return el("li", { class: "comment " + (c.authorType === "user" ? "by-user" : "by-agent"), testid: "task-comment", data: { id: c.id } },
    el("div", { class: "comment-head" },
      el("span", { class: "pill", text: who }), " ",
      el("span", { class: "who", text: orDash(c.authorAgentId) }), " ",
      el("span", { class: "muted", text: time(c.createdAt) })),
    el("p", { class: "text", text: orDash(c.body) }));
}

function renderTask(data) {
  const t = data.task || {};
  const dialog = $("task-dialog");
  const scroll = dialog.scrollTop;
  $("task-title").textContent = orDash(t.title);
  const crumbs = $("task-ancestors");
  const ancestors = Array.isArray(data.ancestors) ? data.ancestors : [];
  crumbs.hidden = ancestors.length === 0;
  crumbs.replaceChildren(...ancestors.flatMap((a) => [
    el("button", { type: "button", class: "link", testid: "task-link", data: { taskId: a.id }, onclick: () => openTask(a.id), title: label(a.status) }, orDash(a.title)),
    el("span", { class: "sep", text: " › " }),
  ]), el("span", { class: "muted", text: "this task" }));
  const meta = $("task-meta");
  meta.replaceChildren(...[
    ["Status", label(t.status)],
    ["Priority", orDash(t.priority)],
    ["Team", orDash(t.teamId)],
    ["Assignee", assignee(t)],
    ["Created", time(t.createdAt)],
    ["Updated", time(t.updatedAt)],
    ["Lease until", typeof t.leaseExpiresAt === "number" ? time(t.leaseExpiresAt) : "-"],
    ["Dependencies", t.blocked ? "blocked (an unfinished dependency)" : t.ready ? "ready (all done)" : "-"],
    ["Id", orDash(t.id)],
  ].flatMap(([term, value]) => [el("dt", { text: term }), el("dd", { text: value })]));
  $("task-description").textContent = t.description ? String(t.description) : "(no description)";
  links($("task-depends-on"), data.dependsOn);
  links($("task-dependents"), data.dependents);
  reconcile($("task-comments"), Array.isArray(data.comments) ? data.comments : [], (c) => c.id, comment);
  dialog.scrollTop = scroll;
}

async function loadTask() {
  const id = openTaskId;
  if (id === null) return;
  try {
    const data = await get("/api/board/" + seg(id));
    if (id === openTaskId) renderTask(data);
  } catch (e) {
    sayError("could not read the task", e);
  }
}

const refreshTask = serial(loadTask);

async function openTask(id, from) {
  const dialog = $("task-dialog");
  if (openTaskId !== id) $("task-comments").replaceChildren();
  openTaskId = id;
  if (from) opener = from;
  await loadTask();
  if (openTaskId === id && !dialog.open) {
    dialog.showModal();
    $("task-close").focus();
  }
}

function closedTask() {
  openTaskId = null;
  const back = opener && opener.isConnected ? opener : null;
  opener = null;
  if (back) back.focus();
}

async function addComment(event) {
  event.preventDefault();
  const box = $("comment-body");
  const body = box.value.trim();
  const id = openTaskId;
  if (!body || id === null) return;
  $("comment-submit").disabled = true;
  try {
    await post("/api/board/" + seg(id) + "/comments", { body });
    box.value = "";
    say("comment added to " + orDash($("task-title").textContent));
    await loadTask();
  } catch (e) {
    sayError("could not add the comment", e);
  } finally {
    $("comment-submit").disabled = false;
  }
}

// ---- wiring ----

const typing = {};
function later(name, fn) {
  clearTimeout(typing[name]);
  typing[name] = setTimeout(fn, 250);
}

function setFilter(name, value) {
  if (filters[name] === value) return;
  filters[name] = value;
  load("reset");
}

$("board-filters").addEventListener("submit", (e) => e.preventDefault());
$("board-team").addEventListener("change", (e) => {
  location.hash = e.target.value ? route("board", e.target.value) : "#/board";
});
$("board-status").addEventListener("change", (e) => setFilter("status", e.target.value));
$("board-assignee").addEventListener("input", (e) => later("assignee", () => setFilter("assignee", e.target.value.trim())));
$("board-q").addEventListener("input", (e) => later("q", () => setFilter("q", e.target.value.trim())));
$("board-load-more").addEventListener("click", () => load("more"));
$("task-close").addEventListener("click", () => $("task-dialog").close());
$("task-dialog").addEventListener("close", closedTask);
$("comment-form").addEventListener("submit", addComment);
$("comment-body").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    $("comment-form").requestSubmit();
  }
});

export default {
  topics: ["board"],
  show(args) {
    const team = args[0] || "";
    if (!shownOnce || team !== filters.team) {
      shownOnce = true;
      filters.team = team;
      load("reset");
    } else {
      refresh();
    }
  },
  changed() {
    refresh();
    if (openTaskId !== null) refreshTask();
  },
};
