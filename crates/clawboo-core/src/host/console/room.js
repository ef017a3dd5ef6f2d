// The team room view: the rooms, one room's posts in seq order (newest at the bottom, older ones
// on demand), agents' posts marked as narration, and a composer for the operator.
"use strict";

import { get, post, seg, el, reconcile, age, time, orDash, serial, say, sayError, route, loaded } from "./api.js";

const KINDS = { peer: "agent", system: "system", user: "operator" };
const PAGE = 100;
const CATCH_UP = 200;
const NEAR_BOTTOM_PX = 40;

const $ = (id) => document.getElementById(id);
let team = null;
let posts = [];
let rooms = [];
let opening = false; // the open room's first page is on its way: catching up waits for it
let missed = false; // a change came while it was on its way

function lastSeq() {
  return posts.length ? posts[posts.length - 1].seq : 0;
}

function roomLink(r) {
  const link = el("a", { href: route("room", r.teamId), testid: "room-link", data: { team: r.teamId } },
    el("span", { class: "room-name", text: orDash(r.teamId) }),
    el("span", { class: "muted" }, String(r.posts) + (r.posts === 1 ? " post" : " posts"), r.lastAt ? " · " : "", r.lastAt ? age(r.lastAt, " ago") : null));
  if (r.teamId === team) link.setAttribute("aria-current", "true");
  return el("li", {}, link);
}

function renderRooms() {
  const list = rooms.slice();
  if (team !== null && !list.some((r) => r.teamId === team)) list.push({ teamId: team, posts: posts.length, lastAt: null });
  // The open room is part of each row's look, so it goes into the row's key.
  reconcile($("room-list"), list.map((r) => ({ ...r, open: r.teamId === team })), (r) => r.teamId, roomLink);
}

function postEl(p) {
  const kind = Object.prototype.hasOwnProperty.call(KINDS, p.kind) ? p.kind : "peer";
  return el("article", { class: "post kind-" + kind, testid: "room-post", data: { seq: p.seq, kind: p.kind } },
    el("header", {},
      el("span", { class: "pill", text: KINDS[kind], title: kind === "peer" ? "an agent's post: narration, not an instruction" : null }), " ",
      el("span", { class: "who", text: orDash(p.authorAgentId) }), " ",
      el("span", { class: "muted", text: "#" + p.seq + " · " + time(p.createdAt) })),
    el("p", { class: "text", text: orDash(p.body) }));
}

function renderPosts() {
  reconcile($("room-post-list"), posts, (p) => p.seq, postEl);
  $("room-empty").hidden = team === null || posts.length > 0;
  $("room-load-older").hidden = !(posts.length && posts[0].seq > 1);
}

function merge(more) {
  const bySeq = new Map(posts.map((p) => [p.seq, p]));
  for (const p of more) bySeq.set(p.seq, p);
  posts = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

const loadRooms = serial(async () => {
  try {
    const data = await get("/api/teamchat");
    rooms = Array.isArray(data.teams) ? data.teams : [];
    renderRooms();
    if (team === null && rooms.length) {
      history.replaceState(null, "", route("room", rooms[0].teamId));
      open(rooms[0].teamId);
    }
  } catch (e) {
    sayError("could not list the rooms", e);
  }
});

/** Reads the posts after the last one shown; keeps the view at the bottom if it was there. */
const catchUp = serial(async () => {
  const room = team;
  if (room === null) return;
  if (opening) {
    missed = true;
    return;
  }
  const box = $("room-posts");
  try {
    for (;;) {
      // An empty room has no seq to start after: ask for its newest posts.
      const data = await get("/api/teamchat/" + seg(room), lastSeq() ? { sinceSeq: lastSeq(), limit: CATCH_UP } : { limit: CATCH_UP });
      if (room !== team) return;
      const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < NEAR_BOTTOM_PX;
      const fresh = Array.isArray(data.posts) ? data.posts : [];
      merge(fresh);
      renderPosts();
      if (atBottom) box.scrollTop = box.scrollHeight;
      if (fresh.length < CATCH_UP) break;
    }
  } catch (e) {
    sayError("could not read the room", e);
  }
});

async function open(name) {
  if (name === team) {
    catchUp();
    return;
  }
  team = name;
  posts = [];
  $("room-title").textContent = "Team room: " + name;
  $("room-post-list").replaceChildren();
  $("room-input").disabled = false;
  $("room-send").disabled = false;
  renderRooms();
  opening = true;
  missed = false;
  $("room-post-list").setAttribute("aria-busy", "true");
  try {
    const data = await get("/api/teamchat/" + seg(name), { limit: PAGE });
    if (name !== team) return;
    merge(Array.isArray(data.posts) ? data.posts : []);
    renderPosts();
    const box = $("room-posts");
    box.scrollTop = box.scrollHeight;
    loaded();
  } catch (e) {
    sayError("could not read the room", e);
  } finally {
    if (name === team) {
      $("room-post-list").removeAttribute("aria-busy");
      opening = false;
      if (missed) catchUp();
    }
  }
}

async function older() {
  const room = team;
  if (room === null || !posts.length) return;
  const box = $("room-posts");
  const list = $("room-post-list");
  list.setAttribute("aria-busy", "true");
  try {
    const data = await get("/api/teamchat/" + seg(room), { beforeSeq: posts[0].seq, limit: PAGE });
    if (room !== team) return;
    const height = box.scrollHeight;
    const top = box.scrollTop;
    merge(Array.isArray(data.posts) ? data.posts : []);
    renderPosts();
    box.scrollTop = top + (box.scrollHeight - height);
  } catch (e) {
    sayError("could not read older posts", e);
  } finally {
    list.removeAttribute("aria-busy");
  }
}

async function send(event) {
  event.preventDefault();
  const input = $("room-input");
  const body = input.value.trim();
  const room = team;
  if (!body || room === null) return;
  $("room-send").disabled = true;
  try {
    await post("/api/teamchat/" + seg(room), { body });
    input.value = "";
    say("posted to " + room);
    await catchUp();
    const box = $("room-posts");
    box.scrollTop = box.scrollHeight;
  } catch (e) {
    sayError("could not post", e);
  } finally {
    $("room-send").disabled = false;
  }
}

$("room-form").addEventListener("submit", send);
$("room-input").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    $("room-form").requestSubmit();
  }
});
$("room-load-older").addEventListener("click", older);
$("room-open-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const name = $("room-open-team").value.trim();
  if (name) location.hash = route("room", name);
});

export default {
  topics: ["teamchat"],
  show(args) {
    if (args[0] !== undefined) open(args[0]);
    else if (team !== null) {
      history.replaceState(null, "", route("room", team));
      catchUp();
    }
    loadRooms();
  },
  changed() {
    loadRooms();
    catchUp();
  },
};
