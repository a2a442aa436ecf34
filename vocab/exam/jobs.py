"""What an exam asks: one call per judge and item (a :class:`Job`), seeded by its prompt's bytes."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vocab.records import read_manifest


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def prompt_sha(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def prompt_seed(messages: list[dict[str, str]], base: int | None) -> int | None:
    """A sampling seed fixed by the prompt's bytes (and the model's base seed): identical prompts, same seed."""
    if base is None:
        return None
    digest = hashlib.sha256(f"{base}:{prompt_sha(messages)}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


@dataclasses.dataclass
class Job:
    """One call to make: a judge, an item, its prompt and seed."""

    judge: str
    item: dict[str, Any]
    messages: list[dict[str, str]]
    schema: dict[str, Any]
    schema_name: str
    max_tokens: int | None
    seed: int | None

    @property
    def key(self) -> tuple[str, str]:
        return self.judge, self.item["item_id"]


def run_identity(run_dir: str | Path) -> dict[str, Any]:
    """Which run an exam draws on: its id, the SHA-256 of its levels and of its whole fingerprint (models,
    sampling, prompts, rubric, loop). Two runs can share an id and their levels (the reference run was remade
    under the same name on the same levels with another sampling recipe), not their fingerprint, so an entry
    registered for one run never matches the other's. (Entries registered before the fingerprint's hash was part
    of the identity match no run now: their exams are complete, and a new exam needs a new entry.)"""
    m = read_manifest(Path(run_dir))
    fp = m.get("fingerprint") or {}
    digest = hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest() if fp else None
    return {"run_id": m["run_id"], "levels_sha256": fp.get("levels_sha256"), "fingerprint_sha256": digest}
