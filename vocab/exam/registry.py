"""The exam's pre-registration: an append-only, hash-chained registry of what an exam will measure.

Each entry (one JSON line) fixes an exam's parameters, metric definitions, thresholds and judges *before*
the exam runs, and carries ``prev`` (the previous entry's hash) and ``hash`` (SHA-256 of the entry's
canonical JSON without ``hash``). Editing any earlier line breaks every hash after it, which
:func:`verify` reports. A correction is a new entry whose ``corrects`` names the entry it corrects; nothing
is ever rewritten. An exam runs only under parameters that match a registered entry (:func:`find`).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vocab.errors import InputError
from vocab.records import JsonlWriter, dir_lock, read_jsonl

GENESIS = "0" * 64


class RegistryError(InputError):
    """A broken chain, a duplicate id, or parameters that match no registered entry."""


def _digest(entry: dict[str, Any]) -> str:
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def verify(path: str | Path) -> list[dict[str, Any]]:
    """All entries, after checking every link of the chain; raises RegistryError at the first bad one."""
    entries = read_jsonl(Path(path))
    prev, ids = GENESIS, set()
    for n, e in enumerate(entries, 1):
        if not isinstance(e.get("id"), str) or not isinstance(e.get("params"), dict):
            raise RegistryError(f"{path}:{n}: not a registry entry (no id or params)")
        if e.get("prev") != prev:
            raise RegistryError(f"{path}:{n}: entry {e.get('id')!r} does not follow the previous one (edited?)")
        if e.get("hash") != _digest(e):
            raise RegistryError(f"{path}:{n}: entry {e.get('id')!r} does not match its hash (edited?)")
        if e["id"] in ids:
            raise RegistryError(f"{path}:{n}: duplicate id {e['id']!r}")
        if e.get("corrects") is not None and e["corrects"] not in ids:
            raise RegistryError(f"{path}:{n}: corrects unknown entry {e['corrects']!r}")
        ids.add(e["id"])
        prev = e["hash"]
    return entries


def register(
    path: str | Path,
    entry_id: str,
    params: dict[str, Any],
    *,
    thresholds: dict[str, float],
    metrics: dict[str, str],
    judges: list[str],
    prediction: str | None = None,
    corrects: str | None = None,
) -> dict[str, Any]:
    """Append one entry to the registry (created if missing) and return it."""
    path = Path(path)
    with dir_lock(path.parent):  # two registrations at once would fork the chain
        return _register(
            path,
            entry_id,
            params,
            thresholds=thresholds,
            metrics=metrics,
            judges=judges,
            prediction=prediction,
            corrects=corrects,
        )


def _register(
    path: Path, entry_id: str, params: dict[str, Any], *, thresholds, metrics, judges, prediction, corrects
) -> dict[str, Any]:
    entries = verify(path) if path.exists() else []
    if any(e["id"] == entry_id for e in entries):
        raise RegistryError(f"{path}: id {entry_id!r} is already registered; register a correction instead")
    if corrects is not None and not any(e["id"] == corrects for e in entries):
        raise RegistryError(f"{path}: corrects unknown entry {corrects!r}")
    entry = {
        "id": entry_id,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "params": params,
        "thresholds": thresholds,
        "metrics": metrics,
        "judges": judges,
        "prediction": prediction,
        "corrects": corrects,
        "prev": entries[-1]["hash"] if entries else GENESIS,
    }
    entry["hash"] = _digest(entry)
    w = JsonlWriter(path)
    w.write(entry)
    w.close()
    return entry


def find(path: str | Path, params: dict[str, Any], judge: str) -> dict[str, Any]:
    """The latest entry (corrections win) registered for exactly these parameters and this judge."""
    entries = verify(path) if Path(path).exists() else []
    corrected = {e["corrects"] for e in entries if e.get("corrects")}
    matches = [e for e in entries if e["params"] == params and judge in e["judges"] and e["id"] not in corrected]
    if not matches:
        raise RegistryError(
            f"no registered exam entry matches these parameters for judge {judge!r}; "
            "register them first (pre-registration)"
        )
    return matches[-1]
