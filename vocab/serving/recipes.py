"""The CPU serving recipe for this machine's instruction set.

On the ``cpu`` profile a model whose config leaves ``dtype`` out is served in the dtype its machine's recipe names.
The recipes are measured, not assumed (benchmarks/results/, docs/serving.md): vLLM's CPU kernels for one dtype differ
by instruction set, and so do both what a rerun repeats and how fast it runs.

- **AVX-512**: float32, from rows measured on a faster machine whose instruction sets were not recorded
  (``rerun.json``, rows ``reference-bf16`` and ``committed``, ``+dirty``: their ``provenance`` says so; they are
  evidence for no machine kind). There a bfloat16 rerun repeated 82.9 % of attempts (its kernels depend on the
  requests beside one) and float32 346 of 346; float32 repeated on every machine measured since.
- **AVX2 only** (no AVX-512: most laptops' and many cloud CPUs): float32 too. There bfloat16 runs PyTorch's
  reference GEMM (``at::native::cpublas``, a dot product per output; ``profile_gemma3_bfloat16_avx2.svg``); float32
  runs oneDNN's AVX2 brgemm kernels (``profile_gemma3_float32_avx2.svg``). Giving gemma both cores gained 1.09x,
  two gemma replicas lost (``avx2_recipes.json``).

A config that names a dtype keeps it; ``vocab serve --dry-run`` prints which recipe applies and why, and a run's
manifest records it with each served model.
"""

from __future__ import annotations

from dataclasses import dataclass

from vocab.machine import machine


@dataclass(frozen=True)
class CpuRecipe:
    family: str  # the instruction-set family it is for: avx512 | avx2 | unmeasured
    dtype: str  # what a model whose config leaves dtype out is served in
    why: str  # the measurement behind it, in one line


RECIPES = {
    "avx512": CpuRecipe(
        "avx512",
        "float32",
        "on a machine whose instruction sets were not recorded, a bfloat16 rerun repeated 82.9 % and float32 346 of "
        "346 at 1,834 attempts/h (benchmarks/results/rerun.json, +dirty rows: their provenance says so)",
    ),
    "avx2": CpuRecipe(
        "avx2",
        "float32",
        "without AVX-512 bfloat16 falls back to PyTorch's reference GEMM (profile_gemma3_bfloat16_avx2.svg); "
        "float32 gave the same text alone and among 15 others (needle.json, committed@avx2), and no other layout "
        "gained more than 1.09x (avx2_recipes.json)",
    ),
    "unmeasured": CpuRecipe(
        "unmeasured",
        "float32",
        "no recipe was measured on this instruction set (neither AVX-512 nor AVX2: an ARM CPU, say); float32 is "
        "the dtype that repeated on every machine measured (rerun.json)",
    ),
}


def family(isa: list[str] | tuple[str, ...]) -> str:
    """``avx512`` when the CPU has AVX-512 (foundation), ``avx2`` when it has AVX2 only (the kernels vLLM and
    PyTorch pick differ between the two), else ``unmeasured`` (no recipe was measured there: ARM, an old x86)."""
    if "avx512f" in isa:
        return "avx512"
    return "avx2" if "avx2" in isa else "unmeasured"


def cpu_recipe(isa: list[str] | tuple[str, ...] | None = None) -> CpuRecipe:
    """The recipe for ``isa`` (default: this machine's instruction sets)."""
    return RECIPES[family(machine()["isa"] if isa is None else isa)]


def served_dtype(dtype: str | None, profile: str, isa: list[str] | tuple[str, ...] | None = None) -> str:
    """The dtype a model is served in: its config's, else on the cpu profile its machine's recipe's, else bfloat16
    (a GPU's)."""
    if dtype:
        return dtype
    return cpu_recipe(isa).dtype if profile == "cpu" else "bfloat16"


def recipe_line(cfg) -> str:
    """`vocab serve --dry-run`'s first line on the cpu profile: this machine's recipe, the models it serves (those
    whose config leaves dtype out) and why."""
    r = cpu_recipe()
    left = sorted(m.name for m in cfg.models.values() if m.served and not m.serve.dtype)
    return (
        f"# cpu recipe for this machine ({r.family}): dtype {r.dtype} for "
        f"{', '.join(left) or 'no model (each config names its dtype)'}: {r.why}"
    )
