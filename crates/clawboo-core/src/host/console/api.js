// Shared helpers of the operator console: REST calls, the event stream, DOM building, paging.
//
// SAFETY: every value this console shows (titles, posts, facts, arguments, even team ids) was
// written by a model or an agent and is hostile. The DOM is built with createElement and
// textContent only; never innerHTML, outerHTML, insertAdjacentHTML or document.write with data.
// No href or src is built from data, except "#/..." routes whose parts go through
// encodeURIComponent (see route()). The token from this page's ?token= goes only into the
// Authorization header, never into another URL.
"use strict";

const token = new URLSearchParams(location.search).get("token");

function authHeaders() {
  return token ? { Authorization: "Bearer " + token } : {};
}

/** An answer other than 2xx, or no answer at all (status 0). */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** `?a=1&b=2` from an object, leaving out empty, null and undefined values. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text ? "?" + text : "";
}

/** One path segment of an API URL (ids and team names are data). */
export function seg(value) {
  return encodeURIComponent(String(value));
}

async function request(method, path, body) {
  const headers = authHeaders();
  const init = { method, headers, cache: "no-store" };
  // The contract wants this type on every mutation, a DELETE without a body included.
  if (method !== "GET") headers["Content-Type"] = "application/json";
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, "cannot reach the host");
  }
  let data = null;
  try {
    data = await response.json();
  } catch (e) {
    data = null;
  }
  if (!response.ok) {
    let message = data && typeof data.error === "string" ? data.error : "HTTP " + response.status;
    if (response.status === 401) message += " (open the console with the URL that serve printed, ?token=…)";
    throw new ApiError(response.status, message);
  }
  return data || {};
}

export const get = (path, params) => request("GET", path + query(params));
export const post = (path, body) => request("POST", path, body);
export const del = (path) => request("DELETE", path);

// ---- the status line ----

/** Says what happened in the page's one status line (role=status, read out by screen readers). */
export function say(text, isError) {
  const status = document.getElementById("status");
  delete status.dataset.initial;
  status.textContent = text;
  status.classList.toggle("error", Boolean(isError));
}

/** Says why an action failed. */
export function sayError(what, error) {
  say(what + ": " + (error && error.message ? error.message : String(error)), true);
}

/** Marks the page as showing data (tests wait for body[data-loaded]); ends the first "loading…". */
export function loaded() {
  document.body.dataset.loaded = "1";
  const status = document.getElementById("status");
  if (status.dataset.initial !== undefined) {
    delete status.dataset.initial;
    status.textContent = "";
  }
}

// ---- DOM building (text only) ----

/** A `#/...` route from data parts, each part URI-encoded. The only kind of href built from data. */
export function route(...parts) {
  return "#/" + parts.map((p) => encodeURIComponent(String(p))).join("/");
}

/**
 * An element. `props` may hold: class, testid, text, title, type, href (must be a "#" route),
 * id, label (aria-label), data (an object of data-* values), hidden, disabled, onclick.
 * Children are nodes or strings (strings become text nodes); null and undefined are skipped.
 */
export function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    switch (name) {
      case "class": node.className = value; break;
      case "testid": node.dataset.testid = value; break;
      case "text": node.textContent = String(value); break;
      case "title": node.title = String(value); break;
      case "label": node.setAttribute("aria-label", String(value)); break;
      case "data":
        for (const [key, v] of Object.entries(value)) if (v !== undefined && v !== null) node.dataset[key] = String(v);
        break;
      case "href":
        if (!String(value).startsWith("#")) throw new Error("href must be a # route");
        node.setAttribute("href", value);
        break;
      case "onclick": node.addEventListener("click", value); break;
      case "type": case "id": case "hidden": case "disabled": case "checked": case "value": case "scope":
        node[name] = value;
        break;
      default: throw new Error("el: unknown prop " + name);
    }
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  return node;
}

const LONG_TEXT = 200;

/** A text block; a long one shows its start and opens (as a <details>) to the whole text. */
export function longText(text, cls) {
  const value = orDash(text);
  if (value.length <= LONG_TEXT) return el("div", { class: cls, text: value });
  return el("details", { class: cls },
    el("summary", { text: value.slice(0, LONG_TEXT) + "…" }),
    el("div", { text: value }));
}

/** `<dl>` contents from [term, value] pairs. */
export function fillDl(dl, pairs) {
  dl.replaceChildren(...pairs.flatMap(([term, value]) => [el("dt", { text: term }), el("dd", { text: value })]));
}

/**
 * Makes `container`'s children match `items` in order, keyed by `key(item)`: a row whose item
 * did not change is kept as it is (no flicker, no lost focus or selection), a changed one is
 * replaced in place, new ones are inserted where they belong and gone ones removed. So a live
 * update never rebuilds a list or moves the scroll position.
 */
const signatures = new WeakMap();

export function reconcile(container, items, key, render) {
  const existing = new Map();
  for (const child of Array.from(container.children)) {
    if (child.dataset.key !== undefined) existing.set(child.dataset.key, child);
    else child.remove();
  }
  const seen = new Set();
  let previous = null;
  for (const item of items) {
    const k = String(key(item));
    if (seen.has(k)) continue;
    seen.add(k);
    const signature = JSON.stringify(item);
    let node = existing.get(k);
    if (!node || signatures.get(node) !== signature) {
      const fresh = render(item);
      fresh.dataset.key = k;
      signatures.set(fresh, signature);
      if (node) {
        const focusedId = node.contains(document.activeElement) ? document.activeElement.dataset.testid : null;
        node.replaceWith(fresh);
        if (focusedId) {
          const again = fresh.querySelector("[data-testid=" + CSS.escape(focusedId) + "]");
          if (again) again.focus();
        }
      }
      node = fresh;
    }
    const wanted = previous ? previous.nextSibling : container.firstChild;
    if (node !== wanted) container.insertBefore(node, wanted);
    previous = node;
  }
  for (const [k, node] of existing) if (!seen.has(k)) node.remove();
}

// ---- formatting ----

function pad(n) {
  return String(n).padStart(2, "0");
}

/** A timestamp (ms since the epoch) as local `YYYY-MM-DD HH:MM:SS`. */
export function time(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "-";
  const d = new Date(ms);
  return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
    pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
}

/** A span of ms as `12 s`, `5 min`, `3 h`, `2 d`. */
export function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min";
  if (s < 86400) return Math.floor(s / 3600) + " h";
  return Math.floor(s / 86400) + " d";
}

/** A span of text that shows how long ago `ms` was and keeps saying so (see tickAges). */
export function age(ms, suffix) {
  const node = el("span", { class: "age", title: time(ms), data: { ts: ms, suffix: suffix || "" } });
  node.textContent = duration(Date.now() - ms) + (suffix || "");
  return node;
}

/** Re-words every age span (a clock, not a fetch). */
export function tickAges(root) {
  const now = Date.now();
  for (const node of (root || document).querySelectorAll("span.age")) {
    node.textContent = duration(now - Number(node.dataset.ts)) + node.dataset.suffix;
  }
}

export function bytes(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return (unit === 0 ? String(value) : value.toFixed(1)) + " " + units[unit];
}

/** A value or a dash when it is missing. */
export function orDash(value) {
  return value === undefined || value === null || value === "" ? "-" : String(value);
}

// ---- paging ----

export const PAGE = 50;
const MAX_PAGE = 200;

/**
 * A list read page by page with `nextCursor`. `fetchPage(cursor, limit)` answers
 * `{ items, nextCursor }`. `reset` reads the first page, `more` the next one, and `refresh`
 * reads again from the start as many rows as are shown (in pages of at most 200), which is what
 * a live update needs. A stale answer (an older request finishing after a newer one) is dropped.
 */
export class Pager {
  constructor(fetchPage, key) {
    this.fetchPage = fetchPage;
    this.key = key;
    this.items = [];
    this.cursor = null;
    this.generation = 0;
  }

  async read(want) {
    let items = [];
    let cursor = null;
    do {
      const limit = Math.min(MAX_PAGE, Math.max(PAGE, want - items.length));
      const page = await this.fetchPage(cursor, limit);
      items = items.concat(page.items || []);
      cursor = page.nextCursor || null;
    } while (cursor && items.length < want);
    return { items, cursor };
  }

  /** Reads the first page; false when a newer request overtook this one. */
  async reset() {
    const generation = ++this.generation;
    const page = await this.read(PAGE);
    if (generation !== this.generation) return false;
    this.items = page.items;
    this.cursor = page.cursor;
    return true;
  }

  async refresh() {
    const generation = ++this.generation;
    const page = await this.read(Math.max(PAGE, this.items.length));
    if (generation !== this.generation) return false;
    this.items = page.items;
    this.cursor = page.cursor;
    return true;
  }

  async more() {
    if (!this.cursor) return false;
    const generation = ++this.generation;
    const page = await this.fetchPage(this.cursor, PAGE);
    if (generation !== this.generation) return false;
    const have = new Set(this.items.map(this.key));
    this.items = this.items.concat((page.items || []).filter((item) => !have.has(this.key(item))));
    this.cursor = page.nextCursor || null;
    return true;
  }
}

/**
 * Wraps an async job so that calls never overlap: a call made while the job runs makes it run
 * once more afterwards (many live events in a burst cost at most two fetches).
 */
export function serial(job) {
  let running = false;
  let again = false;
  return async function run() {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await job();
      } while (again);
    } finally {
      running = false;
    }
  };
}

// ---- the event stream ----

const QUIET_MS = 45000; // the host sends a keep-alive every 15 s; silence this long means a dead link

/**
 * Reads `/api/events` with fetch and a stream reader (so the bearer header is sent), calls
 * `onChange(topics)` for every `change` event, and reconnects with a growing delay (1 s doubling
 * to 30 s, reset once connected). After each (re)connection it calls `onChange(null)`: changes
 * made while the link was down were missed, so every shown view re-reads. `onState(state, text)`
 * reports connecting / live / retrying.
 */
export function streamEvents(onChange, onState) {
  let delay = 1000;

  async function connect() {
    onState("connecting", "connecting…");
    const abort = new AbortController();
    let quiet = null;
    const arm = () => {
      clearTimeout(quiet);
      quiet = setTimeout(() => abort.abort(), QUIET_MS);
    };
    let failure = "the event stream ended";
    try {
      arm();
      const response = await fetch("/api/events", { headers: authHeaders(), cache: "no-store", signal: abort.signal });
      if (!response.ok || !response.body) {
        let message = "HTTP " + response.status;
        try {
          const data = await response.json();
          if (data && typeof data.error === "string") message = data.error;
        } catch (e) { /* not JSON */ }
        throw new Error(message);
      }
      onState("live", "live");
      delay = 1000;
      onChange(null);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      let event = "";
      let data = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        arm();
        buffer += value;
        let newline;
        while ((newline = buffer.indexOf("\n")) >= 0) {
          let line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line.endsWith("\r")) line = line.slice(0, -1);
          if (line === "") {
            if ((event || "message") === "change" && data.length) dispatch(data.join("\n"));
            event = "";
            data = [];
          } else if (!line.startsWith(":")) {
            const colon = line.indexOf(":");
            const field = colon < 0 ? line : line.slice(0, colon);
            let text = colon < 0 ? "" : line.slice(colon + 1);
            if (text.startsWith(" ")) text = text.slice(1);
            if (field === "event") event = text;
            else if (field === "data") data.push(text);
          }
        }
      }
    } catch (e) {
      if (abort.signal.aborted) failure = "the event stream went quiet";
      else if (e instanceof TypeError) failure = "cannot reach the host";
      else failure = e.message || String(e);
    } finally {
      clearTimeout(quiet);
    }
    const wait = Math.round(delay * (0.8 + Math.random() * 0.4));
    onState("retrying", "offline (" + failure + "); retrying in " + Math.round(wait / 1000) + " s");
    delay = Math.min(delay * 2, 30000);
    setTimeout(connect, wait);
  }

  function dispatch(text) {
    let topics = null;
    try {
      const parsed = JSON.parse(text);
      if (parsed && Array.isArray(parsed.topics)) topics = parsed.topics.map(String);
    } catch (e) { /* an unreadable event: treat it as "anything may have changed" */ }
    onChange(topics);
  }

  connect();
}
