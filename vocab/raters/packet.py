"""A human rater's packet: the folder a rater opens, and nothing else.

``vocab packet --run-dir D --rater NAME`` writes ``D/packets/NAME/``::

    sheet.jsonl      the blind rows, in this rater's own order (seeded by the name): blind id and the
                     dataset's visible fields only
    packet.json      rater, order seed, rows, the sample's hash, the rubric's name, version and hash
    rubric.txt       what to grade, with every criterion's question
    rate.html        the form as one page, opened from disk in a browser: nothing to install
                     (:mod:`vocab.raters.page`; the hand-out a rater opens)
    rate.ipynb       the form (a copy of notebooks/rate.ipynb pointed at this folder: the tracked notebook is
                     never the one a rater types into)
    README.txt       how to rate, the keys, how to hand in
    ratings.jsonl    written by the form: every saved rating with its audit fields (an edit appends)
    ratings.csv      written by the form after every save: the latest rating of each rated row

Nothing in it names a model, a cell, a verdict or another rater; the key stays in ``D/calibration/key.csv``,
sorted by cell, level and attempt, so its row order says nothing about any sheet's.

The hand-off is ``D/packets/NAME.zip``: the six files above under ``NAME/``, nothing of the run, and vocab's own
wheel. A rater opens ``rate.html`` from it in a browser, which reads nothing else on their disk (so not the key,
even on the run's own machine). For vocab's users the notebook form stays: the folder lies inside the run, beside
the key, where the form's kernel could read it, so the zip is installed and opened on another machine with no
clone of the repository (README.txt: one venv, one ``pip install``, then ``vocab form NAME.zip``). The wheel is
built from the package's files alone (``pyproject.toml``, ``README.md``, ``vocab/``), never ``data/``, where every
run's key lies.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from vocab.datasets.dataset import JudgeRubric, read_rubric
from vocab.datasets.names import STAGE, check_name  # noqa: F401 (STAGE: importable here)
from vocab.files import check_writable, make_dir
from vocab.layout import RunDir
from vocab.machine import salted
from vocab.raters.packet_zip import (  # noqa: F401 (importable here)
    BEFORE_PAGE,
    HANDOUT,
    PACKET_KEYS,
    WHEEL,
    ZIP_MEMBER_LIMIT,
    read_packet_meta,
    read_packet_zip,
    unpack_packet_zip,
    unpack_target,
    write_packet_zip,
)
from vocab.raters.page import rate_page
from vocab.records import git_commit, read_jsonl, write_bytes_atomic, write_text_atomic
from vocab.rubric import CHECK1_AUTO_PASS, GUIDE, MISSING_WORD_RULE
from vocab.sampling.sample import CalibrationError, Drawn, earlier_sheet_hashes, read_drawn, stage_ids

TEMPLATE = Path(__file__).resolve().parents[2] / "notebooks" / "rate.ipynb"
KEYS = (
    "p / f: PASSED / FAILED for the focused check (then the next one) · a / r: PASSED / FAILED for every check "
    "not graded · j / k or ↓ / ↑: move between checks · Enter: save and next · l or →: next row without saving · "
    "b: back · s: skip for now · n: write a note · e: export · ?: show the keys"
)
PAGE_KEYS = KEYS.replace("e: export", "e: download ratings.csv")  # rate.html's


def llm_raters(run_dir: str | Path) -> set[str]:
    """Names taken by machine raters in this run: the script, and every LLM rater that answered here."""
    names = {"script"}
    for f in RunDir(run_dir).rater_logs():
        if f.name.endswith("_errors.jsonl"):
            names.add(f.stem.removeprefix("rater_").removesuffix("_errors"))
            continue
        with f.open(encoding="utf-8") as fh:
            first = fh.readline()
        if first.strip() and "model" in json.loads(first):
            names.add(f.stem.removeprefix("rater_"))
    return names


def check_rater_name(name: str, run_dir: str | Path | None = None, *, human: bool = True) -> str:
    """One rule for rater names everywhere (the form, the packet, `vocab ratings import`):
    :func:`vocab.datasets.names.check_name`'s, and a human rater may not take a machine rater's name in the run."""
    check_name(name)
    if human and run_dir is not None and name.lower() in {n.lower() for n in llm_raters(run_dir)}:
        raise CalibrationError(f"rater name {name!r} belongs to a machine rater in this run; choose another")
    return name


def rater_order(blind_ids: list[str], rater: str, seed: int = 0) -> list[str]:
    """The rater's own order of the sheet: the ids sorted, then shuffled by a seed derived from the name."""
    digest = hashlib.sha256(f"{seed}:{rater}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    ids = sorted(blind_ids)
    return [ids[i] for i in rng.permutation(len(ids))]


def shown_order(run_dir: str | Path, rater: str, stages: list[list[str]]) -> list[str]:
    """The order ``rater``'s packets showed them the sample's rows (``stages``: each stage's blind ids,
    :func:`vocab.sampling.sample.stage_ids`): each packet's rows in :func:`rater_order` for the seed it was made with
    (its packet.json's ``order_seed``, whatever seed a later command is given), the first packet's rows (the whole
    sheet, or the pilot's) then each later stage's packet; a stage with no packet ends it. Empty when the rater was
    handed no packet, or the first holds rows no prefix of the stages does (another sample's)."""
    first = RunDir(run_dir).packet(rater)
    if not (first / "packet.json").exists():
        return []
    meta = read_packet_meta(first)
    held = int(meta.get("rows", 0))
    done = next((k for k in range(1, len(stages) + 1) if sum(map(len, stages[:k])) == held), None)
    if done is None:
        return []
    order = rater_order([b for st in stages[:done] for b in st], rater, int(meta.get("order_seed", 0)))
    for k in range(done, len(stages)):
        at = stage_packet(run_dir, rater, k + 1)
        if not (at / "packet.json").exists():
            break
        order += rater_order(stages[k], rater, int(read_packet_meta(at).get("order_seed", 0)))
    return order


AS_THE_FORM_SAYS = "Check 1 is n/a (not graded) on a row whose level does not require the seed word: the form says so."


def rubric_text(rubric: JudgeRubric) -> str:
    """The rubric as the rater reads it in ``rubric.txt``: the judge's instructions, each criterion once (the
    criteria are listed after them only when the instructions do not already ask every question), and check 1
    worded as the form shows it (n/a, not "passes automatically", which is how the judge is told)."""

    text = rubric.instructions.replace(CHECK1_AUTO_PASS, AS_THE_FORM_SAYS)
    if text and all(c.question in text for c in rubric.criteria):
        lines = [text]
    else:
        lines = [text, "", "Criteria:"] if text else ["Criteria:"]
        lines += [f"- {c.id}. {c.name}: {c.question}" for c in rubric.criteria]
    if rubric.name == "vocabscapes":  # the same checks in plain words, with the form's examples and missing-word rule
        lines += ["", "The checks in plain words, as the form shows them:"]
        lines += [f"- {i}. {g.plain} Passes: {g.passing} Fails: {g.failing}" for i, g in GUIDE.items()]
        lines += ["", f"A listed word missing: {MISSING_WORD_RULE}"]
    return "\n".join(lines) + "\n"


RATER_INTRO = """# Your blind rating form

Run all cells (**Run ▸ Run All Cells**): the form opens at the bottom. Each row shows one item (for Vocabscapes, a
level's words and a player's sentence with its answer key) and the rubric's checks, each with its question. Grade
every check PASSED or FAILED as you judge it yourself. You never see a model's verdict, which model wrote the
answer, or anyone else's ratings, and nothing you do here changes them.

Keys, with the form focused: **p** / **f** grade the focused check and move on, **j** / **k** (or ↓ / ↑) move,
**a** passes every check not graded yet and **r** fails them, **Enter** saves the row and opens the next, **l**
(or →) opens the next without saving (a row you only reviewed), **b** goes back, **s** skips a row for later,
**n** writes a note, **e** exports, **?** shows the keys. Every save is kept (`ratings.jsonl`); `ratings.csv`
holds your latest rating of each row: hand it in, all of it or part. Closing the tab or the kernel loses nothing
saved: run all cells again and the form resumes where you stopped. `rubric.txt` has the whole rubric,
`README.txt` the hand-in.
"""


CHECKOUT = Path(__file__).resolve().parents[2]


def checkout() -> Path | None:
    """The clone of the repository this vocab runs from, or None (installed from a wheel, as on a rater's machine)."""
    return (
        CHECKOUT if (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "vocab" / "__init__.py").is_file() else None
    )


PACKAGE_PATHS = ("pyproject.toml", "README.md", "vocab")  # what vocab's wheel is built from, never data/


def _package_files(root: Path) -> list[Path]:
    """The files vocab's wheel is built from (PACKAGE_PATHS): in a git checkout, the tracked ones only (a stray or
    uncommitted new file under vocab/ is not shipped to a rater); elsewhere every file of the package."""
    files = [root / p for p in PACKAGE_PATHS[:-1]]
    tracked = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "vocab"], capture_output=True)
    if tracked.returncode == 0 and tracked.stdout:
        return files + sorted(root / n for n in tracked.stdout.decode().split("\0") if n and (root / n).is_file())
    return files + sorted(f for f in (root / "vocab").rglob("*") if f.is_file() and "__pycache__" not in f.parts)


def vocab_wheel() -> Path | None:
    """vocab's wheel for a packet, built from the checkout's package files alone (never ``data/``: the runs and
    their keys), with fixed timestamps, and kept under ``~/.cache/vocab/wheels/<hash of those files>/`` so a
    second packet reuses it. None when vocab does not run from a checkout (nothing to build from)."""
    root = checkout()
    if root is None:
        return None
    files = _package_files(root)
    digest = hashlib.sha256()
    for f in files:
        digest.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = home / "vocab" / "wheels" / digest.hexdigest()[:16]
    if found := sorted(f for f in cache.glob("*.whl") if WHEEL.fullmatch(f.name)):
        return found[0]
    with tempfile.TemporaryDirectory(prefix="vocab-wheel-") as tmp:
        src = Path(tmp) / "src"
        for f in files:
            (src / f.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, src / f.relative_to(root))
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "-q",
                str(src),
                "-w",
                str(Path(tmp) / "dist"),
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "SOURCE_DATE_EPOCH": "315532800"},
        )
        built = sorted((Path(tmp) / "dist").glob("vocab-*.whl"))
        if done.returncode or len(built) != 1 or not WHEEL.fullmatch(built[0].name):
            last = (done.stderr.strip().splitlines() or ["no wheel came out"])[-1]
            raise CalibrationError(f"cannot build vocab's wheel for the packet: {last[:200]}")
        cache.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(cache / built[0].name, built[0].read_bytes())
    return cache / built[0].name


def wheel_record(wheel: Path) -> dict:
    """packet.json's account of the wheel it ships: name, sha256 (checked on unpacking), and the commit of the
    checkout it was built from (``+dirty``: its package files had uncommitted changes; data/ does not count)."""
    commit = git_commit(PACKAGE_PATHS) if checkout() is not None else None
    return {"name": wheel.name, "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(), "commit": commit}


def install_text(rater: str, wheel: str | None) -> str:
    """How a rater installs and opens the packet (README.txt): on their own machine, never in a clone."""
    if wheel is None:
        return (
            "Open rate.ipynb in JupyterLab with `vocab form <this folder>`: this packet was made without vocab's\n"
            "wheel, so vocab must already be installed where you rate.\n"
        )
    return (
        "Install and open it on your own machine (Python 3.11 exactly: vocab does not install on 3.12 or later; no\n"
        "clone of vocab's repository, whose runs hold the answer keys), from the folder that holds the zip:\n\n"
        f"    unzip {rater}.zip\n"
        "    python3.11 -m venv vocab-env\n"
        f'    vocab-env/bin/pip install "{rater}/{wheel}[form]"\n'
        f"    vocab-env/bin/vocab form {rater}.zip\n\n"
        "(Windows: vocab-env\\Scripts\\pip and vocab-env\\Scripts\\vocab.) JupyterLab opens the form; it never\n"
        "saves the live form into the notebook.\n"
    )


def readme_text(rater: str, rows: int, wheel: str | None, stage: int | None = None) -> str:
    """README.txt: for a rater who is not a programmer, rate.html first; the notebook form for vocab's users."""
    later = ""
    if stage:
        later = (
            f"This is part {stage} of your rating: {rows} more rows, none of them in your first packet (keep\n"
            "handing in the first packet's ratings.csv from its own folder as before).\n\n"
        )
    return (
        f"Blind rating packet for {rater}: {rows} rows.\n\n"
        + later
        + "TO RATE: open rate.html in your web browser (double-click it, or drag it into Firefox, Chrome, Edge or\n"
        "Safari). There is nothing to install, and the page needs no internet connection.\n\n"
        "- Each row shows one item and the checks of the rubric, each with its question (rubric.txt has the\n"
        "  whole rubric). Grade every check PASSED or FAILED as you judge it yourself. A check shown as\n"
        '  "n/a on this row" does not apply to that row: it is not graded there.\n'
        f"- Keys: {PAGE_KEYS}.\n"
        "- Every save is kept in your browser at once. Close the page whenever you like: open rate.html again,\n"
        "  in the same browser, and it goes on where you stopped. (Another browser, or a private window, does\n"
        "  not see your saves.) Use one tab: a second tab says the form is open elsewhere and rates only if you\n"
        "  ask it to.\n\n"
        "TO HAND IN: press e. Your browser puts ratings.csv in its downloads folder (usually Downloads). Send\n"
        "that file to the person who gave you this packet. Part of the rows is fine: hand in again later with\n"
        "more.\n\n"
        "TO STOP: close the tab. Nothing else runs.\n\n"
        "For vocab's users (researchers, the study's own raters), the same form runs in JupyterLab: rate.ipynb.\n"
        "There ratings.csv is written in this folder after every save, and Ctrl+C in the terminal that runs\n"
        "`vocab form` stops it. " + install_text(rater, wheel)
    )


def check_packet_folder(out: Path, run_dir: Path | None = None) -> None:
    """Before a packet is written: its folder, and the packets/ folder above it, are folders (not files), inside the
    run (no link out of it) and writable, each said in one line naming it."""

    for d in (out.parent, out):
        if d.exists() and not d.is_dir():
            raise CalibrationError(f"{d} is not a folder; move it away to make the packet")
    check_writable(out / "packet.json", run_dir, CalibrationError)
    check_writable(out.with_suffix(".zip"), run_dir, CalibrationError)


def make_packet(run_dir: str | Path, rater: str, *, seed: int = 0, drawn: Drawn | None = None) -> Path:
    """Write (or find, unchanged) the rater's packet. A packet made for another sample is refused, but a pilot's:
    once an extension has grown the sheet, the pilot's packet stays as it is (its rows stay valid; the form may still
    write into it) and each later stage's rows get a packet of their own, ``packets/NAME-stageK/``; the newest is
    returned. ``drawn``: the sample as the caller read it (by default read here)."""
    run_dir = Path(run_dir)
    check_rater_name(rater, run_dir)
    if not RunDir(run_dir).sheet.exists():
        raise CalibrationError(f"{run_dir}: no blind sheet yet (draw the sample first: vocab sample)")
    drawn = drawn or read_drawn(run_dir)
    sample_hash, out = drawn.sheet_sha256, RunDir(run_dir).packet(rater)
    meta = read_packet_meta(out) if (out / "packet.json").exists() else None
    if (
        meta is not None
        and meta["sample_sha256"] != sample_hash
        and meta["sample_sha256"] in earlier_sheet_hashes(run_dir)
    ):
        stages = stage_ids(run_dir, drawn)
        held = int(meta.get("rows", 0))
        done = next((k for k in range(1, len(stages) + 1) if sum(map(len, stages[:k])) == held), None)
        if done is None:
            raise CalibrationError(f"{out} holds {held} rows, not the sample's first stages': move it away")
        made = []
        for k in range(done, len(stages)):  # a stage's packet already made (at its own sheet) stays as it is
            at = stage_packet(run_dir, rater, k + 1)
            was = read_packet_meta(at)["sample_sha256"] if (at / "packet.json").exists() else sample_hash
            keep = was != sample_hash and was in earlier_sheet_hashes(run_dir)
            made.append(_packet(run_dir, rater, at, stages[k], seed, was, k + 1, check_only=keep, drawn=drawn))
        _packet(
            run_dir,
            rater,
            out,
            [i for st in stages[:done] for i in st],
            seed,
            meta["sample_sha256"],
            None,
            check_only=True,
            drawn=drawn,
            meta=meta,
        )
        return made[-1] if made else out
    return _packet(run_dir, rater, out, drawn.ids, seed, sample_hash, None, drawn=drawn, meta=meta)


def stage_packet(run_dir: str | Path, rater: str, stage: int) -> Path:  # the packet of a later stage's rows
    return RunDir(run_dir).packets / f"{rater}-stage{stage}"


def _packet(
    run_dir: Path,
    rater: str,
    out: Path,
    ids: list[str],
    seed: int,
    sample_hash: str,
    stage: int | None,
    *,
    check_only: bool = False,
    drawn: Drawn,
    meta: dict | None = None,
) -> Path:
    """Write (or find, unchanged) the packet in ``out`` of the sheet's rows ``ids`` (``stage``: a later stage's
    rows only). ``check_only``: the existing packet is checked and kept, never written. ``meta``: its packet.json,
    as the caller read it."""
    if out.with_suffix(".zip").exists() and not out.with_suffix(".zip").is_file():
        raise CalibrationError(f"{out.with_suffix('.zip')} is not a file; move it away to make the packet")
    check_packet_folder(out, run_dir)
    if (out / "packet.json").exists():
        meta = meta or read_packet_meta(out)
        if meta["sample_sha256"] != sample_hash:
            raise CalibrationError(f"{out} was made for another sample; move it away to make a new packet")
        if meta.get("order_seed", 0) != seed:
            raise CalibrationError(
                f"{out} was made with --seed {meta.get('order_seed', 0)}, not {seed}; its order stays (move it away "
                "to make a new packet)"
            )
        if check_only:
            return out
        if not (out / "rate.html").exists():  # a packet made before the page: its page, from its own files
            rub = JudgeRubric.from_dict(meta["rubric_full"])
            page = rate_page(meta, read_jsonl(out / "sheet.jsonl"), PAGE_KEYS, rubric_text(rub))
            write_text_atomic(out / "rate.html", page, run_dir, CalibrationError)
            write_packet_zip(out)
        if not out.with_suffix(".zip").exists():
            write_packet_zip(out)
        return out
    sheet = drawn.sheet
    rub = read_rubric(run_dir)
    wheel = vocab_wheel()
    by_id = {r["blind_id"]: r for r in sheet.to_dict(orient="records") if r["blind_id"] in set(ids)}
    order = rater_order(list(by_id), rater, seed)
    make_dir(out, run_dir, CalibrationError)
    # every file whole, and never through a link out of the run (a link in the packet's folder is refused)
    put = lambda name, text: write_text_atomic(out / name, text, run_dir, CalibrationError)  # noqa: E731
    put("sheet.jsonl", "".join(json.dumps(by_id[bid], ensure_ascii=False) + "\n" for bid in order))
    put("rubric.txt", rubric_text(rub))
    nb = json.loads(TEMPLATE.read_text())
    nb["metadata"].pop("widgets", None)  # no saved widget state, no outputs: the rater starts clean
    first_markdown = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    first_markdown["source"] = RATER_INTRO.splitlines(keepends=True)  # the template's text is for who makes packets
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            cell["source"] = ['packet = "."  # this folder\n', "takeover = False  # True: take over an open session"]
    put("rate.ipynb", json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    if wheel is not None:
        write_bytes_atomic(out / wheel.name, wheel.read_bytes(), run_dir, CalibrationError)
    put("README.txt", readme_text(rater, len(order), wheel.name if wheel else None, stage))
    meta = {
        "rater": rater,
        "rows": len(order),
        **({"stage": stage} if stage else {}),
        "order": f"sha256('{seed}:{rater}') -> numpy default_rng permutation of the sorted blind ids",
        "order_seed": seed,
        "sample_sha256": sample_hash,
        "rubric": {"name": rub.name, "version": rub.version, "hash": rub.hash},
        "rubric_full": rub.as_dict(),
        **({"wheel": wheel_record(wheel)} if wheel else {}),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        # the machine the packet was cut on, as a salted hash: `vocab form` refuses to open it there (the run's key
        # lies beside it), whatever vocab it runs from
        "made_on": {"salt": (salt := os.urandom(16).hex()), "machine": salted(salt)},
    }
    put("rate.html", rate_page(meta, [by_id[bid] for bid in order], PAGE_KEYS, rubric_text(rub)))
    put("packet.json", json.dumps(meta, indent=2, ensure_ascii=False) + "\n")  # last: a complete packet
    write_packet_zip(out)
    return out
