"""The one way vocab reads a file it is handed and writes a file it keeps.

Reading: a file is opened once, without following into anything but a regular file (a directory, a FIFO, a device
or a socket is refused in one line before a byte is read, and opening never blocks on a FIFO); its size is taken
from the open file itself and bounded; what is read is at most that bound, however the file grows meanwhile. What a
parse will hold in memory is bounded before it parses (:func:`parse_json`, :func:`check_csv_shape`): a few bytes
on disk can be many objects in memory (``{},`` is 3 bytes and a Python dict), so the bound is on the parsed shape.

Writing: a file is written whole or not at all (a temporary file of its own in the same folder, renamed over it);
a folder it needs is made where it belongs, never through a link that leads out of the folder it belongs to
(``within``); any place that cannot take the write (read-only, a folder where a file goes, a file where a folder
goes) is one line naming it. Each function raises :class:`FileError` (bad input: exit 2 on the command line) or a
subclass its caller names.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vocab.errors import InputError

# What parsing a JSON file may hold in memory, estimated from its shape before it is parsed: a command's peak stays
# within 1 GiB with the file's own bytes, pandas and numpy beside it.
JSON_BUDGET = 512 * 2**20
# CPython 3.11's costs, rounded up: a dict (64 bytes) and its slot, a list (56) and its slot, one value (a str's
# header is 49 bytes, an int or float 24-28) with its slot in the list holding it (lists grow by an eighth), and a
# key's entry (a dict keeps a third of its table free). tests/unit/test_bad_inputs_iv.py measures them against
# tracemalloc.
_DICT, _LIST, _VALUE, _KEY = 72, 64, 72, 48
# A JSON string once its escapes are gone (each ``\\x`` first, so a quote always pairs with the next one and the
# scan stays linear): what it holds costs its own bytes, its shape nothing.
_ESCAPE = re.compile(rb"\\.")
_STRING = re.compile(rb'"[^"]*"')
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


class FileError(InputError):
    """A file that cannot be read or a place that cannot be written: one line naming it."""


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def check_file(path: str | Path, what: str = "file", error: type[InputError] = FileError) -> os.stat_result:
    """``path`` names a regular file (links to one are followed), else one line saying what is there instead."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except OSError as e:
        raise error(f"{path}: cannot be read ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{path}: {_kind(st.st_mode)}, not a {what}")
    return st


def read_bytes(path: str | Path, limit: int, what: str = "file", error: type[InputError] = FileError) -> bytes:
    """At most ``limit`` bytes of a regular file, read whole; over it (or grown past it while read), one line."""
    path = Path(path)
    try:  # O_NONBLOCK: opening a FIFO nobody writes to returns at once (and is then refused by its kind)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            raise error(f"{str(path)[:200]}: a file name too long for this file system") from None
        raise error(f"{path}: cannot be read ({e.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise error(f"{path}: {_kind(st.st_mode)}, not a {what}")
    with os.fdopen(fd, "rb", closefd=True) as f:
        if st.st_size > limit:
            raise error(f"{path}: {st.st_size:,} bytes, over the {limit:,} a {what} may have")
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise error(f"{path}: cannot be read ({e.strerror})") from None
    if len(data) > limit:
        raise error(f"{path}: grew past the {limit:,} bytes a {what} may have while it was read")
    return data


def read_text(
    path: str | Path, limit: int, what: str = "file", error: type[InputError] = FileError, encoding: str = "utf-8"
) -> str:
    """:func:`read_bytes` decoded; a file that is not UTF-8 is one line naming the byte."""
    data = read_bytes(path, limit, what, error)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text (byte {e.start})") from None


def json_cost(data: bytes) -> int:
    """An upper estimate of the bytes ``json.loads(data)`` will hold: its strings' own bytes, and for its shape (the
    ``{``, ``[``, ``,`` and ``:`` outside strings) each container, value and key at CPython's cost. A string holding
    one character past U+FFFF is kept at 4 bytes a character, one past U+00FF at 2: when the file holds any such
    character (or an escape that may be one), every string's bytes count 4 or 2 times, and so does the file's text,
    which the parser holds decoded while it parses."""
    unescaped = _ESCAPE.sub(b"", data)
    shape = _STRING.sub(b'""', unescaped)
    objects, lists = shape.count(b"{"), shape.count(b"[")
    values = shape.count(b",") + objects + lists + 1
    if re.search(rb"[\xf0-\xf4]|\\u[dD][89abAB]", data):
        width = 4
    elif re.search(rb"[\xe0-\xef]|[\xc4-\xdf]|\\u", data):
        width = 2
    else:
        width = 1
    strings = (len(unescaped) - len(shape)) + (len(data) - len(unescaped))  # what escapes stood for counts too
    text = width * len(data)  # json.loads decodes the whole file to one str first, held while it parses
    value = _VALUE + (32 if width > 1 else 0)  # a str past ASCII has a longer header (74 bytes, not 49)
    return _DICT * objects + _LIST * lists + value * values + _KEY * shape.count(b":") + width * strings + text


def check_json_cost(
    data: bytes, path: str | Path, error: type[InputError] = FileError, budget: int = JSON_BUDGET
) -> None:
    """One line when what parsing ``data`` would hold (:func:`json_cost`) passes ``budget``."""
    cost = json_cost(data)
    if cost > budget:
        raise error(
            f"{path}: its JSON would take about {cost / 2**20:,.0f} MiB in memory once parsed (of {len(data):,} bytes "
            f"on disk), over the {budget / 2**20:,.0f} MiB it may take: split it"
        )


def parse_json(
    data: bytes | str, path: str | Path, error: type[InputError] = FileError, budget: int = JSON_BUDGET
) -> Any:
    """``data`` parsed, when what it would hold fits ``budget``; damage (not JSON, not UTF-8, nested too deep) or a
    shape past the budget is one line naming ``path``."""
    check_json_cost(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data, path, error, budget)
    try:
        return json.loads(data)
    except RecursionError:
        raise error(f"{path}: JSON nested too deep to read") from None
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text (byte {e.start})") from None
    except ValueError as e:
        raise error(f"{path}: not JSON ({' '.join(str(e).split())[:120]})") from None


def read_json(
    path: str | Path, limit: int, what: str = "file", error: type[InputError] = FileError, budget: int = JSON_BUDGET
) -> Any:
    """A JSON file: :func:`read_bytes` within ``limit``, then :func:`parse_json` within ``budget``."""
    return parse_json(read_bytes(path, limit, what, error), path, error, budget)


def loads_bounded(text: str, budget: int = 64 * 2**20) -> Any:
    """A JSON string found inside a file (an MLflow span's inputs): parsed within ``budget``, or ValueError (its
    caller keeps the text as it is); nesting too deep is a ValueError too."""
    raw = text.encode("utf-8", "surrogatepass")
    if json_cost(raw) > budget:
        raise ValueError("too large once parsed")
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deep") from None


def check_csv_shape(
    data: bytes, path: str | Path, max_columns: int, max_cells: int, error: type[InputError] = FileError
) -> None:
    """Before pandas parses a CSV: at most ``max_columns`` in its header and about ``max_cells`` in all (pandas
    holds each cell as an object: a header of 1.8 M columns in 15 MiB took it past 2 GiB)."""
    header = re.split(rb"\r\n|\r|\n", data, maxsplit=1)[0]  # CR alone ends a line too (Excel's Macintosh CSV)
    columns = header.count(b",") + 1
    if columns > max_columns:
        raise error(f"{path}: its header has {columns:,} columns, over the {max_columns:,} this kind of file may have")
    cells = data.count(b",") + data.count(b"\n") + data.count(b"\r") + 1
    if cells > max_cells:
        raise error(f"{path}: about {cells:,} cells, over the {max_cells:,} a file of this kind may have")


# --- writing -------------------------------------------------------------------------------------------------


def check_inside(path: str | Path, within: str | Path | None, error: type[InputError] = FileError) -> None:
    """``path`` stays under ``within`` with no link on the way down (the folder itself may be a link): what vocab
    keeps in a run is read and written there, never through a link to another place."""
    if within is None:
        return
    path, within = Path(path), Path(within)
    try:
        rel = path.absolute().relative_to(within.absolute())
    except ValueError:
        raise error(f"{path}: outside {within}, where vocab writes") from None
    p = within
    for part in rel.parts:
        p = p / part
        if p.is_symlink():
            raise error(f"{p} is a link (to {os.readlink(p)}); vocab writes only inside {within}: make it a folder")


def _unwritable(path: Path, e: OSError, error: type[InputError]) -> InputError:
    if e.errno == errno.EISDIR or path.is_dir():
        return error(f"{path} is a folder where vocab writes a file: move it away")
    if e.errno == errno.ENAMETOOLONG:
        return error(f"{str(path)[:200]}: a file name too long for this file system")
    return error(f"{path}: cannot be written ({e.strerror})")


def make_dir(path: str | Path, within: str | Path | None = None, error: type[InputError] = FileError) -> Path:
    """``path`` as a folder (made with its parents when missing), never through a link out of ``within``; a file in
    its place, or a place that cannot take it, is one line."""
    path = Path(path)
    check_inside(path, within, error)
    if path.exists() and not path.is_dir():
        raise error(f"{path} is a file where vocab keeps a folder: move it away")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise error(f"{path} (or a folder above it) is a file where vocab keeps a folder: move it away") from None
    except OSError as e:
        raise error(f"{path}: cannot be made ({e.strerror})") from None
    return path


def check_writable(path: str | Path, within: str | Path | None = None, error: type[InputError] = FileError) -> None:
    """Before a command writes: ``path`` can take a file (not a folder; its folder exists or can be made, and lets
    a file be made in it), so a refusal comes before anything is written."""
    path = Path(path)
    check_inside(path, within, error)
    if path.is_dir():
        raise error(f"{path} is a folder where vocab writes a file: move it away")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise error(f"{parent} is a file where vocab keeps a folder: move it away")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=".vocab-check.", suffix=".tmp")
    except OSError as e:
        raise error(f"{parent}: cannot be written ({e.strerror})") from None
    os.close(fd)
    os.unlink(tmp)


def write_bytes_atomic(
    path: str | Path, data: bytes, within: str | Path | None = None, error: type[InputError] = FileError
) -> None:
    """Write ``path`` whole or not at all: a temporary file of its own (a unique name, so two writers never share
    one) in the same folder, then renamed over it; the file keeps its mode. A place that cannot take it is one line
    naming it, and nothing is left behind."""
    path = Path(path)
    check_inside(path, within, error)
    if path.is_dir():
        raise error(f"{path} is a folder where vocab writes a file: move it away")
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:200]}.", suffix=".tmp")
    except OSError as e:
        if e.errno == errno.ENOTDIR or (path.parent.exists() and not path.parent.is_dir()):
            raise error(f"{path.parent} is a file where vocab keeps a folder: move it away") from None
        raise _unwritable(path.parent, e, error) from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~umask)  # mkstemp's is 0600
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise _unwritable(path, e, error) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(
    path: str | Path, text: str, within: str | Path | None = None, error: type[InputError] = FileError
) -> None:
    write_bytes_atomic(path, text.encode("utf-8"), within, error)


def iter_lines(
    path: str | Path, limit: int, max_line: int, what: str = "file", error: type[InputError] = FileError
) -> Iterator[tuple[int, bytes]]:
    """A JSON Lines file's lines (number, bytes without the newline), streamed in bounded blocks from a regular file
    of at most ``limit`` bytes; a line over ``max_line`` bytes is one line naming it."""
    path = Path(path)
    st = check_file(path, what, error)
    if st.st_size > limit:
        raise error(f"{path}: {st.st_size:,} bytes, over the {limit:,} a {what} may have")
    n, total = 0, 0
    with path.open("rb") as f:
        while True:
            line = f.readline(max_line + 1)
            if not line:
                return
            total += len(line)
            if total > limit:
                raise error(f"{path}: grew past the {limit:,} bytes a {what} may have while it was read")
            n += 1
            if len(line) > max_line and not line.endswith(b"\n"):
                raise error(f"{path}: line {n} is over {max_line:,} bytes")
            yield n, line.rstrip(b"\n")


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes (hex), read in blocks: the one hash of a file every record names."""
    import hashlib

    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
