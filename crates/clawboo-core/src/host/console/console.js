// The console's entry point: the hash router, the live event stream, the approvals badge.
// Each view module exports { topics, show(args), changed(topics) }: show opens it (reading
// what it needs), changed re-reads only what it shows after a `change` event on one of its
// topics (topics null = anything may have changed, e.g. after a reconnect).
"use strict";

import { streamEvents, tickAges } from "./api.js";
import board from "./board.js";
import room from "./room.js";
import memory from "./memory.js";
import approvals from "./approvals.js";
import health from "./health.js";

const views = { board, room, memory, approvals, health };
const titles = { board: "Board", room: "Team room", memory: "Memory", approvals: "Approvals", health: "Health" };
let current = null;

function decode(part) {
  try {
    return decodeURIComponent(part);
  } catch (e) {
    return part;
  }
}

/** `#/room/<team>` → { name: "room", args: ["<team>"] }; anything unknown is the board. */
function parseRoute() {
  let hash = location.hash.replace(/^#\/?/, "");
  if (!hash && location.pathname === "/approvals") hash = "approvals";
  const parts = hash.split("/").map(decode);
  const name = Object.prototype.hasOwnProperty.call(views, parts[0]) ? parts[0] : "board";
  return { name, args: parts.slice(1).filter((p) => p !== "") };
}

function onRoute() {
  const { name, args } = parseRoute();
  for (const key of Object.keys(views)) {
    document.getElementById("view-" + key).hidden = key !== name;
    const link = document.getElementById("nav-" + key);
    if (key === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.body.dataset.view = name;
  document.title = "Clawboo · " + titles[name];
  current = views[name];
  current.show(args);
}

function onChange(topics) {
  approvals.badge(topics);
  if (!current) return;
  const wanted = current.topics;
  if (topics === null || wanted === "*" || topics.some((t) => wanted.includes(t))) current.changed(topics);
}

function onState(state, text) {
  const live = document.getElementById("live");
  live.dataset.state = state;
  live.textContent = text;
}

window.addEventListener("hashchange", onRoute);
onRoute();
approvals.badge(null);
streamEvents(onChange, onState);
setInterval(() => tickAges(document.getElementById("main")), 15000);
