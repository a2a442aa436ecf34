"""The ``vocab`` command line: each command parses its options and calls one library function. Every user error
(a bad config, level range, file or argument; the library's typed :class:`vocab.errors.InputError`) ends in
:func:`main` as one line on stderr (``vocab: error: ...``), exit code 2, nothing written. A command that writes into
a run or dataset directory holds its lock (:func:`vocab.records.dir_lock`): a second one is refused.

The command groups' modules (``vocab/cli_*.py``) import a command's library modules inside its body, on purpose:
``vocab --help`` and each command load only what that command runs."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import signal
import sys
from collections.abc import Sequence

from vocab.cli_audit import add_audit
from vocab.cli_chain import add_chain
from vocab.cli_compare import add_compare
from vocab.cli_exam import add_exam
from vocab.cli_study import add_study
from vocab.cli_types import UsageError
from vocab.errors import InputError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: one line, exit 2
        self.exit(2, f"vocab: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """Every command group's parsers, each group's beside its commands."""
    p = _Parser(prog="vocab", description="Audit an LLM judge on the Vocabscapes write-critique loop.")
    p.add_argument("-v", "--verbose", action="store_true", help="log diagnostics to stderr")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in (add_study, add_chain, add_exam, add_audit, add_compare):
        add(sub)
    return p


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # argparse's refusal (one line, exit 2) or --help (0): the code, as every command's
        return int(e.code or 0)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    # SIGTERM, and SIGINT (which a shell's background job would ignore), stop a command as Ctrl-C does:
    # the servers it started are stopped, and a run's manifest is marked interrupted.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _interrupt)
    try:
        if getattr(args, "seed", None) is not None and args.seed < 0:  # numpy's generators take none below 0
            raise UsageError(f"--seed must be non-negative, got {args.seed}")
        if not getattr(args, "writes_run_dir", False):
            return args.func(args)
        from vocab.records import dir_lock

        with dir_lock(args.run_dir):  # one writing command per run or dataset directory
            return args.func(args)
    except InputError as e:
        print(f"vocab: error: {e}", file=sys.stderr)
        return 2
    except FileExistsError as e:  # a file where vocab makes a folder (vocab.files.make_dir names it in its words)
        print(
            f"vocab: error: {str(e.filename)[:200]} is in the way (a file where vocab keeps a folder): move it away",
            file=sys.stderr,
        )
        return 2
    except BrokenPipeError:  # e.g. `vocab levels 1-10000 | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:  # a name past the file system's limit is bad input; any other OSError is a fault
        if e.errno != errno.ENAMETOOLONG:
            raise
        print(f"vocab: error: {str(e.filename)[:200]}: a file name too long for this file system", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("vocab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
