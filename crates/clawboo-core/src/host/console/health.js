// The health view: the database file, schema versions, row counts and sizes, live MCP sessions
// per server, and the embedding provider in use. Re-read on any change (the counts move with
// every table).
"use strict";

import { get, el, reconcile, bytes, orDash, fillDl, serial, sayError, loaded } from "./api.js";

const $ = (id) => document.getElementById(id);

function pairs(object) {
  return Object.entries(object && typeof object === "object" ? object : {}).sort((a, b) => a[0].localeCompare(b[0]));
}

function table(tbody, object, format) {
  reconcile(tbody, pairs(object), (p) => p[0], ([name, value]) =>
    el("tr", { data: { name } }, el("th", { scope: "row", text: name }), el("td", { class: "num", text: format(value) })));
}

const load = serial(async () => {
  try {
    const data = await get("/api/health");
    const db = data.database || {};
    fillDl($("health-database"), [
      ["File", orDash(db.path)],
      ["Size", bytes(db.sizeBytes)],
      ["Write-ahead log", bytes(db.walBytes)],
    ]);
    const emb = data.embeddings || {};
    fillDl($("health-embeddings"), [
      ["Provider", orDash(emb.provider)],
      ["Model", orDash(emb.model)],
      ["Available", emb.available ? "yes" : "no: searches fall back to full text"],
    ]);
    table($("health-schema"), data.schema, orDash);
    table($("health-rows"), data.rows, (n) => (typeof n === "number" ? n.toLocaleString() : orDash(n)));
    table($("health-sessions"), data.sessions, orDash);
    loaded();
  } catch (e) {
    sayError("could not read the health", e);
  }
});

$("health-refresh").addEventListener("click", load);

export default {
  topics: "*",
  show: load,
  changed: load,
};
