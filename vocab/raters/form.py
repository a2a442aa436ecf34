"""The human blind rating form: a rater's session on their packet (:mod:`vocab.raters.packet`), and the
widget ``rate.ipynb`` shows it with.

:class:`RatingSession` holds the logic and is tested without a browser: the rater's order, "row k of n, m done",
back, skip, edit, the end state; every save appended to ``ratings.jsonl`` with its audit fields (rater, UTC time,
seconds on the row, rubric version and hash, session id; an edit is a new record, the latest wins, the history
stays); one session per rater at a time — a session in another live kernel is refused unless the new one takes
over explicitly, a session that was taken over cannot save, and running the form again in the same kernel replaces
the earlier form of that kernel. :class:`FormWidget` (anywidget) draws it and takes the keys; the browser test
drives it in JupyterLab.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import socket
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from vocab.datasets.dataset import JudgeRubric
from vocab.raters.packet import KEYS, check_rater_name, read_packet_meta
from vocab.records import JsonlWriter, read_jsonl, write_text_atomic
from vocab.rubric import VERDICTS, guide_of
from vocab.sampling.quotes import judge_quotes
from vocab.sampling.sample import CalibrationError

LOCK = "session.json"
_SESSIONS = itertools.count()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RatingSession:
    """A rater's session on a packet. ``takeover``: open even though another live session holds the packet
    (that session can then no longer save)."""

    def __init__(self, packet: str | Path, *, takeover: bool = False, clock=time.monotonic):
        self.packet = Path(packet)
        if not (self.packet / "packet.json").exists():
            raise CalibrationError(f"{self.packet}: not a rater's packet (make one: vocab packet)")
        self.meta = read_packet_meta(self.packet)
        self.rater = check_rater_name(self.meta["rater"])
        self.rubric = JudgeRubric.from_dict(self.meta["rubric_full"])
        self.rows = read_jsonl(self.packet / "sheet.jsonl")
        self.ids = [r["blind_id"] for r in self.rows]
        self.history = read_jsonl(self.packet / "ratings.jsonl")
        self.latest = {r["blind_id"]: r for r in self.history}
        self.clock = clock
        self.session = uuid.uuid4().hex[:12]
        self.created = next(_SESSIONS)  # order of the sessions of this kernel: a later one is newer
        self._claim(takeover)
        self.k = self._next_unrated(-1)
        self._shown = clock()

    # --- one session per rater ------------------------------------------------------------------------

    def _claim(self, takeover: bool) -> None:
        lock = self.packet / LOCK
        if lock.exists():
            other = json.loads(lock.read_text())
            live = other["host"] != socket.gethostname() or _alive(int(other["pid"]))
            if live and other["pid"] != os.getpid() and not takeover:
                raise CalibrationError(
                    f"rater {self.rater} already has a session open (session {other['session']}, pid {other['pid']}, "
                    f"since {other['started']}): close it, or open this one with takeover=True"
                )
        lock.write_text(
            json.dumps({"session": self.session, "pid": os.getpid(), "host": socket.gethostname(), "started": _now()})
        )

    def reclaim(self) -> None:
        """Take the packet back from a later session of this same kernel (a form run again in another browser
        tab, refused there); never from another kernel's session."""
        lock = self.packet / LOCK
        try:
            other = json.loads(lock.read_text())
        except (OSError, ValueError):
            return
        if (
            other.get("session") != self.session
            and other.get("pid") == os.getpid()
            and other.get("host") == socket.gethostname()
        ):
            lock.write_text(json.dumps({**other, "session": self.session, "started": _now()}))

            # what the other session saved meanwhile is this one's to show: rated rows stay rated
            self.history = read_jsonl(self.packet / "ratings.jsonl")
            self.latest = {r["blind_id"]: r for r in self.history}

    def _check_still_mine(self) -> None:
        if not self.alive():
            raise CalibrationError(
                "another tab or kernel took over this packet: this form can no longer save. Use the newer one, or "
                "run this notebook's cells again with takeover = True"
            )

    def alive(self) -> bool:
        """Whether this session still owns the packet (a later session, in this kernel or another, takes it)."""
        try:
            return json.loads((self.packet / LOCK).read_text())["session"] == self.session
        except (OSError, ValueError, KeyError, TypeError):
            return False

    # --- where the rater is -------------------------------------------------------------------------------

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def done(self) -> int:
        return len(self.latest)

    @property
    def finished(self) -> bool:
        return self.k is None

    def _next_unrated(self, after: int) -> int | None:
        for step in range(1, self.n + 1):
            i = (after + step) % self.n
            if self.ids[i] not in self.latest:
                return i
        return None

    def current(self) -> dict | None:
        return None if self.k is None else self.rows[self.k]

    def progress(self) -> str:
        if self.k is None:
            return f"all {self.n} rows rated — ratings.csv holds them; b goes back to edit"
        return f"row {self.k + 1} of {self.n}, {self.done} done"

    def goto(self, k: int) -> None:
        if not 0 <= k < self.n:
            raise CalibrationError(f"row {k + 1} is not between 1 and {self.n}")
        self.k, self._shown = k, self.clock()

    def back(self) -> None:
        self.goto(self.n - 1 if self.k is None else max(self.k - 1, 0))

    def next_row(self) -> None:
        """The next row in the rater's order, rated or not, without saving anything (a review moves on so); past the
        last row, the first unrated one (a row skipped before), else the first."""
        self._check_still_mine()
        if self.k is not None and self.k + 1 < self.n:
            self.goto(self.k + 1)
        else:
            first = self._next_unrated(-1)
            self.goto(first if first is not None else 0)

    def skip(self) -> None:
        """Leave the current row for later: it comes back after the other unrated rows."""
        self._check_still_mine()  # a session that was taken over is dead at its next key, not only at Enter
        if self.k is not None:
            nxt = self._next_unrated(self.k)
            self.goto(nxt if nxt is not None else self.k)

    # --- what a criterion needs on a row -----------------------------------------------------------------

    def required(self, row: dict) -> dict[str, bool]:
        """Per criterion id: must the rater grade it on this row? Vocabscapes' check 1 only when the level
        requires the seed word (otherwise it is n/a)."""
        out = {}
        for c in self.rubric.criteria:
            if c.optional and self.rubric.name == "vocabscapes" and c.id == "1":
                out[c.id] = bool(row.get("settings", {}).get("require_seed_word"))
            else:
                out[c.id] = not c.optional
        return out

    def save(self, checks: dict[str, str], note: str = "") -> dict:
        row = self.current()
        if row is None:
            raise CalibrationError("every row is rated: go back (b) to edit one")
        need = self.required(row)
        missing = [c for c, req in need.items() if req and checks.get(c) not in VERDICTS]
        if missing:
            raise CalibrationError(f"grade {', '.join(missing)} first (PASSED or FAILED)")
        bad = [c for c, v in checks.items() if c in need and v and v not in VERDICTS]
        if bad:
            raise CalibrationError(f"checks {', '.join(bad)} need PASSED or FAILED")
        self._check_still_mine()
        kept = {c: (checks.get(c) or "") if need[c] else "" for c in need}
        before = self.latest.get(row["blind_id"])
        if before is not None and before["checks"] == kept and before["note"] == note:
            # a review that changed nothing: no second record (it would read as an edit), on to the next row
            nxt = self._next_unrated(self.k)
            self.k, self._shown = (nxt if nxt is not None else (self.k + 1) % self.n), self.clock()
            return before
        record = {
            "blind_id": row["blind_id"],
            "rater": self.rater,
            "checks": kept,
            "note": note,
            "time": _now(),
            "seconds": round(self.clock() - self._shown, 1),
            "rubric_version": self.rubric.version,
            "rubric_hash": self.rubric.hash,
            "session": self.session,
            "edit": row["blind_id"] in self.latest,
        }

        w = JsonlWriter(self.packet / "ratings.jsonl")
        w.write(record)
        w.close()
        self.history.append(record)
        self.latest[row["blind_id"]] = record
        self.export()
        nxt = self._next_unrated(self.k)
        self.k, self._shown = nxt, self.clock()
        return record

    def export(self) -> Path:
        """``ratings.csv``: the latest rating of every rated row (any number of them), in the ratings format.
        Made from the append-only ``ratings.jsonl`` on disk, never from this session's memory, and only while this
        session owns the packet: a stale tab cannot write an older ``ratings.csv`` over a newer one."""

        self._check_still_mine()
        self.history = read_jsonl(self.packet / "ratings.jsonl")
        self.latest = {r["blind_id"]: r for r in self.history}
        # every row names its rater and the sample it was rated on: an import into another sample, or under
        # another rater's name, is refused
        cols = ["blind_id", *self.rubric.columns, "note", "rater", "sample_sha256"]
        rows = [
            {
                "blind_id": b,
                **{c.column: self.latest[b]["checks"].get(c.id, "") for c in self.rubric.criteria},
                "note": self.latest[b]["note"],
                "rater": self.rater,
                "sample_sha256": self.meta["sample_sha256"],
            }
            for b in self.ids
            if b in self.latest
        ]
        out = self.packet / "ratings.csv"
        write_text_atomic(out, pd.DataFrame(rows, columns=cols).to_csv(index=False))
        return out

    def view(self, message: str = "", kind: str = "ok") -> dict:
        """Everything the widget draws; ``kind`` says whether the message is news ("ok") or a refusal ("error")."""
        row = self.current()
        crit = []
        if row is not None:
            need = self.required(row)
            given = self.latest.get(row["blind_id"], {}).get("checks", {})
            crit = [
                {
                    "id": c.id,
                    "name": c.name,
                    "question": c.question,
                    "required": need[c.id],
                    "value": given.get(c.id, ""),
                    **guide_of(self.rubric.name, c.id),
                }
                for c in self.rubric.criteria
            ]
        fields = {} if row is None else {k: v for k, v in row.items() if k != "blind_id"}
        saved = self.latest.get(row["blind_id"]) if row else None
        return {
            "progress": self.progress(),
            "k": None if self.k is None else self.k + 1,
            "n": self.n,
            "done": self.done,
            "blind_id": None if row is None else row["blind_id"],
            "fields": fields,
            "criteria": crit,
            "note": self.latest.get(row["blind_id"], {}).get("note", "") if row else "",
            "message": message,
            "message_kind": kind,
            "rated": saved is not None,
            "saved_at": saved["time"] if saved else "",
            "keys": KEYS,
            "finished": row is None,
            "dead": not self.alive(),
            "quotes": judge_quotes(row) if row is not None else "",  # the answer's own words: the notice's
        }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --- the widget ------------------------------------------------------------------------------------------


_ESM = (Path(__file__).with_name("form.js")).read_text(encoding="utf-8")
_CSS = (Path(__file__).with_name("form.css")).read_text(encoding="utf-8")


TABS: dict[str, dict] = {}  # per packet: the browser tab this kernel's form answers, and its session


def _tab_holding(packet: str, session: RatingSession, tab: str, action) -> str | None:
    """The tab that holds this kernel's form of ``packet`` when it is not ``tab`` (None: ``tab`` may act). The
    first tab to speak holds it; a form run again in another tab is refused — the packet stays with the first
    tab's session — until that tab takes it over ("take-tab"), explicitly, even when the first tab has gone
    quiet. Within one tab (its id is kept across reloads) the newest form wins; an older one (a duplicated tab
    shares the id) is left closed. Every message the holder sends takes the packet back from a later session
    of this kernel (running the cells in another tab claims it at once)."""
    held = TABS.get(packet)
    if held is not None and held["tab"] != tab and action != "take-tab":
        if held["session"] is not session:
            held["session"].reclaim()
        return held["tab"]
    if (
        held is not None
        and held["session"] is not session
        and action != "take-tab"
        and session.created < held["session"].created
    ):
        return None  # an older form of this tab: not alive, so it is shown closed and saves nothing
    session.reclaim()
    TABS[packet] = {"tab": tab, "session": session}
    return None


def form_widget(session: RatingSession):
    """The form as an anywidget: the JavaScript draws ``view`` and sends the rater's actions back."""
    import anywidget
    import traitlets

    class FormWidget(anywidget.AnyWidget):
        _esm = _ESM
        _css = _CSS
        view = traitlets.Dict().tag(sync=True)

    w = FormWidget(view=session.view())
    packet = str(session.packet.resolve())

    def on_msg(_widget, msg, _buffers):
        message, kind = "", "ok"
        tab, action = str(msg.get("tab", "")), msg.get("action")
        owner = _tab_holding(packet, session, tab, action)
        if owner is not None:  # another tab has this kernel's form: this one is told so, and nothing is done
            w.send({"owner": owner, **({"pong": msg.get("seq")} if action == "ping" else {})})
            return
        if action in ("hello", "take-tab"):
            w.send({"owner": tab})
        try:
            if action == "ping":  # the page asks every few seconds: is the kernel there, is this form still live?
                w.send({"pong": msg.get("seq"), "alive": session.alive(), "owner": tab})
                if session.alive() == bool(w.view.get("dead")):  # closed, or given back (a second tab refused)
                    w.view = session.view()
                return
            if action in ("hello", "take-tab"):
                pass
            elif action == "save":
                before = session.latest.get((session.current() or {}).get("blind_id"))
                kept = session.save(dict(msg.get("checks", {})), str(msg.get("note", "")))
                message = (
                    "unchanged: nothing new saved"
                    if kept is before
                    else "saved"
                    if not session.finished
                    else "all rows rated"
                )
            elif action == "back":
                session.back()
            elif action == "skip":
                session.skip()
            elif action == "next":
                session.next_row()
            elif action == "export":
                message = f"exported {session.done} rows to {session.export().name}"
        except CalibrationError as e:
            message, kind = str(e), "error"
        w.view = session.view(message, kind)

    w.on_msg(on_msg)
    return w


# --- JupyterLab: never save the live form into the notebook -------------------------------------------------

FORM_TAG = "rating-form"


def strip_live_form(model, **kwargs):
    """A Jupyter ``pre_save_hook``: outputs of cells tagged ``rating-form`` are not saved, so a notebook opened
    with a fresh kernel shows the cell to run, never a widget whose model is gone."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    for cell in model["content"].get("cells", []):
        if FORM_TAG in cell.get("metadata", {}).get("tags", []) and cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
            # nor the layout a click left on it (a scrolled or collapsed output box outlives reloads otherwise)
            for k in ("scrolled", "collapsed"):
                cell["metadata"].pop(k, None)
            if isinstance(cell["metadata"].get("jupyter"), dict):
                cell["metadata"]["jupyter"].pop("outputs_hidden", None)
        if "parameters" in cell.get("metadata", {}).get("tags", []) and cell.get("cell_type") == "code":
            # a takeover is a one-time action: the saved notebook never opens with it set
            src = cell.get("source", "")
            text = "".join(src) if isinstance(src, list) else src
            fixed = re.sub(r"(?m)^(\s*takeover\s*=\s*)True\b", r"\1False", text)
            if fixed != text:
                cell["source"] = fixed
