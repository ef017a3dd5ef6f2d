// The approvals page: polls the queue and the audit log, resolves with the buttons.
// Every value is put in the page with textContent, never as HTML: arguments are written by a model.
"use strict";
(function () {
  const token = new URLSearchParams(location.search).get("token");
  const headers = token ? { Authorization: "Bearer " + token } : {};
  const POLL_MS = 1500;

  function cell(row, text, cls) {
    const td = document.createElement("td");
    td.textContent = text == null ? "" : String(text);
    if (cls) td.className = cls;
    row.appendChild(td);
    return td;
  }

  function duration(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + " s";
    const m = Math.floor(s / 60);
    return m + " min " + (s % 60) + " s";
  }

  function setStatus(text, isError) {
    const status = document.getElementById("status");
    status.textContent = text;
    status.className = isError ? "error" : "";
  }

  async function getJson(path) {
    const response = await fetch(path, { headers, cache: "no-store" });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.status);
    return body;
  }

  async function resolve(id, decision, buttons) {
    buttons.forEach(function (b) { b.disabled = true; });
    try {
      const response = await fetch("/api/tools/approvals/" + encodeURIComponent(id) + "/resolve", {
        method: "POST",
        headers: Object.assign({ "Content-Type": "application/json" }, headers),
        body: JSON.stringify({ decision: decision, via: "page" }),
      });
      const body = await response.json();
      if (!response.ok) throw new Error(body.error || response.status);
      setStatus("resolved " + body.approval.toolName + " as " + body.approval.status, false);
    } catch (e) {
      setStatus("could not resolve: " + e.message, true);
    }
    refresh();
  }

  function renderPending(approvals) {
    const body = document.querySelector("#pending tbody");
    body.replaceChildren();
    document.getElementById("pending-empty").hidden = approvals.length > 0;
    const now = Date.now();
    approvals.forEach(function (a) {
      const row = document.createElement("tr");
      row.dataset.id = a.id;
      cell(row, a.toolName);
      cell(row, a.agentId || "-");
      cell(row, a.argsSummary, "args");
      cell(row, a.reason);
      cell(row, duration(now - a.createdAt));
      cell(row, duration(a.expiresAt - now));
      const actions = cell(row, "");
      const buttons = [];
      [["allow_once", "Allow once", "allow"], ["allow_always", "Allow always", "allow"], ["deny", "Deny", "deny"]]
        .forEach(function (d) {
          const b = document.createElement("button");
          b.type = "button";
          b.textContent = d[1];
          b.className = d[2];
          b.dataset.id = a.id;
          b.dataset.decision = d[0];
          b.addEventListener("click", function () { resolve(a.id, d[0], buttons); });
          buttons.push(b);
          actions.appendChild(b);
        });
      body.appendChild(row);
    });
  }

  function renderAudit(rows) {
    const body = document.querySelector("#audit tbody");
    body.replaceChildren();
    rows.forEach(function (r) {
      const row = document.createElement("tr");
      cell(row, new Date(r.createdAt).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z"));
      cell(row, r.toolName);
      cell(row, r.agentId || "-");
      cell(row, r.phase);
      cell(row, r.decision || "-");
      cell(row, r.isError ? "yes" : "no");
      cell(row, r.argsSummary != null ? r.argsSummary : r.resultSummary, "summary");
      body.appendChild(row);
    });
  }

  async function refresh() {
    try {
      const [pending, audit] = await Promise.all([
        getJson("/api/tools/approvals"),
        getJson("/api/tools/audit?limit=50"),
      ]);
      renderPending(pending.approvals);
      renderAudit(audit.audit);
      document.body.dataset.loaded = "1";
      if (!document.getElementById("status").classList.contains("error")) {
        setStatus("updated " + new Date().toLocaleTimeString(), false);
      }
    } catch (e) {
      setStatus("cannot reach the host: " + e.message, true);
    }
  }

  refresh();
  setInterval(refresh, POLL_MS);
})();
