// The blind rating form (vocab.raters.form.form_widget): draws the session's `view`, takes the rater's keys,
// and sends each action to Python, which validates it, writes the audit trail and sends the next view.
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// A list is shown one chip per item, never joined by commas: an item that holds a comma stays one item, and a
// space at either end of an item is shown (␠) so it can be counted.
function show(value) {
  if (Array.isArray(value)) {
    const list = el("span", "vf-chips");
    for (const item of value) {
      const text = String(item ?? "");
      const lead = text.match(/^\s*/)[0].length, trail = text.length - text.trimEnd().length;
      const chip = el("span", "vf-chip", "␠".repeat(lead) + text.trim() + "␠".repeat(Math.min(trail, text.length - lead)));
      if (lead || trail) chip.title = "this item has a space at its start or end";
      list.append(chip);
    }
    list.append(el("span", "vf-count", value.length === 1 ? "(1 item)" : `(${value.length} items)`));
    return list;
  }
  if (value && typeof value === "object") {
    // a level's settings in the rater's words, the word limit (what check 10 asks) first; each item kept on one line
    const line = el("span", "vf-settings");
    const known = Object.keys(SETTINGS).filter((k) => k in value);
    const items = [...known.map((k) => SETTINGS[k](value[k])),
      ...Object.keys(value).filter((k) => !(k in SETTINGS)).map((k) => `${k.replaceAll("_", " ")}: ${value[k]}`)];
    items.forEach((text, i) => { if (i) line.append(" · "); line.append(el("span", "vf-setting", text)); });
    return line;
  }
  return el("span", "", String(value ?? ""));
}

const SETTINGS = {
  max_sentence_words: (v) => `word limit: at most ${v} words`,
  require_seed_word: (v) => (v ? "the seed word must be used" : "the seed word need not be used"),
  n_words: (v) => `${v} words to use`,
  min_word_length: (v) => `words of ${v} letters or more`,
  seed_length: (v) => `seed word of ${v} letters`,
  min_zipf: (v) => `words at least as common as ${v} on the Zipf scale`,
};

// This browser tab's name for itself (kept across reloads of the tab, not shared with other tabs): the kernel answers
// one tab at a time, and a second tab is refused until it takes the form over.
const TAB = (() => {
  const fresh = () => Math.random().toString(36).slice(2, 12);
  try {
    let t = sessionStorage.getItem("vocab-form-tab");
    if (!t) { t = fresh(); sessionStorage.setItem("vocab-form-tab", t); }
    return t;
  } catch (err) { return fresh(); }
})();

const PING_EVERY_MS = 2000, SILENT_AFTER_MS = 10000;

// atTop: the page (rate.html) opens at its title; the form in a notebook brings itself into sight
function render({ model, el: host, atTop = false }) {
  const root = el("div", "vocab-form");
  root.tabIndex = 0;
  // The form's keys stop at the form (stopPropagation below), so JupyterLab's command-mode keys (b inserts a
  // cell, j/k select cells, ...) do not fire; everything else, Ctrl+S included, reaches JupyterLab.
  host.appendChild(root);
  // a screen reader hears the progress and each message here: one element kept across redraws (a redrawn one is not
  // announced), visually hidden
  const live = el("div", "vf-live");
  live.setAttribute("role", "status");
  live.setAttribute("aria-live", "polite");
  host.appendChild(live);
  let shownFor, values = {}, saved = {}, savedNote = "", focus = 0, note = "", confirmLeave = "";
  // The kernel answers every ping; a form whose kernel is gone, or whose session another tab took over, says so
  // over the form at once instead of looking live until the next save.
  // pings not yet answered, by number -> when sent: the form is disconnected when one has waited 10 s (a background
  // tab whose timer the browser slows sends fewer pings, each answered at once: no false alarm)
  let seq = 0, disconnected = false;
  const pending = new Map();
  let showHelp = false, quiet = false; // quiet: the last message was read (a key was pressed since it came)
  let wrongKey = ""; // the last key pressed that is none of the form's: the head says which keys work
  // owner: the tab the kernel answers; blurred: the form has lost the keyboard; scrollWanted: show the focused check;
  // untouched: no key or tap yet on a page that opens at its top (nothing scrolls it until then)
  let owner = null, blurred = false, untouched = atTop, scrollWanted = !atTop;
  let listTop = 0; // how far the list of checks is scrolled inside the form, kept across redraws of one row
  const elsewhere = () => owner !== null && owner !== TAB;

  const view = () => model.get("view");
  const text = (name, otherwise) => (view().texts && view().texts[name]) || otherwise; // rate.html's own words
  const graded = () => view().criteria.filter((c) => c.required);
  const send = (msg) => { try { model.send({ ...msg, tab: TAB }); } catch (err) { /* the kernel is gone: the overlay says so */ } };
  const dead = () => view().dead || disconnected || elsewhere();
  const dirty = () => !view().finished &&
    (note !== savedNote || Object.keys(values).some((id) => (values[id] || "") !== (saved[id] || "")));
  const save = () => {
    if (dead()) return;
    confirmLeave = ""; // Enter answers the question: what Python says about the save is shown, not the question
    send({ action: "save", checks: values, note });
  };
  // b and s leave the row: with unsaved grades or a note on it, the first press asks, the second leaves
  function leave(action) {
    if (dead()) return;
    if (dirty() && confirmLeave !== action) {
      confirmLeave = action;
      draw();
      return;
    }
    confirmLeave = "";
    send({ action });
  }

  function move(step) {
    const crit = view().criteria;
    let i = focus;
    for (let n = 0; n < crit.length; n++) {
      i = Math.min(Math.max(i + step, 0), crit.length - 1);
      if (crit[i].required) break;
    }
    if (crit[i] && crit[i].required) focus = i;
    scrollWanted = true;
  }

  // a: PASSED for every required check not graded yet (the rater's "the rest pass"); r: FAILED for them ("the rest
  // fail", as on an answer with no sentence at all); focus on the last one
  function gradeRest(verdict) {
    const open = graded().filter((c) => !values[c.id]);
    if (!open.length || dead()) return;
    for (const c of open) values[c.id] = verdict;
    focus = view().criteria.findIndex((c) => c.id === open[open.length - 1].id);
    confirmLeave = "";
    quiet = true;
    scrollWanted = true;
    draw();
  }

  function grade(verdict) {
    const c = view().criteria[focus];
    if (!c || !c.required || dead()) return;
    confirmLeave = "";
    quiet = true;
    values[c.id] = verdict;
    const before = focus;
    move(1);
    if (focus === before && graded().every((g) => values[g.id])) focus = before; // last check: stay
    draw();
  }

  function draw() {
    const v = view();
    const sameRow = v.blind_id === shownFor; // a redraw of the row on screen, not the next row
    const before = root.querySelector(".vf-criteria"); // the list being replaced: its scroll, if the row stays
    if (before && v.blind_id === shownFor) listTop = before.scrollTop;
    if (v.blind_id !== shownFor) {
      shownFor = v.blind_id;
      values = {};
      saved = {};
      for (const c of v.criteria) values[c.id] = saved[c.id] = c.value || "";
      focus = Math.max(v.criteria.findIndex((c) => c.required), 0);
      note = savedNote = v.note || "";
      confirmLeave = "";
      listTop = 0;
    } else { // the same row again: what Python sends is what is saved; with nothing changed here since the last
      // view, what is shown is that (another tab's save of this row, seen after taking the form back)
      const clean = !dirty();
      for (const c of v.criteria) saved[c.id] = c.value || "";
      savedNote = v.note || "";
      if (clean) { values = { ...saved }; note = savedNote; }
    }
    const hadFocus = root.contains(document.activeElement);
    // a redraw (a ping, a message, a resize) while the rater types a note leaves them in the note, caret kept:
    // otherwise their next letters would be the form's keys
    const typing = document.activeElement && document.activeElement.classList.contains("vf-note") && hadFocus
      ? [document.activeElement.selectionStart, document.activeElement.selectionEnd] : null;
    root.replaceChildren();
    root.classList.toggle("vf-dead", dead());
    root.classList.toggle("vf-blurred", blurred && !dead());
    if (blurred && !dead()) {
      root.append(el("div", "vf-paused", "Paused: the form is not listening to your keys. Click it, or press one of " +
        "its keys, to go on."));
    }
    const head = el("div", "vf-head");
    root.dataset.unsaved = !dead() && dirty() ? "1" : ""; // rate.html asks before the tab closes on them
    head.append(el("span", "vf-progress", v.progress));
    if (!v.finished) {
      if (dirty()) head.append(el("span", "vf-state vf-unsaved", "● unsaved changes"));
      else if (v.rated) head.append(el("span", "vf-state vf-rated", `✓ rated (saved ${v.saved_at.slice(11, 16)} UTC)`));
    }
    if (confirmLeave) {
      const again = { back: "b", skip: "s", next: "l" }[confirmLeave];
      head.append(el("span", "vf-message vf-error", `Unsaved changes on this row: press ${again} again to leave ` +
        "them, or Enter to save."));
    } else if (wrongKey && !v.finished) {
      head.append(el("span", "vf-message vf-error", `${wrongKey} is not one of the form's keys: p / f grade the ` +
        "focused check, a / r every check not graded, Enter saves; ? shows them all."));
    } else if (v.message && !quiet) {
      head.append(el("span", `vf-message vf-${v.message_kind === "error" ? "error" : "ok"}`, v.message));
    }
    root.append(head);
    const said = [...head.querySelectorAll(".vf-progress, .vf-message")].map((e) => e.textContent).join(". ");
    if (live.textContent !== said) live.textContent = said;
    if (v.finished) {
      root.append(el("div", "vf-end", text("end", "All rows are rated. ratings.csv holds your ratings: hand it " +
        "in. Press b to go back and edit a row.")));
    } else {
      const item = el("div", "vf-item");
      for (const [k, value] of Object.entries(v.fields)) {
        const f = el("div", `vf-field vf-field-${k}`);
        const shown = el("span", "vf-value");
        shown.append(show(value));
        f.append(el("span", "vf-label", k.replaceAll("_", " ")), shown);
        item.append(f);
      }
      root.append(item);
      if (v.quotes) { // the answer repeats a judge's words: said before the rater reads it as a verdict
        const notice = el("div", "vf-quotes", "This answer quotes a grade (" + v.quotes + "): judge the sentence, " +
          "not the quote. The quote is the model's own text, not the judge's verdict on this row.");
        notice.setAttribute("role", "note");
        root.insertBefore(notice, item);
      }
      const list = el("div", "vf-criteria");
      v.criteria.forEach((c, i) => {
        const row = el("div", "vf-crit" + (i === focus ? " vf-focused" : "") + (c.required ? "" : " vf-na"));
        row.dataset.id = c.id;
        row.setAttribute("role", "group"); // a check's two buttons belong to its question, for a screen reader too
        row.setAttribute("aria-labelledby", `vf-q-${c.id}`);
        const q = el("div", "vf-question");
        q.id = `vf-q-${c.id}`;
        if (c.plain) { // a Vocabscapes check in plain words: the study's name and wording stay its tooltip
          const b = el("b", "", `${c.id}. ${c.plain}`);
          b.title = `${c.name}: ${c.question}`;
          q.append(b, el("div", "vf-examples", `passes: ${c.passing} · fails: ${c.failing}`));
          if (c.missing) q.append(el("div", "vf-missing", `A word missing? ${c.missing}`));
        } else q.append(el("b", "", `${c.id === c.name ? c.name : c.id + ". " + c.name}`), el("span", "", " " + c.question));
        row.append(q);
        const buttons = el("div", "vf-buttons");
        if (c.required) {
          for (const verdict of ["PASSED", "FAILED"]) {
            // a sign as well as a colour: the two filled buttons look alike to a red-green colour-blind rater
            const b = el("button", `vf-${verdict.toLowerCase()}` + (values[c.id] === verdict ? " vf-selected" : ""),
              (verdict === "PASSED" ? "✓ " : "✗ ") + verdict);
            b.type = "button";
            b.setAttribute("aria-pressed", String(values[c.id] === verdict));
            b.onclick = () => { focus = i; grade(verdict); };
            buttons.append(b);
          }
        } else {
          buttons.append(el("span", "vf-na-label", "n/a on this row"));
        }
        row.append(buttons);
        list.append(row);
      });
      root.append(list);
      const noteBox = el("input", "vf-note");
      noteBox.placeholder = "note (optional; n writes one, Enter saves, Esc leaves)";
      noteBox.value = note;
      noteBox.oninput = () => {
        const was = dirty();
        note = noteBox.value;
        if (was !== dirty()) { draw(); root.querySelector(".vf-note").focus(); }
      };
      root.append(noteBox);
    }
    const foot = el("div", "vf-foot");
    const bar = el("div", "vf-bar");
    for (const [label, action] of [["← back (b)", "back"], ["skip (s)", "skip"], ["save and next (Enter)", "save"],
      ["next without saving (l)", "next"], ["export (e)", "export"]]) {
      if (v.finished && (action === "save" || action === "skip" || action === "next")) continue;
      const b = el("button", `vf-action vf-${action}`, label);
      b.type = "button";
      b.onclick = () => (action === "save" ? save() : action === "export" ? !dead() && send({ action }) : leave(action));
      bar.append(b);
    }
    foot.append(bar, el("div", "vf-keys", v.keys));
    if (showHelp) { // below the keys line, in the flow: it never covers the row being rated
      const help = el("div", "vf-help");
      help.setAttribute("role", "note");
      help.append(el("b", "", "Keys (press ? again to close)"));
      const list = el("ul");
      for (const k of v.keys.split(" · ")) list.append(el("li", "", k));
      help.append(list);
      foot.append(help);
    }
    root.append(foot);
    if (dead()) {
      const over = el("div", "vf-overlay");
      over.setAttribute("role", "alert");
      if (view().dead) {
        over.append(el("b", "", "This form is closed"), el("div", "", "Another kernel opened this packet, so " +
          "nothing pressed here is saved. Use the newer one, or run this notebook's cells again with takeover = True " +
          "to rate here."));
      } else if (elsewhere()) {
        const take = el("button", "vf-take", "Rate in this tab instead");
        take.type = "button";
        take.onclick = () => send({ action: "take-tab" });
        over.append(el("b", "", text("elsewhere", "This form is open in another tab")), el("div", "",
          text("elsewhere_more", "Nothing pressed here is saved while the other tab has it. Go on there, or take " +
          "the form over to this tab:")), take);
      } else {
        over.append(el("b", "", "The kernel is not answering"), el("div", "", "The kernel was shut down, " +
          "restarted or is busy: nothing pressed here is saved. If it was restarted, run all cells again " +
          "(Run ▸ Run All Cells); the form resumes where you stopped."));
      }
      root.append(over);
    }
    const noteNow = root.querySelector(".vf-note");
    // a closed form's controls under its cover are out of the keyboard's way: Tab reaches the one button first
    // (never focused for the rater, whose next Enter would take the form over unasked)
    if (dead()) {
      for (const c of root.querySelectorAll("button, input")) if (!c.classList.contains("vf-take")) c.disabled = true;
      for (const c of root.querySelectorAll(".vf-criteria")) c.tabIndex = -1; // a list that scrolls takes Tab too
    }
    if (typing && noteNow && sameRow) {
      noteNow.focus({ preventScroll: true });
      noteNow.setSelectionRange(...typing);
    } else if (hadFocus && !root.contains(document.activeElement)) root.focus({ preventScroll: true });
    fit();
    // the whole form in sight when it fits (the answer, the focused check, the save bar and its keys), the check
    // within its list; on a screen too short even for that, the bar first, then the answer, then the check
    const shown = root.querySelector(".vf-focused");
    if (scrollWanted && shown && !dead()) {
      scrollWanted = false;
      const item = root.querySelector(".vf-item");
      if (root.getBoundingClientRect().height <= visibleHeight()) {
        root.scrollIntoView({ block: "nearest" });
      } else {
        foot.scrollIntoView({ block: "end" });
        if (item) item.scrollIntoView({ block: "nearest" });
      }
      shown.scrollIntoView({ block: "nearest" });
    }
  }

  // How much of the notebook the rater sees: the part of the nearest box that scrolls the form (JupyterLab's
  // notebook panel) inside the window. A laptop's 1366x768 leaves it about 500 px, a browser's own bars less.
  function viewBox() {
    let top = 0, bottom = window.innerHeight;
    for (let x = root.parentElement; x; x = x.parentElement) {
      if (/(auto|scroll)/.test(getComputedStyle(x).overflowY) && x.scrollHeight > x.clientHeight + 1) {
        const r = x.getBoundingClientRect();
        top = Math.max(top, r.top);
        bottom = Math.min(bottom, r.bottom);
        break;
      }
    }
    return { top, bottom };
  }
  const visibleHeight = () => { const b = viewBox(); return b.bottom - b.top; };

  // On a short screen the list of checks gets the height the rest of the form leaves (never under two checks)
  // and scrolls inside the form, so the row's answer stays in sight above the check being graded.
  function fit() {
    const list = root.querySelector(".vf-criteria");
    if (!list || !root.isConnected) return;
    list.style.maxHeight = "";
    const rows = list.querySelectorAll(".vf-crit");
    const full = list.getBoundingClientRect().height, avail = visibleHeight();
    if (!rows.length || !full || avail <= 0) return;
    const rest = root.getBoundingClientRect().height - full;
    const least = 2 * (full / rows.length);
    const room = Math.max(Math.floor(avail - rest - 12), least);
    if (room < full) {
      list.style.maxHeight = `${room}px`;
      list.scrollTop = listTop;
      // the focused check inside the list's box (help opened, a banner or a message shortened the list); the
      // list scrolls, never the notebook
      const f = list.querySelector(".vf-focused");
      if (f) {
        const l = list.getBoundingClientRect(), r = f.getBoundingClientRect();
        if (r.top < l.top) list.scrollTop -= l.top - r.top;
        else if (r.bottom > l.bottom) list.scrollTop += r.bottom - l.bottom;
      }
      listTop = list.scrollTop;
    }
  }
  // A resized window refits the list without rebuilding the form (a note being typed keeps its focus); a form
  // partly in sight is brought whole into sight, one the rater scrolled away from is left where it is. It waits
  // for the window to settle: JupyterLab lays its panels out again in a later frame, and a drag sends many.
  let refitTimer = null;
  const onResize = () => { clearTimeout(refitTimer); refitTimer = setTimeout(refit, 150); };
  function refit() {
    const list = root.querySelector(".vf-criteria");
    if (!list || !root.isConnected) return;
    listTop = list.scrollTop;
    fit();
    const r = root.getBoundingClientRect(), b = viewBox();
    if (r.top < b.bottom && r.bottom > b.top && (r.top < b.top || r.bottom > b.bottom) && !dead()) {
      root.scrollIntoView({ block: "nearest" });
    }
  }
  window.addEventListener("resize", onResize);

  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const inNote = e.target.classList && e.target.classList.contains("vf-note");
    if (dead()) { // a dead form takes no keys and lets none through to JupyterLab; Tab still leaves it
      const onTake = e.target.classList && e.target.classList.contains("vf-take");
      if (e.key !== "Tab" && !(onTake && (e.key === "Enter" || e.key === " "))) { e.preventDefault(); e.stopPropagation(); }
      return;
    }
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key; // Caps Lock or Shift: the same keys
    untouched = false;
    const hadWrong = wrongKey;
    wrongKey = "";
    let handled = true;
    if (e.key === "Enter") save();
    else if (inNote) {
      handled = e.key === "Escape";
      if (handled) root.focus();
      else { e.stopPropagation(); return; } // typing a note: letters are text, not keys
    } else if (key === "p") grade("PASSED");
    else if (key === "f") grade("FAILED");
    else if (key === "j" || key === "ArrowDown") { move(1); draw(); }
    else if (key === "k" || key === "ArrowUp") { move(-1); draw(); }
    else if (key === "b") leave("back");
    else if (key === "s") leave("skip");
    else if (key === "l" || key === "ArrowRight") leave("next");
    else if (key === "a") gradeRest("PASSED");
    else if (key === "r") gradeRest("FAILED");
    else if (key === "e") send({ action: "export" });
    else if (key === "n") { const box = root.querySelector(".vf-note"); if (box) box.focus(); }
    else if (key === "?") { showHelp = !showHelp; draw(); }
    else handled = false;
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
      if (hadWrong) draw(); // the notice about a wrong key goes once a right one is pressed
    }
    // any other character stops at the form too: JupyterLab's command-mode keys (x cuts the form's cell, d d
    // deletes it, m makes it markdown, o hides it) must not act on the notebook while the rater types at the form;
    // and the head says which keys work
    else if (e.key.length === 1) {
      e.stopPropagation();
      // Space on one of the form's buttons presses it (the browser's own key): no notice, and no redraw under it
      if (e.key === " " && e.target.closest && e.target.closest("button")) return;
      wrongKey = e.key === " " ? "space" : e.key;
      draw();
    }
  }
  root.addEventListener("keydown", onKey);
  root.addEventListener("focusin", () => { if (blurred) { blurred = false; draw(); } });
  root.addEventListener("focusout", () => setTimeout(() => { // where the focus went, once it has gone there
    const out = root.isConnected && !root.contains(document.activeElement);
    if (out !== blurred) { blurred = out; draw(); }
  }, 0));
  // A key pressed while the form is not focused (after a menu, a click on the page) is the form's, never the
  // notebook's: JupyterLab's command-mode keys (b inserts a cell, x cuts one, ...) do not fire; the form takes the
  // keyboard back and acts on the key. Typing in a text field, an editor, a menu or a dialog is left alone.
  // Only while the form is shown and live, and only keys aimed at the page or at the form's own notebook (not at
  // the file browser, another tab of JupyterLab, a button or a link).
  const OWN_TARGETS = "input, textarea, select, button, a, [contenteditable='true'], .cm-editor, .lm-Menu, " +
    ".lm-MenuBar, .jp-Dialog";
  function capture(e) {
    if (!root.isConnected || root.contains(e.target) || e.ctrlKey || e.metaKey || e.altKey || e.shiftKey && e.key
      === "Enter" || dead()) return;
    if (!root.getClientRects().length || (root.checkVisibility && !root.checkVisibility())) return; // a hidden tab
    const panel = root.closest(".jp-NotebookPanel");
    if (e.target !== document.body && !(panel && panel.contains(e.target))) return;
    if (e.target.closest && e.target.closest(OWN_TARGETS)) return;
    if (e.key.length !== 1 && !["Enter", "Escape", "ArrowUp", "ArrowDown", "ArrowRight"].includes(e.key)) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    root.focus({ preventScroll: true });
    if (e.key !== "Escape") onKey(e);
  }
  window.addEventListener("keydown", capture, true);
  root.addEventListener("pointerdown", () => { untouched = false; });

  model.on("change:view", () => {
    quiet = false;
    scrollWanted = !untouched;
    draw();
    // a save refused while the rater typed a note leaves them in the note: their next letters stay text
    const inNote = document.activeElement && document.activeElement.classList.contains("vf-note");
    if (!(inNote && root.contains(document.activeElement))) root.focus({ preventScroll: true });
  });
  model.on("msg:custom", (msg) => {
    if (msg && "owner" in msg && msg.owner !== owner) { owner = msg.owner; draw(); }
    if (msg && "pong" in msg) {
      for (const s of [...pending.keys()]) if (s <= msg.pong) pending.delete(s);
      if (disconnected) { disconnected = false; draw(); }
    }
  });
  const timer = setInterval(() => {
    if (!root.isConnected) return; // scrolled out of JupyterLab's window: nothing to show, nothing to ask
    const now = Date.now();
    pending.set(++seq, now);
    if (pending.size > 60) pending.delete(pending.keys().next().value); // bounded: the oldest ones say enough
    send({ action: "ping", seq });
    const silent = [...pending.values()].some((sent) => now - sent > SILENT_AFTER_MS);
    if (silent !== disconnected) { disconnected = silent; draw(); }
  }, PING_EVERY_MS);
  send({ action: "hello" }); // the first tab to say hello owns the form
  draw();
  setTimeout(() => { root.focus({ preventScroll: true }); scrollWanted = !untouched; draw(); }, 0); // laid out by now
  return () => {
    clearInterval(timer);
    window.removeEventListener("keydown", capture, true);
    window.removeEventListener("resize", onResize);
    clearTimeout(refitTimer);
  };
}

export default { render };
