"""The command line's option types and the options several commands share (each command group's parsers sit beside
its commands: :mod:`vocab.cli_study`, :mod:`vocab.cli_chain`, :mod:`vocab.cli_exam`, :mod:`vocab.cli_audit`,
:mod:`vocab.cli_compare`; :mod:`vocab.cli` joins them)."""

from __future__ import annotations

import argparse

from vocab.errors import InputError

DEFAULT_CONFIG = "configs/embedded.toml"


class UsageError(InputError):
    """Bad input from the command line; printed as one line, exit code 2."""


def call_budget(text: str) -> int:
    """``--max-calls``: a whole number of model calls, 0 or more (argparse names the option on a refusal)."""
    digits = text.strip()
    if not (digits.isascii() and digits.lstrip("-").isdigit()):  # int() would read other scripts' digits too
        raise argparse.ArgumentTypeError(f"a whole number of calls, got {text[:40]!r}")
    n = int(digits)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be non-negative, got {n}")
    return n


def finite(text: str) -> float:
    """A finite number (``nan`` and ``inf`` are refused: a threshold of nan or inf passes nothing)."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number, got {text[:40]!r}") from None
    if x != x or x in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"a finite number, got {text[:40]!r}")
    return x


def port(text: str) -> int:
    """A TCP port, 1 to 65535."""
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()) or not 1 <= int(digits) <= 65535:
        raise argparse.ArgumentTypeError(f"a port from 1 to 65535, got {text[:40]!r}")
    return int(digits)


def rater(text: str) -> str:
    """A rater's name given on the command line: not empty (an empty --rater once meant the default silently)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("a rater's name, got an empty one")
    return text


def population_option(p) -> None:
    """``--population``: what a corrected rate is the rate of (:data:`vocab.stats.POPULATIONS`)."""
    from vocab import stats

    p.add_argument(
        "--population",
        choices=stats.POPULATIONS,
        default=stats.DEFAULT_POPULATION,
        help="what theta is the rate of: the cell's own judged items, each pile the finite set it is "
        "(finite, default: a pile fully labelled is known), or the rate the items were drawn from "
        "(superpopulation, seed 000's)",
    )


def dataset_name(text: str) -> str:
    """A dataset's name (the report's title): 1 to 120 printable characters."""
    if not text.strip() or len(text) > 120 or not text.isprintable():
        raise argparse.ArgumentTypeError(f"1 to 120 printable characters, got {text[:40]!r}")
    return text.strip()


def names(text: str, option: str) -> tuple[str, ...]:
    """A comma-separated list given on the command line: at least one name, none empty."""
    found = tuple(v.strip() for v in text.split(","))
    if not any(found) or not all(found):
        raise UsageError(f"{option}: a comma-separated list of names, none empty, got {text!r}")
    return found


def config_option(p) -> None:
    """``--config``: the config file (default :data:`DEFAULT_CONFIG`)."""
    p.add_argument("--config", default=DEFAULT_CONFIG, help=f"config file (default: {DEFAULT_CONFIG})")


def refuse_given(options, why: str) -> None:
    """One line for the first of ``options`` (pairs of a flag and its parsed value) that was given: it is not
    for this input (``why``)."""
    given = [flag for flag, value in options if value is not None]
    if given:
        raise UsageError(f"{given[0]}: {why}")
