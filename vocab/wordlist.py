"""The spelling word list behind the level generator, and the command that makes it.

The committed file ``vocab/data/scowl_en_us_50.txt`` is SCOWL (Spell Checker Oriented Word Lists, by Kevin
Atkinson; Debian's package ``scowl``) at sizes 10-50, categories ``english-words`` and ``american-words``: the
word set of Debian's ``wamerican`` (``/usr/share/dict/words``), from the same database as the en_US spell
checkers (hunspell-en-us, aspell-en). SCOWL keeps proper names, abbreviations, contractions and capitalised words
in categories of their own, so taking only these two categories and only all-lowercase ASCII entries leaves
common English words.

It is committed rather than read from ``/usr/share/dict`` at run time so that a level is the same on every
machine, with or without Debian's package. Regenerate it (on Debian, after ``apt-get install scowl``) with::

    python -m vocab.wordlist --scowl /usr/share/dict/scowl --out vocab/data/scowl_en_us_50.txt

The header records the source package and version, the sizes and categories, and the command.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

WORDLIST = Path(__file__).parent / "data" / "scowl_en_us_50.txt"
CATEGORIES = ("english-words", "american-words")
SIZES = (10, 20, 35, 40, 50)  # SCOWL sizes up to 50: the size of Debian's wamerican (/usr/share/dict/words)
COMMAND = "python -m vocab.wordlist --scowl /usr/share/dict/scowl --out vocab/data/scowl_en_us_50.txt"


def _keep(word: str) -> bool:
    return 2 <= len(word) <= 15 and word.isascii() and word.isalpha() and word.islower()


def build(scowl_dir: str | Path) -> list[str]:
    """The sorted word list from an unpacked SCOWL ``final/`` directory (Debian: /usr/share/dict/scowl)."""
    scowl_dir = Path(scowl_dir)
    words: set[str] = set()
    found = 0
    for cat in CATEGORIES:
        for size in SIZES:
            path = scowl_dir / f"{cat}.{size}"
            if not path.exists():  # SCOWL has no file where a category is empty at a size
                continue
            found += 1
            for line in path.read_text(encoding="latin-1").splitlines():
                w = line.strip()
                if _keep(w):
                    words.add(w)
    if not found:
        raise FileNotFoundError(f"no SCOWL lists ({CATEGORIES[0]}.10 ...) in {scowl_dir}: apt-get install scowl")
    return sorted(words)


def _scowl_version() -> str:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "scowl"], capture_output=True, text=True)
    except FileNotFoundError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def header(n_words: int, version: str) -> list[str]:
    return [
        f"# SCOWL {version} (Debian package scowl), sizes {','.join(map(str, SIZES))}, categories "
        f"{' + '.join(CATEGORIES)}",
        "# lower-case ASCII words of 2-15 letters; proper names, abbreviations, contractions and capitalised words",
        "# are SCOWL categories of their own and are not taken",
        f"# made by: {COMMAND}",
        f"# words: {n_words}",
    ]


def read(path: str | Path = WORDLIST) -> list[str]:
    """The words of a committed word list (its ``#`` header skipped)."""
    return [w for w in Path(path).read_text(encoding="ascii").splitlines() if w and not w.startswith("#")]


def source_line(path: str | Path = WORDLIST) -> str:
    """The first header line: which SCOWL, which sizes and categories."""
    with open(path, encoding="ascii") as f:
        return f.readline().lstrip("# ").strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Make the level generator's word list from SCOWL.")
    ap.add_argument("--scowl", default="/usr/share/dict/scowl", help="SCOWL's final lists (Debian: scowl)")
    ap.add_argument("--out", default=str(WORDLIST))
    ap.add_argument("--version", default=None, help="the SCOWL version to record (default: from dpkg)")
    args = ap.parse_args(argv)
    words = build(args.scowl)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join([*header(len(words), args.version or _scowl_version()), *words]) + "\n", encoding="ascii")
    print(f"{out}: {len(words)} words")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
