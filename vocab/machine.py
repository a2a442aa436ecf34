"""The machine a run, a benchmark or a test run ran on: its CPU, usable cores, the instruction sets that pick
kernels, and its memory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ISA_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_tile")


def memory_gib() -> float:
    """This machine's physical memory in GiB."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30


def machine() -> dict[str, Any]:
    """The CPU a run or benchmark ran on: model, usable cores, the instruction sets that pick kernels, memory."""
    cpu, flags = "unknown", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and cpu == "unknown":
                cpu = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": len(os.sched_getaffinity(0)),
        "isa": [f for f in ISA_FLAGS if f in flags],
        "memory_gib": round(memory_gib(), 1),
    }


def identity() -> str:
    """This machine's own identity, not for showing: systemd's machine id (the same for every user and process on
    it, kept across reboots), else the host's name and a network card's address."""
    import socket
    import uuid

    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text:
            return f"machine-id:{text}"
    return f"host:{socket.gethostname()}:{uuid.getnode():012x}"


def salted(salt: str) -> str:
    """This machine's identity hashed with ``salt``: it tells whether a record was made here, and nothing else
    (not the machine's name, and nothing two records with other salts share)."""
    import hashlib

    return hashlib.sha256(f"{salt}:{identity()}".encode()).hexdigest()
