// The blind rating form (vocab.calibration.form.form_widget): draws the session's `view`, takes the rater's keys,
// and sends each action to Python, which validates it, writes the audit trail and sends the next view.
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function show(value) {
  if (Array.isArray(value)) return value.join(", ");
  if (value && typeof value === "object") {
    return Object.entries(value).map(([k, v]) => `${k.replaceAll("_", " ")}: ${v}`).join(" · ");
  }
  return String(value ?? "");
}

function render({ model, el: host }) {
  const root = el("div", "vocab-form");
  root.tabIndex = 0;
  // The form's keys stop at the form (stopPropagation below), so JupyterLab's command-mode keys (b inserts a
  // cell, j/k select cells, ...) do not fire; everything else, Ctrl+S included, reaches JupyterLab.
  host.appendChild(root);
  let shownFor, values = {}, focus = 0, note = "";

  const view = () => model.get("view");
  const graded = () => view().criteria.filter((c) => c.required);
  const send = (msg) => model.send(msg);
  const save = () => send({ action: "save", checks: values, note });

  function move(step) {
    const crit = view().criteria;
    let i = focus;
    for (let n = 0; n < crit.length; n++) {
      i = Math.min(Math.max(i + step, 0), crit.length - 1);
      if (crit[i].required) break;
    }
    if (crit[i] && crit[i].required) focus = i;
  }

  function grade(verdict) {
    const c = view().criteria[focus];
    if (!c || !c.required) return;
    values[c.id] = verdict;
    const before = focus;
    move(1);
    if (focus === before && graded().every((g) => values[g.id])) focus = before; // last check: stay
    draw();
  }

  function draw() {
    const v = view();
    if (v.blind_id !== shownFor) {
      shownFor = v.blind_id;
      values = {};
      for (const c of v.criteria) values[c.id] = c.value || "";
      focus = Math.max(v.criteria.findIndex((c) => c.required), 0);
      note = v.note || "";
    }
    root.replaceChildren();
    const head = el("div", "vf-head");
    head.append(el("span", "vf-progress", v.progress));
    if (v.message) head.append(el("span", "vf-message", v.message));
    root.append(head);
    if (v.finished) {
      root.append(el("div", "vf-end", "All rows are rated. ratings.csv holds your ratings: hand it in. " +
        "Press b to go back and edit a row."));
    } else {
      const item = el("div", "vf-item");
      for (const [k, value] of Object.entries(v.fields)) {
        const f = el("div", `vf-field vf-field-${k}`);
        f.append(el("span", "vf-label", k.replaceAll("_", " ")), el("span", "vf-value", show(value)));
        item.append(f);
      }
      root.append(item);
      const list = el("div", "vf-criteria");
      v.criteria.forEach((c, i) => {
        const row = el("div", "vf-crit" + (i === focus ? " vf-focused" : "") + (c.required ? "" : " vf-na"));
        row.dataset.id = c.id;
        const q = el("div", "vf-question");
        q.append(el("b", "", `${c.id === c.name ? c.name : c.id + ". " + c.name}`), el("span", "", " " + c.question));
        row.append(q);
        const buttons = el("div", "vf-buttons");
        if (c.required) {
          for (const verdict of ["PASSED", "FAILED"]) {
            const b = el("button", `vf-${verdict.toLowerCase()}` + (values[c.id] === verdict ? " vf-selected" : ""),
              verdict);
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
      noteBox.placeholder = "note (optional; Enter saves)";
      noteBox.value = note;
      noteBox.oninput = () => { note = noteBox.value; };
      root.append(noteBox);
    }
    const bar = el("div", "vf-bar");
    for (const [label, action] of [["← back (b)", "back"], ["skip (s)", "skip"], ["save and next (Enter)", "save"],
      ["export (e)", "export"]]) {
      if (v.finished && (action === "save" || action === "skip")) continue;
      const b = el("button", `vf-action vf-${action}`, label);
      b.type = "button";
      b.onclick = () => (action === "save" ? save() : send({ action }));
      bar.append(b);
    }
    root.append(bar, el("div", "vf-keys", v.keys));
  }

  root.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const inNote = e.target.classList && e.target.classList.contains("vf-note");
    let handled = true;
    if (e.key === "Enter") save();
    else if (inNote) {
      handled = e.key === "Escape";
      if (handled) root.focus();
      else { e.stopPropagation(); return; } // typing a note: letters are text, not keys
    } else if (e.key === "p") grade("PASSED");
    else if (e.key === "f") grade("FAILED");
    else if (e.key === "j" || e.key === "ArrowDown") { move(1); draw(); }
    else if (e.key === "k" || e.key === "ArrowUp") { move(-1); draw(); }
    else if (e.key === "b") send({ action: "back" });
    else if (e.key === "s") send({ action: "skip" });
    else if (e.key === "e") send({ action: "export" });
    else handled = false;
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  });

  model.on("change:view", () => { draw(); root.focus(); });
  draw();
  setTimeout(() => root.focus(), 0);
}

export default { render };
