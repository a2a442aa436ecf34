// rate.html's own part (vocab.raters.page): the rating form's widget (form.js, the notebook form's own code)
// drawn in a page opened from disk, with the session that Python keeps for the notebook kept here, in the browser:
// every save appended to a log in localStorage under the packet's id (never lost on a reload), resume at the first
// unrated row, one tab at a time (a second tab says so and takes over only when asked), and the hand-in as a
// download of ratings.csv. PACKET (the rater, the sample's hash, the rubric, the rows in the rater's order) is
// written into the page by `vocab packet`; nothing is fetched, and nothing else on the disk is read.
/* global PACKET, render */

const LOG_KEY = `vocab-rate:${PACKET.packet_id}:log`; // the append-only log of saves: a JSON array
const OWNER_KEY = `vocab-rate:${PACKET.packet_id}:owner`; // the tab that rates: {tab, at}
const CHANNEL = typeof BroadcastChannel === "function" ? new BroadcastChannel(`vocab-rate:${PACKET.packet_id}`) : null;
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "+00:00"); // as Python's isoformat(timespec="seconds")
const fresh = () => Math.random().toString(36).slice(2, 14);

function readLog() {
  try {
    const got = JSON.parse(localStorage.getItem(LOG_KEY) || "[]");
    return Array.isArray(got) ? got : [];
  } catch (err) { return []; }
}

function latestOf(log) {
  const latest = {};
  for (const r of log) latest[r.blind_id] = r;
  return latest;
}

function readOwner() {
  try { return JSON.parse(localStorage.getItem(OWNER_KEY) || "null"); } catch (err) { return null; }
}

// Per criterion: must the rater grade it on this row? Vocabscapes' check 1 only when the level requires the seed
// word (vocab.raters.form.RatingSession.required, the same rule).
function required(row) {
  const out = {};
  for (const c of PACKET.criteria) {
    if (c.optional && PACKET.rubric.name === "vocabscapes" && c.id === "1") {
      out[c.id] = Boolean((row.settings || {}).require_seed_word);
    } else out[c.id] = !c.optional;
  }
  return out;
}

class Session {
  constructor() {
    this.rows = PACKET.rows;
    this.ids = this.rows.map((r) => r.blind_id);
    this.session = fresh();
    this.refresh();
    this.k = this.nextUnrated(-1);
    this.shown = Date.now();
  }

  refresh() { this.log = readLog(); this.latest = latestOf(this.log); }
  get n() { return this.rows.length; }
  get done() { return this.ids.filter((b) => b in this.latest).length; }

  nextUnrated(after) {
    for (let step = 1; step <= this.n; step++) {
      const i = (after + step) % this.n;
      if (!(this.ids[i] in this.latest)) return i;
    }
    return null;
  }

  goto(k) { this.k = k; this.shown = Date.now(); }
  back() { this.goto(this.k === null ? this.n - 1 : Math.max(this.k - 1, 0)); }
  // l: the next row in order, rated or not (a review moves on); past the last row, the first unrated one (a row
  // skipped before), else the first (RatingSession.next_row, the same rule)
  nextRow() {
    if (this.k !== null && this.k + 1 < this.n) { this.goto(this.k + 1); return; }
    const first = this.nextUnrated(-1);
    this.goto(first !== null ? first : 0);
  }
  skip() {
    if (this.k === null) return;
    const nxt = this.nextUnrated(this.k);
    this.goto(nxt !== null ? nxt : this.k);
  }

  save(checks, note) {
    const row = this.k === null ? null : this.rows[this.k];
    if (row === null) throw new Error("every row is rated: go back (b) to edit one");
    const need = required(row);
    const missing = Object.keys(need).filter((c) => need[c] && !["PASSED", "FAILED"].includes(checks[c]));
    if (missing.length) throw new Error(`grade ${missing.join(", ")} first (PASSED or FAILED)`);
    const kept = {};
    for (const c of Object.keys(need)) kept[c] = need[c] ? (checks[c] || "") : "";
    this.refresh();
    const before = this.latest[row.blind_id];
    if (before && JSON.stringify(before.checks) === JSON.stringify(kept) && before.note === note) {
      const nxt = this.nextUnrated(this.k); // a review that changed nothing: no second record, on to the next row
      this.goto(nxt !== null ? nxt : (this.k + 1) % this.n);
      return "unchanged: nothing new saved";
    }
    const record = {
      blind_id: row.blind_id, rater: PACKET.rater, checks: kept, note, time: now(),
      seconds: Math.round((Date.now() - this.shown) / 100) / 10, rubric_version: PACKET.rubric.version,
      rubric_hash: PACKET.rubric.hash, session: this.session, edit: row.blind_id in this.latest,
      sample_sha256: PACKET.sample_sha256,
    };
    const log = [...this.log, record];
    try {
      localStorage.setItem(LOG_KEY, JSON.stringify(log));
    } catch (err) {
      throw new Error(`this browser did not keep the rating (${err.name}): download ratings.csv now (e) and ` +
        "free some space, or use another browser");
    }
    if (JSON.stringify(readLog()) !== JSON.stringify(log)) throw new Error("this browser did not keep the rating");
    this.refresh();
    this.goto(this.nextUnrated(this.k));
    return this.k === null ? "all rows rated: press e to download ratings.csv" : "saved";
  }

  // ratings.csv: the latest rating of every rated row, in the ratings format (the notebook form's columns), made
  // from the log in the browser's storage, never from this tab's memory
  csv() {
    this.refresh();
    const cols = ["blind_id", ...PACKET.criteria.map((c) => c.column), "note", "rater", "sample_sha256"];
    const cell = (v) => {
      const s = String(v ?? "");
      return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replaceAll('"', '""')}"` : s;
    };
    const lines = [cols.map(cell).join(",")]; // a criterion's name may hold a comma or a quote
    for (const b of this.ids) {
      const r = this.latest[b];
      if (!r) continue;
      lines.push([b, ...PACKET.criteria.map((c) => r.checks[c.id] || ""), r.note, PACKET.rater,
        PACKET.sample_sha256].map(cell).join(","));
    }
    return lines.join("\n") + "\n";
  }

  view(message = "", kind = "ok", dead = false) {
    const row = this.k === null ? null : this.rows[this.k];
    let criteria = [];
    if (row) {
      const need = required(row);
      const given = (this.latest[row.blind_id] || {}).checks || {};
      criteria = PACKET.criteria.map((c) => ({ id: c.id, name: c.name, question: c.question, required: need[c.id],
        value: given[c.id] || "", plain: c.plain, passing: c.passing, failing: c.failing, missing: c.missing }));
    }
    const fields = {};
    if (row) for (const [k, v] of Object.entries(row)) if (k !== "blind_id") fields[k] = v;
    const saved = row ? this.latest[row.blind_id] : null;
    return {
      progress: this.k === null ? `all ${this.n} rows rated — press e to download ratings.csv; b goes back to edit`
        : `row ${this.k + 1} of ${this.n}, ${this.done} done`,
      k: this.k === null ? null : this.k + 1, n: this.n, done: this.done,
      blind_id: row ? row.blind_id : null, fields, criteria, note: saved ? saved.note : "",
      message, message_kind: kind, rated: Boolean(saved), saved_at: saved ? saved.time : "", keys: PACKET.keys,
      finished: row === null, dead, texts: TEXTS, quotes: row ? (PACKET.quotes || {})[row.blind_id] || "" : "",
    };
  }
}

const TEXTS = {
  end: "All rows are rated. Press e to download ratings.csv and send it (see below). Press b to go back and " +
    "edit a row.",
  elsewhere: "This page is open in another tab or window",
  elsewhere_more: "Nothing pressed here is saved while the other tab has it. Go on there, or rate here instead:",
};

function download(name, text, type) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([text], { type }));
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
}

// The widget's model, as anywidget gives it to form.js: get("view"), on("change:view" | "msg:custom"), send(msg).
function pageModel(session, said) {
  const listeners = { "change:view": [], "msg:custom": [] };
  let current = session.view();
  // This page load's own id, never the form's tab id: a duplicated tab (or one opened from this one) shares the
  // form's sessionStorage, so its id, and would take the form without being asked. `formTab`: the id the form
  // knows itself by, what it is told when this page load holds the form.
  const me = fresh();
  let formTab = null;
  const told = (holder) => (holder === me ? formTab : holder || null);
  const emit = (event, payload) => queueMicrotask(() => listeners[event].forEach((f) => f(payload)));
  const setView = (v) => { current = v; emit("change:view"); };
  const claim = () => {
    localStorage.setItem(OWNER_KEY, JSON.stringify({ tab: me, at: Date.now() }));
    if (CHANNEL) CHANNEL.postMessage({ claimed: me });
    session.refresh(); // what another tab saved meanwhile is this one's to show: its rows stay rated
    emit("msg:custom", { owner: formTab });
    setView(session.view("", "ok"));
  };
  if (CHANNEL) {
    CHANNEL.onmessage = (e) => {
      const m = e.data || {};
      if (m.claimed && formTab && m.claimed !== me) emit("msg:custom", { owner: m.claimed });
      if (m.asking && m.asking !== me && (readOwner() || {}).tab === me) CHANNEL.postMessage({ holder: me });
    };
  }

  // A page load asks whether the tab that holds the form is still open (an open tab answers at once, even in the
  // background), and takes the form only if none answers: a reload (the old page is gone) or a tab closed.
  function hello(tab) {
    formTab = tab;
    const owner = readOwner();
    if (!owner || !CHANNEL) { claim(); return; }
    // another tab held it: is it still open? (an open tab answers at once, even in the background)
    let answered = false;
    const listen = (e) => { if ((e.data || {}).holder === owner.tab) answered = true; };
    CHANNEL.addEventListener("message", listen);
    CHANNEL.postMessage({ asking: tab });
    setTimeout(() => {
      CHANNEL.removeEventListener("message", listen);
      if (answered) emit("msg:custom", { owner: owner.tab });
      else claim();
    }, 400);
  }

  function act(msg) {
    const tab = msg.tab;
    if (msg.action === "hello") { hello(tab); return; }
    if (msg.action === "take-tab") { formTab = tab; claim(); return; }
    const owner = readOwner();
    if (msg.action === "ping") {
      emit("msg:custom", { pong: msg.seq, owner: owner ? told(owner.tab) : formTab });
      return;
    }
    if (!owner || owner.tab !== me) { emit("msg:custom", { owner: owner ? told(owner.tab) : null }); return; }
    let message = "", kind = "ok";
    try {
      if (msg.action === "save") message = session.save({ ...(msg.checks || {}) }, String(msg.note || ""));
      else if (msg.action === "back") session.back();
      else if (msg.action === "skip") session.skip();
      else if (msg.action === "next") session.nextRow();
      else if (msg.action === "export") {
        download("ratings.csv", session.csv(), "text/csv");
        message = `downloaded ratings.csv: ${session.done} of ${session.n} rows`;
        said(session.done);
      }
    } catch (err) {
      message = err.message;
      kind = "error";
    }
    setView(session.view(message, kind));
  }

  return {
    get: (name) => (name === "view" ? current : undefined),
    on: (event, f) => { if (listeners[event]) listeners[event].push(f); },
    send: (msg) => queueMicrotask(() => act(msg)),
    session,
  };
}

function start() {
  const host = document.getElementById("form");
  let session;
  try {
    localStorage.setItem(`vocab-rate:probe`, "1");
    localStorage.removeItem(`vocab-rate:probe`);
  } catch (err) {
    host.textContent = `This browser keeps nothing for pages opened from disk (${err.name}): your ratings would be ` +
      "lost. Open rate.html in another browser (Firefox, Chrome, Edge or Safari), not in a private window.";
    return;
  }
  session = new Session();
  const status = document.getElementById("handed");
  const said = (n) => {
    status.textContent = `ratings.csv (${n} rows) went to your browser's downloads folder (usually Downloads). ` +
      "Send that file to the person who gave you this page (if your browser named it ratings (1).csv or so, " +
      "send the newest one).";
  };
  const model = pageModel(session, said);
  render({ model, el: host, atTop: true });
  // a click on the page's own controls (the rubric, the log's button) leaves the keys with the form
  document.addEventListener("click", (e) => {
    const root = host.querySelector(".vocab-form");
    if (root && !root.contains(e.target) && !window.getSelection().toString()) {
      setTimeout(() => root.focus({ preventScroll: true }), 0);
    }
  });
  // closing the tab (or reloading it) with grades or a note on a row not saved asks first: the browser's own question
  window.addEventListener("beforeunload", (e) => {
    const root = host.querySelector(".vocab-form");
    if (root && root.dataset.unsaved === "1") { e.preventDefault(); e.returnValue = ""; }
  });
  document.getElementById("log").onclick = () => {
    session.refresh();
    download(`ratings_log_${PACKET.rater}.jsonl`, session.log.map((r) => JSON.stringify(r)).join("\n") + "\n",
      "application/json");
  };
}

start();
