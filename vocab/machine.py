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
