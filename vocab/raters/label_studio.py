"""A rater's blind sheet as a Label Studio project, and Label Studio's JSON export back as their ratings.

``vocab packet --run-dir D --rater NAME --format label-studio`` writes ``packets/NAME-label-studio/``: ``tasks.json``
(one task per row, in the rater's own order, holding the blind id and the fields a rater may see, and the rater's
name and the sample's hash, so that the export carries them back), ``label_config.xml`` (one single-choice
PASSED/FAILED control per criterion of the dataset's rubric, the question as its header), ``rubric.txt`` (the
whole rubric, as the form's packet has it) and ``README.txt``. Nothing
of the judge, the model or the key is in it.

``vocab ratings import EXPORT.json --run-dir D --rater NAME`` reads Label Studio's JSON export (a list of tasks,
each with its ``annotations``): per task the latest annotation that was not cancelled, each criterion's choice.
An export holding more than one annotator's work is refused (one rater's ratings are one person's); a task without
an annotation is a row not rated (a partial hand-in, ``--partial``).
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pandas as pd

from vocab.datasets.dataset import read_rubric
from vocab.datasets.errors import CalibrationError
from vocab.datasets.values import as_text
from vocab.files import parse_json
from vocab.layout import RunDir
from vocab.raters.packet import check_packet_folder, check_rater_name, rater_order, rubric_text
from vocab.records import write_text_atomic
from vocab.sampling.sample import read_sheet, sheet_sha256

FORMATS = ("form", "label-studio")
VERDICT_CHOICES = ("PASSED", "FAILED")


def _field(name: str) -> str:
    """A visible field's key in a task's data and its name in the config: ASCII letters, digits and '_' only
    (Label Studio's ``$name`` reads no other), prefixed so that it never meets the task's own keys (``blind_id``,
    ``vocab_rater``, ``vocab_sample_sha256``)."""
    return "f_" + "".join(c if c.isascii() and c.isalnum() else "_" for c in name)


def _fields(visible: tuple[str, ...]) -> dict[str, str]:
    """Each visible field's key; two that differ only in other characters are told apart by their position."""
    keys = {f: _field(f) for f in visible}
    if len(set(keys.values())) != len(keys):
        keys = {f: f"{_field(f)}_{i}" for i, f in enumerate(visible)}
    return keys


def label_config(rubric, visible: tuple[str, ...]) -> str:
    """Label Studio's labelling config: each visible field as text, then one PASSED/FAILED choice per criterion
    (named by its rating column; required unless the criterion is optional)."""
    lines = ["<View>"]
    keys = _fields(visible)
    for f in visible:
        header = quoteattr(f.replace("_", " "))
        lines += [f"  <Header value={header}/>", f'  <Text name="{keys[f]}" value="${keys[f]}"/>']
    target = keys[visible[-1]]
    for c in rubric.criteria:
        lines.append(f"  <Header value={quoteattr(f'{c.id}. {c.name}: {c.question}')}/>")
        required = "false" if c.optional else "true"
        lines.append(f'  <Choices name="{escape(c.column)}" toName="{target}" choice="single" required="{required}">')
        lines += [f'    <Choice value="{v}"/>' for v in VERDICT_CHOICES]
        lines.append("  </Choices>")
    return "\n".join([*lines, "</View>"]) + "\n"


def make_label_studio_packet(run_dir: str | Path, rater: str, *, seed: int = 0) -> Path:
    """``packets/NAME-label-studio/``: tasks.json, label_config.xml and README.txt for one rater (rows in their own
    order, :func:`vocab.raters.packet.rater_order`). A folder already there for another sample is refused."""

    run_dir = Path(run_dir)
    check_rater_name(rater, run_dir)
    sheet = read_sheet(run_dir)
    rub = read_rubric(run_dir)
    sample = sheet_sha256(run_dir)
    out = RunDir(run_dir).label_studio(rater)
    check_packet_folder(out, run_dir)
    by_id = {r["blind_id"]: r for r in sheet.to_dict(orient="records")}
    order = rater_order(list(by_id), rater, seed)
    if (out / "tasks.json").exists():
        try:
            made = json.loads((out / "tasks.json").read_text())
            if not made:
                raise ValueError("no tasks")
            made_for = made[0]["data"].get("vocab_sample_sha256")
            made_order = [t["data"]["blind_id"] for t in made]
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, UnicodeDecodeError, RecursionError):
            raise CalibrationError(f"{out / 'tasks.json'} is damaged; move {out} away to make it again") from None
        if made_for != sample:
            raise CalibrationError(f"{out} was made for another sample; move it away to make a new one")
        if made_order != order:  # a project may have been made of it already: its tasks keep their order
            raise CalibrationError(
                f"{out} was made with another --seed (its rows in another order); its order "
                "stays (move it away to make a new one)"
            )
    visible = tuple(c for c in sheet.columns if c != "blind_id")
    keys = _fields(visible)
    tasks = [
        {
            "data": {
                "blind_id": bid,
                **{keys[f]: as_text(by_id[bid][f]) for f in visible},
                "vocab_rater": rater,
                "vocab_sample_sha256": sample,
            }
        }
        for bid in order
    ]
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "rubric.txt", rubric_text(rub))
    write_text_atomic(out / "label_config.xml", label_config(rub, visible))
    write_text_atomic(
        out / "README.txt",
        f"Blind rating project for {rater} in Label Studio: {len(tasks)} tasks.\n\n"
        "Create a project, paste label_config.xml as its labelling interface (Settings > Labeling Interface > Code),\n"
        "import tasks.json, and grade every task on every criterion as rubric.txt says (the whole rubric; the project\n"
        "shows each criterion's question). Then export the project as JSON and hand in the\n"
        f"export: `vocab ratings import export.json --run-dir <run> --rater {rater} [--partial]`.\n",
    )
    write_text_atomic(out / "tasks.json", json.dumps(tasks, indent=1, ensure_ascii=False) + "\n")  # last: complete
    return out


def parse_label_studio_export(data: bytes, path: str | Path) -> pd.DataFrame:
    """The ratings in a Label Studio JSON export (its bytes, read by :func:`vocab.raters.raters.read_ratings_file`
    within its bounds), as a ratings table (strings): ``blind_id``, one column per criterion annotated, and ``rater``
    and ``sample_sha256`` from the tasks (the packet put them there). An export of another shape is one line naming
    the task."""

    tasks = parse_json(data, path, CalibrationError)
    if not isinstance(tasks, list) or not all(isinstance(t, dict) and isinstance(t.get("data"), dict) for t in tasks):
        raise CalibrationError(f"{path}: not a Label Studio JSON export (a list of tasks, each with its data)")
    rows, annotators = [], set()
    for n, t in enumerate(tasks, start=1):
        data_ = t["data"]
        if "blind_id" not in data_:
            raise CalibrationError(f"{path}: task {n} has no blind_id: not a task of a vocab packet")
        annotations = t.get("annotations") or []
        if not isinstance(annotations, list):
            raise CalibrationError(f"{path}: task {n}: its annotations are not a list (not a Label Studio JSON export)")
        done = [a for a in annotations if isinstance(a, dict) and not a.get("was_cancelled")]
        for a in done:
            who = a.get("completed_by")
            annotators.add(json.dumps(who.get("id", who) if isinstance(who, dict) else who))
        if not done:
            continue  # not rated (yet): a partial hand-in
        latest = max(
            done,
            key=lambda a: (str(a.get("updated_at") or a.get("created_at") or ""), str(a.get("id") or "").rjust(40)),
        )
        row = {
            "blind_id": str(data_["blind_id"]),
            "rater": str(data_.get("vocab_rater", "")),
            "sample_sha256": str(data_.get("vocab_sample_sha256", "")),
        }
        result = latest.get("result") or []
        if not isinstance(result, list):
            raise CalibrationError(f"{path}: task {n}: its annotation's result is not a list")
        for r in result:
            if isinstance(r, dict) and r.get("type") == "choices" and isinstance(r.get("value"), dict):
                choices = r["value"].get("choices") or []
                if not isinstance(choices, list):
                    raise CalibrationError(
                        f"{path}: task {n}: the choices of {str(r.get('from_name'))[:40]!r} are not a list"
                    )
                row[str(r.get("from_name"))] = str(choices[0]) if len(choices) == 1 else ""
        rows.append(row)
    if len(annotators) > 1:
        raise CalibrationError(
            f"{path}: annotations by {len(annotators)} annotators ({', '.join(sorted(annotators))[:80]}): one rater's "
            "ratings are one person's; export each annotator's work apart (Label Studio's export filters by annotator)"
        )
    if not rows:
        raise CalibrationError(f"{path}: no rated rows (no task holds an annotation that was not cancelled)")
    df = pd.DataFrame(rows).fillna("").astype(str)
    for col in ("rater", "sample_sha256"):
        if col in df and (df[col] == "").all():
            df = df.drop(columns=col)  # tasks made by hand: nothing to check against
    return df
