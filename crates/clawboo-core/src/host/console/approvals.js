// The approvals view (seed 003's page, carried over): the pending queue with Allow once / Allow
// always / Deny, the tool-call audit log with filters and paging, and the operator actions (who
// did what). Also the pending count shown in the navigation from every view.
"use strict";

import { get, post, seg, el, reconcile, age, time, duration, orDash, longText, Pager, serial, say, sayError, loaded } from "./api.js";

const DECISIONS = [["allow_once", "Allow once", "allow", "approve-once"], ["allow_always", "Allow always", "allow", "approve-always"], ["deny", "Deny", "deny", "deny"]];

const $ = (id) => document.getElementById(id);
const auditFilters = { toolName: "", agent: "", decision: "", since: "", until: "" };
let shownOnce = false;

function visible() {
  return document.body.dataset.view === "approvals";
}

function setBadge(count) {
  const badge = $("nav-approvals-count");
  badge.hidden = count === 0;
  badge.textContent = String(count);
  $("nav-approvals").setAttribute("aria-label", count ? "Approvals, " + count + " waiting" : "Approvals");
}

// ---- the pending queue ----

function expiresText(expiresAt) {
  const left = expiresAt - Date.now();
  return left > 0 ? duration(left) : "expired";
}

function pendingRow(a) {
  const buttons = [];
  const row = el("tr", { testid: "approval-row", data: { id: a.id } },
    el("td", { class: "name", text: orDash(a.toolName) }),
    el("td", { class: "name", text: orDash(a.agentId) }),
    el("td", { class: "code" }, longText(a.argsSummary, "text")),
    el("td", { text: orDash(a.reason) }),
    el("td", {}, age(a.createdAt)),
    el("td", {}, el("span", { class: "expires", data: { ts: a.expiresAt }, text: expiresText(a.expiresAt) })),
    el("td", { class: "actions" }, ...DECISIONS.map(([decision, text, cls, testid]) => {
      const button = el("button", { type: "button", class: cls, testid, text, data: { id: a.id, decision }, onclick: () => resolve(a, decision, buttons) });
      buttons.push(button);
      return button;
    })));
  if (a.expiresAt <= Date.now()) for (const b of buttons) b.disabled = true;
  return row;
}

const loadPending = serial(async () => {
  try {
    const data = await get("/api/tools/approvals");
    const approvals = Array.isArray(data.approvals) ? data.approvals : [];
    setBadge(approvals.length);
    if (!visible()) return;
    reconcile($("approvals-pending"), approvals, (a) => a.id, pendingRow);
    $("approvals-empty").hidden = approvals.length > 0;
    loaded();
  } catch (e) {
    sayError("could not read the approvals", e);
  }
});

async function resolve(approval, decision, buttons) {
  for (const b of buttons) b.disabled = true;
  try {
    const data = await post("/api/tools/approvals/" + seg(approval.id) + "/resolve", { decision });
    const row = data.approval || {};
    if (row.status === decision) say("resolved " + orDash(row.toolName) + " as " + decision);
    else say(orDash(row.toolName) + " was already " + orDash(row.status) + "; nothing changed", true);
  } catch (e) {
    sayError("could not resolve", e);
    for (const b of buttons) b.disabled = false;
  }
  loadPending();
  loadAudit();
  loadActions();
}

/** The countdowns tick every second while the view is open (a clock, not a fetch). */
setInterval(() => {
  if (!visible()) return;
  const now = Date.now();
  for (const span of $("approvals-pending").querySelectorAll("span.expires")) {
    const at = Number(span.dataset.ts);
    span.textContent = expiresText(at);
    if (at <= now) for (const b of span.closest("tr").querySelectorAll("button")) b.disabled = true;
  }
}, 1000);

// ---- the audit log ----

const audit = new Pager(async (cursor, limit) => {
  const data = await get("/api/tools/audit", { ...auditFilters, limit, cursor });
  return { items: data.audit, nextCursor: data.nextCursor };
}, (r) => r.id);

function auditRow(r) {
  return el("tr", { testid: "audit-row", data: { id: r.id } },
    el("td", { class: "nowrap", text: time(r.createdAt) }),
    el("td", { class: "name", text: orDash(r.toolName) }),
    el("td", { class: "name", text: orDash(r.agentId) }),
    el("td", { text: orDash(r.phase) }),
    el("td", { class: "name", text: orDash(r.decision) }),
    el("td", { text: r.isError ? "yes" : "no", class: r.isError ? "warn" : null }),
    el("td", { class: "code" }, longText(r.argsSummary != null ? r.argsSummary : r.resultSummary, "text")));
}

async function auditPage(how) {
  try {
    if (!(await audit[how]())) return;
    reconcile($("audit-rows"), audit.items, (r) => r.id, auditRow);
    $("audit-empty").hidden = audit.items.length > 0;
    $("audit-load-more").hidden = !audit.cursor;
  } catch (e) {
    sayError("could not read the audit log", e);
  }
}

const loadAudit = serial(() => auditPage("refresh"));

function msOf(input) {
  if (!input.value) return "";
  const ms = new Date(input.value).getTime();
  return Number.isFinite(ms) ? ms : "";
}

// ---- operator actions ----

const actions = new Pager(async (cursor, limit) => {
  const data = await get("/api/operator/actions", { limit, cursor });
  return { items: data.actions, nextCursor: data.nextCursor };
}, (a) => a.id);

function actionRow(a) {
  return el("tr", { testid: "action-row", data: { id: a.id } },
    el("td", { class: "nowrap", text: time(a.createdAt) }),
    el("td", { class: "name", text: orDash(a.actor) }),
    el("td", { class: "name", text: orDash(a.action) }),
    el("td", { class: "code", text: orDash(a.target) }));
}

async function actionsPage(how) {
  try {
    if (!(await actions[how]())) return;
    reconcile($("actions-rows"), actions.items, (a) => a.id, actionRow);
    $("actions-empty").hidden = actions.items.length > 0;
    $("actions-load-more").hidden = !actions.cursor;
  } catch (e) {
    sayError("could not read the operator actions", e);
  }
}

const loadActions = serial(() => actionsPage("refresh"));

// ---- wiring ----

$("audit-filters").addEventListener("submit", (e) => {
  e.preventDefault();
  auditFilters.toolName = $("audit-tool").value.trim();
  auditFilters.agent = $("audit-agent").value.trim();
  auditFilters.decision = $("audit-decision").value;
  auditFilters.since = msOf($("audit-since"));
  auditFilters.until = msOf($("audit-until"));
  auditPage("reset");
});
$("audit-filters").addEventListener("reset", (e) => {
  e.preventDefault();
  for (const id of ["audit-tool", "audit-agent", "audit-decision", "audit-since", "audit-until"]) $(id).value = "";
  $("audit-filters").requestSubmit();
});
$("audit-decision").addEventListener("change", () => $("audit-filters").requestSubmit());
$("audit-load-more").addEventListener("click", () => auditPage("more"));
$("actions-load-more").addEventListener("click", () => actionsPage("more"));

export default {
  topics: ["approvals", "audit", "operator"],
  show() {
    loadPending();
    if (!shownOnce) {
      shownOnce = true;
      auditPage("reset");
      actionsPage("reset");
    } else {
      loadAudit();
      loadActions();
    }
  },
  changed(topics) {
    if (topics === null || topics.includes("approvals")) loadPending();
    if (topics === null || topics.includes("audit")) loadAudit();
    if (topics === null || topics.includes("operator")) loadActions();
  },
  /** Keeps the navigation's pending count true while another view is open. */
  badge(topics) {
    if (!visible() && (topics === null || topics.includes("approvals"))) loadPending();
  },
};
