// The memory browser (seed 004): facts and procedures by scope, search (fts / vector / hybrid,
// with the mode actually used and why it fell back), delete one or many after a confirmation,
// and seeding by hand.
"use strict";

import { get, post, del, seg, el, reconcile, time, orDash, longText, Pager, serial, say, sayError, loaded } from "./api.js";

const SEARCH_LIMIT = 50;
const CONFIRM_NAMES = 10;

const $ = (id) => document.getElementById(id);
const filters = { kind: "", scope: "", team: "", agent: "" };
let search = null; // { q, mode } while search results are shown
let hits = [];
let searchInfo = null;
const selected = new Set();
let shownOnce = false;

const pager = new Pager(async (cursor, limit) => {
  const data = await get("/api/memory", { kind: filters.kind, scope: filters.scope, team: filters.team, agent: filters.agent, limit, cursor });
  pager.total = data.total;
  return { items: data.entries, nextCursor: data.nextCursor };
}, (e) => e.id);

function shown() {
  return search ? hits : pager.items;
}

function scopeText(scope) {
  const parts = [];
  if (scope && scope.teamId) parts.push("team " + scope.teamId);
  if (scope && scope.agentId) parts.push("agent " + scope.agentId);
  return parts.length ? parts.join(", ") : "global";
}

function versions(entry) {
  if (!Array.isArray(entry.versions) || entry.versions.length < 2) return null;
  return el("details", { class: "versions", testid: "memory-versions" },
    el("summary", { text: entry.versions.length + " versions" }),
    el("ol", {}, ...entry.versions.map((v) =>
      el("li", { text: "v" + v.version + " · " + time(v.createdAt) + (v.id === entry.id ? " (shown)" : "") }))));
}

function row(entry) {
  const name = orDash(entry.title);
  const box = el("input", { type: "checkbox", testid: "memory-select", label: "select " + name, checked: selected.has(entry.id) });
  box.addEventListener("change", () => {
    if (box.checked) selected.add(entry.id);
    else selected.delete(entry.id);
    renderToolbar();
  });
  return el("tr", { testid: "memory-row", data: { id: entry.id, kind: entry.kind } },
    el("td", { class: "pick" }, box),
    el("td", {},
      el("span", { class: "pill", text: entry.kind === "procedure" ? "procedure" : "fact" }),
      typeof entry.version === "number" ? el("span", { class: "muted", text: " v" + entry.version }) : null,
      versions(entry)),
    el("td", { class: "title" }, longText(entry.title, "strong")),
    el("td", { class: "content" }, longText(entry.content, "text")),
    el("td", {}, ...(Array.isArray(entry.tags) ? entry.tags : []).map((t) => el("span", { class: "tag", text: t }))),
    el("td", { class: "name", text: scopeText(entry.scope) }),
    el("td", { class: "nowrap" },
      time(entry.updatedAt || entry.createdAt),
      typeof entry.score === "number" ? el("div", { class: "muted", text: "score " + entry.score.toFixed(3) }) : null),
    el("td", {}, el("button", { type: "button", class: "danger", testid: "memory-delete", label: "delete " + name, text: "Delete", onclick: () => remove([entry]) })));
}

function renderToolbar() {
  const rows = shown();
  const chosen = rows.filter((e) => selected.has(e.id)).length;
  const all = $("memory-select-all");
  all.checked = rows.length > 0 && chosen === rows.length;
  all.indeterminate = chosen > 0 && chosen < rows.length;
  const button = $("memory-delete-selected");
  button.disabled = selected.size === 0;
  button.textContent = selected.size ? "Delete selected (" + selected.size + ")" : "Delete selected";
  $("memory-count").textContent = search
    ? rows.length + " hits"
    : "showing " + rows.length + (typeof pager.total === "number" ? " of " + pager.total : "");
}

function render() {
  const rows = shown();
  // A row's look depends on whether it is selected, so that goes into its key's signature.
  reconcile($("memory-rows"), rows.map((e) => ({ ...e, selected: selected.has(e.id) })), (e) => e.id, row);
  $("memory-empty").hidden = rows.length > 0;
  $("memory-load-more").hidden = Boolean(search) || !pager.cursor;
  $("memory-clear-search").hidden = !search;
  const info = $("memory-search-info");
  info.hidden = !search || !searchInfo;
  if (search && searchInfo) {
    info.replaceChildren(
      "Results for ", el("q", { text: search.q }), " · mode used: ",
      el("strong", { testid: "memory-mode-used", text: orDash(searchInfo.mode) }),
      searchInfo.mode !== search.mode ? " (asked for " + search.mode + ")" : "",
      searchInfo.degraded ? el("span", { class: "warn", testid: "memory-degraded", text: " · fell back: " + searchInfo.degraded }) : null);
  }
  renderToolbar();
  loaded();
}

async function list(how) {
  try {
    if (await pager[how]()) render();
  } catch (e) {
    sayError("could not read the memory", e);
  }
}

async function runSearch() {
  const asked = search;
  if (!asked) return;
  try {
    const data = await get("/api/memory/search", { q: asked.q, mode: asked.mode, team: filters.team, agent: filters.agent, limit: SEARCH_LIMIT });
    if (asked !== search) return;
    hits = (Array.isArray(data.hits) ? data.hits : []).map((h) => ({ ...h.entry, score: h.score }));
    searchInfo = { mode: data.mode, degraded: data.degraded };
    render();
  } catch (e) {
    sayError("could not search the memory", e);
  }
}

const refresh = serial(() => (search ? runSearch() : list("refresh")));

// ---- confirmation ----

/** Asks before a deletion; resolves true only on the Delete button (Esc and Cancel say no). */
function confirmDelete(text, names) {
  const dialog = $("confirm-dialog");
  $("confirm-text").textContent = text;
  const list = names.slice(0, CONFIRM_NAMES).map((n) => el("li", { text: n }));
  if (names.length > CONFIRM_NAMES) list.push(el("li", { class: "muted", text: "and " + (names.length - CONFIRM_NAMES) + " more" }));
  $("confirm-list").replaceChildren(...list);
  return new Promise((resolve) => {
    let answer = false;
    const ok = () => {
      answer = true;
      dialog.close();
    };
    const cancel = () => dialog.close();
    dialog.addEventListener("close", () => {
      $("confirm-ok").removeEventListener("click", ok);
      $("confirm-cancel").removeEventListener("click", cancel);
      resolve(answer);
    }, { once: true });
    $("confirm-ok").addEventListener("click", ok);
    $("confirm-cancel").addEventListener("click", cancel);
    dialog.showModal();
    $("confirm-cancel").focus();
  });
}

async function remove(entries) {
  if (!entries.length) return;
  const back = document.activeElement;
  const what = entries.length === 1 ? "Delete this " + (entries[0].kind === "procedure" ? "procedure version" : "fact") + "?" : "Delete these " + entries.length + " entries?";
  const sure = await confirmDelete(what + " Agents stop seeing " + (entries.length === 1 ? "it" : "them") + " on their next run; this cannot be undone.", entries.map((e) => orDash(e.title)));
  if (!sure) {
    if (back && back.isConnected) back.focus();
    return;
  }
  let deleted = 0;
  const failures = [];
  for (const entry of entries) {
    try {
      await del("/api/memory/" + seg(entry.id));
      deleted += 1;
      selected.delete(entry.id);
    } catch (e) {
      if (e.status === 404) selected.delete(entry.id);
      failures.push(e.message);
    }
  }
  if (failures.length) say("deleted " + deleted + " of " + entries.length + "; " + failures[0], true);
  else say("deleted " + deleted + (deleted === 1 ? " entry" : " entries"));
  await refresh();
  $("memory-seed-open").focus();
}

// ---- seeding ----

async function seed(event) {
  event.preventDefault();
  const title = $("seed-title").value.trim();
  const content = $("seed-content").value;
  if (!title || !content.trim()) return;
  const scope = {};
  if ($("seed-team").value.trim()) scope.teamId = $("seed-team").value.trim();
  if ($("seed-agent").value.trim()) scope.agentId = $("seed-agent").value.trim();
  const tags = $("seed-tags").value.split(",").map((t) => t.trim()).filter(Boolean);
  $("seed-submit").disabled = true;
  try {
    const data = await post("/api/memory", { kind: $("seed-kind").value, title, content, tags, scope });
    const entry = data.entry || {};
    $("seed-dialog").close();
    $("seed-form").reset();
    const redacted = entry.content !== undefined && (entry.content !== content || entry.title !== title);
    say("saved " + orDash(entry.title) + (redacted ? " (the scrubber redacted part of what was typed)" : ""));
    await refresh();
  } catch (e) {
    sayError("could not save", e);
  } finally {
    $("seed-submit").disabled = false;
  }
}

// ---- wiring ----

/** Takes the filter fields; a new filter starts a new selection (no deleting what is not shown). */
function readFilters() {
  selected.clear();
  filters.kind = $("memory-kind").value;
  filters.scope = $("memory-scope").value;
  filters.team = $("memory-team").value.trim();
  filters.agent = $("memory-agent").value.trim();
}

$("memory-filters").addEventListener("submit", (e) => {
  e.preventDefault();
  readFilters();
  if (search) runSearch();
  else list("reset");
});
for (const id of ["memory-kind", "memory-scope"]) {
  $(id).addEventListener("change", () => $("memory-filters").requestSubmit());
}
$("memory-search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  readFilters();
  const q = $("memory-q").value.trim();
  if (!q) return;
  search = { q, mode: $("memory-mode").value };
  hits = [];
  searchInfo = null;
  runSearch();
});
$("memory-clear-search").addEventListener("click", () => {
  search = null;
  hits = [];
  $("memory-q").value = "";
  list("refresh");
  $("memory-q").focus();
});
$("memory-select-all").addEventListener("change", (e) => {
  for (const entry of shown()) {
    if (e.target.checked) selected.add(entry.id);
    else selected.delete(entry.id);
  }
  render();
});
$("memory-delete-selected").addEventListener("click", () => {
  const byId = new Map(shown().map((e) => [e.id, e]));
  remove([...selected].map((id) => byId.get(id) || { id, title: id, kind: "fact" }));
});
$("memory-load-more").addEventListener("click", () => list("more"));
$("memory-seed-open").addEventListener("click", () => {
  $("seed-dialog").showModal();
  $("seed-title").focus();
});
$("seed-cancel").addEventListener("click", () => $("seed-dialog").close());
$("seed-form").addEventListener("submit", seed);
$("seed-content").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    $("seed-form").requestSubmit();
  }
});

export default {
  topics: ["memory"],
  show() {
    if (!shownOnce) {
      shownOnce = true;
      readFilters();
      list("reset");
    } else {
      refresh();
    }
  },
  changed() {
    refresh();
  },
};
