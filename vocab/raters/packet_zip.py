"""A packet's zip, the one file a rater is handed: written from the packet's folder (:func:`write_packet_zip`),
read back whole and checked (:func:`read_packet_zip`: only a packet's own files, within their size limits, the
wheel the packet names byte for byte), and unpacked where the form opens it (:func:`unpack_packet_zip`), never over
another packet or a rater's work. :func:`read_packet_meta` reads a packet's ``packet.json``."""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
import zlib
from datetime import UTC, datetime
from pathlib import Path

from vocab.datasets.names import NAME, STAGE
from vocab.files import check_file, check_writable, read_bytes
from vocab.records import read_json_object, write_bytes_atomic
from vocab.sampling.sample import CalibrationError

WHEEL = re.compile(r"vocab-[0-9][0-9A-Za-z.+]*-py3-none-any\.whl")  # the one extra member a packet's zip may hold

PACKET_KEYS = ("rater", "sample_sha256", "rubric_full")  # what a packet.json must hold


HANDOUT = ("packet.json", "sheet.jsonl", "rubric.txt", "rate.html", "rate.ipynb", "README.txt")


BEFORE_PAGE = ("rate.html",)  # what a packet made before 2026-12-05 does not hold (its zip still opens)


ZIP_MEMBER_LIMIT = 32 * 2**20  # a sheet of thousands of rows is a few MiB


def write_packet_zip(packet: Path) -> Path:
    """``packets/NAME.zip``: the hand-out files under ``NAME/`` and nothing else (no ratings, no session), with
    fixed timestamps so the same packet always makes the same bytes. A folder missing one of them, or whose wheel is
    not the one packet.json names (name and sha256), is refused: the zip would be one the form refuses."""

    meta = read_packet_meta(packet)
    fix = "move the packet's folder away and make it again"
    wheel = meta.get("wheel", {})
    if (
        not isinstance(wheel, dict)
        or not isinstance(wheel.get("name", ""), str)
        or (wheel and not (WHEEL.fullmatch(wheel.get("name", "")) and isinstance(wheel.get("sha256"), str)))
    ):
        raise CalibrationError(f"{packet / 'packet.json'}: its wheel is not a wheel's record (name, sha256): {fix}")
    wheels = [wheel["name"]] if wheel else []  # the one packet.json names
    files = {}
    for name in (*HANDOUT, *wheels):
        if not (packet / name).is_file():
            raise CalibrationError(f"{packet / name}: missing from the packet (or not a file): {fix}")
        files[name] = read_bytes(packet / name, 256 * 2**20, "packet's file", CalibrationError)
    if wheels and hashlib.sha256(files[wheels[0]]).hexdigest() != wheel["sha256"]:
        raise CalibrationError(f"{packet / wheels[0]} is not the wheel packet.json names (its sha256 differs): {fix}")
    try:  # the packet's own date on its files (the same packet, the same bytes)
        made = datetime.fromisoformat(str(meta.get("created"))).astimezone(UTC).timetuple()[:6]
    except ValueError:
        made = (2020, 1, 1, 0, 0, 0)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            info = zipfile.ZipInfo(f"{packet.name}/{name}", date_time=made)
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            z.writestr(info, data)
    out = packet.with_suffix(".zip")
    write_bytes_atomic(out, buf.getvalue(), packet.parent, CalibrationError)
    return out


def _packet_folder_name(top: str) -> bool:  # a packet's folder: its rater's name, or a later stage's (NAME-stageK)
    m = STAGE.fullmatch(top)
    return bool(NAME.fullmatch(m[1]) if m else NAME.fullmatch(top))


def read_packet_zip(path: Path) -> tuple[str, dict[str, bytes], dict]:
    """A packet's zip read and checked whole, nothing written: its folder's name, its files and its packet.json. A
    zip that is not a packet's (other names, a path outside its folder, an oversized member, a wheel other than
    the one packet.json names) is one line."""

    check_file(path, "packet's zip", CalibrationError)
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise CalibrationError(f"{path}: not a packet's zip ({e})") from None
    with z:
        infos = z.infolist()
        tops = {i.filename.split("/", 1)[0] for i in infos}
        if len(tops) != 1 or not _packet_folder_name(top := tops.pop()):
            raise CalibrationError(f"{path}: not a packet's zip (it holds one folder, named after its rater)")
        names = {i.filename for i in infos if not i.is_dir()}
        extra = sorted(n.split("/", 1)[1] for n in names - {f"{top}/{n}" for n in HANDOUT} if n.startswith(f"{top}/"))
        wheels = extra if len(extra) == 1 and WHEEL.fullmatch(extra[0]) else []  # vocab's wheel, to install from
        held = tuple(n for n in HANDOUT if f"{top}/{n}" in names or n not in BEFORE_PAGE)  # an older zip: no page
        if names != {f"{top}/{n}" for n in (*held, *wheels)}:
            raise CalibrationError(
                f"{path}: not a packet's zip (it must hold exactly {', '.join(HANDOUT)} in {top}/, and vocab's wheel)"
            )
        if big := [i.filename for i in infos if i.file_size > ZIP_MEMBER_LIMIT]:
            raise CalibrationError(f"{path}: {big[0]} is over {ZIP_MEMBER_LIMIT // 2**20} MiB: not a packet's zip")
        try:
            files = {n: z.read(f"{top}/{n}") for n in (*held, *wheels)}  # a damaged member fails here, first
            meta = json.loads(files["packet.json"])
        except (zipfile.BadZipFile, zlib.error, OSError, ValueError, EOFError, RuntimeError, NotImplementedError) as e:
            # RuntimeError: an encrypted member; NotImplementedError: a compression Python does not read
            raise CalibrationError(f"{path}: a damaged packet's zip ({type(e).__name__}: {e})") from None
        if not isinstance(meta, dict) or any(k not in meta for k in PACKET_KEYS):
            raise CalibrationError(f"{path}: its packet.json is not a packet description")
        named = meta.get("wheel") if isinstance(meta.get("wheel"), dict) else {}
        if wheels != ([named.get("name")] if named else []) or (
            wheels and hashlib.sha256(files[wheels[0]]).hexdigest() != named.get("sha256")
        ):  # the wheel a rater installs is the one the packet was made with, byte for byte
            raise CalibrationError(f"{path}: its wheel is not the one packet.json names (name and sha256)")
    return top, files, meta


def unpack_packet_zip(path: Path, into: Path | None = None, checked: tuple | None = None) -> Path:
    """A packet's zip unpacked for the form: into ``into``, by default the folder named in the zip beside it. An
    earlier unpacking of the same packet (the rater's ratings in it) is used as it is, never overwritten; a zip
    that is not a packet's is refused whole (:func:`read_packet_zip`, or its result as ``checked``)."""
    top, files, meta = checked or read_packet_zip(path)
    dest, before = unpack_target(path, into, top, meta)
    if before:
        return dest  # unpacked before: the rater's work in it stays
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for n in files:
            if n != "packet.json":
                write_bytes_atomic(dest / n, files[n], error=CalibrationError)
        write_bytes_atomic(dest / "packet.json", files["packet.json"], error=CalibrationError)  # last: whole
    except OSError as e:
        raise CalibrationError(f"{dest}: cannot unpack the packet there ({e.strerror or e})") from None
    read_packet_meta(dest)
    return dest


def unpack_target(path: Path, into: Path | None, top: str, meta: dict) -> tuple[Path, bool]:
    """Where a packet's zip unpacks, checked before anything is written, and whether it was unpacked there before
    (the same packet: used as it is). A file there, another packet, or a folder holding other things is one line."""
    dest = Path(into) if into is not None else path.parent / top
    if dest.exists() and not dest.is_dir():
        raise CalibrationError(f"{dest} is a file, not a folder to unpack into")
    if (dest / "packet.json").exists():
        there = read_packet_meta(dest)
        if there.get("sample_sha256") != meta.get("sample_sha256") or there.get("rater") != meta.get("rater"):
            raise CalibrationError(f"{dest} holds another packet; unpack this one elsewhere (--into DIR)")
        return dest, True
    if dest.exists() and any(dest.iterdir()):
        raise CalibrationError(f"{dest} exists and is not this packet; unpack elsewhere (--into DIR)")

    check_writable(dest / "packet.json", error=CalibrationError)
    return dest, False


def read_packet_meta(packet: str | Path) -> dict:
    """A packet's ``packet.json``; a damaged one (cut, not JSON, not what `vocab packet` writes) is one line."""
    keys = PACKET_KEYS
    fix = "move the packet away and make it again"
    return read_json_object(Path(packet) / "packet.json", keys, "a packet description", fix, CalibrationError)
