"""Opening a packet where a rater works (`vocab form`): a packet's folder or its zip, unpacked beside it
(:func:`open_packet`), the runs that hold its sample (:func:`runs_holding`: a rater who also holds the run is told so,
since the key sits beside the sheet), and the JupyterLab command that opens its form (:func:`lab_argv`)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from vocab.layout import RunDir
from vocab.machine import salted
from vocab.raters.packet import checkout, read_packet_zip, unpack_packet_zip, unpack_target
from vocab.raters.packet_zip import read_packet_meta
from vocab.sampling.sample import CalibrationError


def runs_holding(sample_sha256: str, packet: Path) -> list[Path]:
    """This machine's runs that hold the packet's sample, key and all: the run the packet lies in, and every run of
    the vocab checkout this vocab is imported from (``data/``, matched by the blind sheet's hash, or a pilot's first
    stage's). On a rater's machine, where vocab is installed from the packet's wheel, there are none."""

    runs = [RunDir(packet.resolve().parent.parent)]  # a packet is <run>/packets/<rater>
    if (root := checkout()) is not None and (root / "data").is_dir():
        runs += [RunDir(p.parent.parent) for p in (root / "data").glob("**/calibration/blind_sheet.jsonl")]
    found = []
    for run in dict.fromkeys(runs):
        if not run.key.is_file():
            continue
        sheet, earlier = run.sheet, run.earlier_sheets
        hashes = {hashlib.sha256(sheet.read_bytes()).hexdigest()} if sheet.is_file() else set()
        hashes |= set(earlier.read_text().split()) if earlier.is_file() else set()
        if sample_sha256 in hashes:
            found.append(run.root)
    return found


def made_here(meta: dict) -> bool:
    """Whether packet.json says the packet was cut on this machine (its salted hash of the machine matches)."""

    made = meta.get("made_on")
    if not isinstance(made, dict) or not isinstance(made.get("salt"), str) or not isinstance(made.get("machine"), str):
        return False  # a packet made before 2026-12-05 (runs_holding still looks for its run)
    return salted(made["salt"]) == made["machine"]


def open_packet(packet: Path, into: Path | None, *, same_machine: bool = False) -> tuple[Path, list[str]]:
    """`vocab form`'s argument as a packet directory: a zip is unpacked (into ``into``, by default beside it); a
    damaged or missing packet is one line. A packet whose run (its key) is on this machine is refused unless
    ``same_machine``: the form's kernel could read the key. Returns the packet and the notes for the rater."""

    notes, checked = [], None
    if packet.suffix == ".zip" and packet.exists():
        checked = read_packet_zip(packet)  # read and checked whole, and where it goes, before anything is unpacked
        unpack_target(packet, into, checked[0], checked[2])
        meta, where = checked[2], packet.parent / checked[0]
    elif into is not None:
        raise CalibrationError("--into is for a packet's zip (vocab form NAME.zip --into DIR)")
    elif not (packet / "packet.json").exists():
        raise CalibrationError(f"{packet}: not a rater's packet (make one: vocab packet --run-dir RUN --rater NAME)")
    else:
        meta, where = read_packet_meta(packet), packet  # a damaged packet is one line here, not inside JupyterLab
    runs = runs_holding(meta["sample_sha256"], where)
    if runs or made_here(meta):
        where_key = f"the packet's run {runs[0]}" if runs else "the run the packet was cut from"
        exposed = (
            f"this machine holds {where_key}, whose calibration/key.csv names the model and the judge's "
            "verdict of every row: the form's kernel can read it"
        )
        if not same_machine:
            raise CalibrationError(
                f"{exposed}. A rater opens rate.html in a browser (it reads nothing else on the "
                "disk), or the form on another machine; open it here anyway with --same-machine"
            )
        notes.append(f"note (--same-machine): {exposed}; to hand the packet to a rater, give them its zip")
    if checked is not None:
        unpacked = unpack_packet_zip(packet, into, checked)
        notes.insert(0, f"{unpacked}: the packet, unpacked from {packet.name}; your ratings are kept here")
        packet = unpacked
    return packet, notes


def lab_argv(packet: Path, port: int, *, no_browser: bool, token: str | None) -> list[str]:
    """The JupyterLab command that serves a packet's form: rooted at the packet, no terminals, nothing asked of the
    internet, the live form stripped before every save."""

    argv = [
        sys.executable,  # this Python's JupyterLab: a venv made from a packet's wheel may have no jupyter script
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={packet.resolve()}",
        "--FileContentsManager.pre_save_hook=vocab.raters.form.strip_live_form",
        "--LabApp.default_url=/lab/tree/rate.ipynb",
        f"--ServerApp.port={port}",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.terminals_enabled=False",  # no shell beside the form: the run's files are not a terminal away
        "--LabApp.news_url=None",  # a rater's JupyterLab asks nothing of the internet: no news feed,
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",  # no update check
        # ... and does not ask whether it may (JupyterLab's news toast): its settings' defaults say no
        f"--LabApp.app_settings_dir={Path(__file__).resolve().parents[1] / 'templates' / 'lab_settings'}",
    ]
    if no_browser:
        argv.append("--no-browser")
    if os.geteuid() == 0:  # containers and CI run as root; JupyterLab refuses that without being told
        argv.append("--allow-root")
    if token is not None:
        argv.append(f"--IdentityProvider.token={token}")
    return argv
