"""Config parsing: valid configs load; every bad value is reported with its file and dotted key."""

from __future__ import annotations

from pathlib import Path

import pytest

from vocab.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]

GOOD = """
[project]
max_calls = 50
[models.w]
kind = "embedded"
asset = "smollm2-135m-instruct"
port = 8201
[models.w.sampling]
temperature = 0.3
top_k = 20
[models.api]
kind = "endpoint"
base_url = "https://example.invalid/v1"
api_key_env = "MY_KEY"
model = "big-judge"
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "cfg.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "configs").glob("*.toml")))
def test_shipped_configs_load(name):
    cfg = load_config(ROOT / "configs" / name)
    assert cfg.models and all(m.served for m in cfg.models.values())


def test_good_config(tmp_path):
    cfg = load_config(write(tmp_path, GOOD))
    assert cfg.max_calls == 50
    w, api = cfg.model("w"), cfg.model("api")
    assert w.base_url == "http://127.0.0.1:8201/v1" and w.sampling.top_k == 20 and w.sampling.temperature == 0.3
    assert not api.served and api.base_url == "https://example.invalid/v1" and api.request_model == "big-judge"


@pytest.mark.parametrize(
    "change, key",
    [
        (("port = 8201", 'port = "8201"'), "models.w.port"),
        (("port = 8201", "port = 80"), "models.w.port"),
        (('kind = "embedded"', 'kind = "docker"'), "models.w.kind"),
        (('asset = "smollm2-135m-instruct"', 'asset = "llama-70b"'), "models.w.asset"),
        (("temperature = 0.3", "temperature = -1"), "models.w.sampling.temperature"),
        (("temperature = 0.3", "temprature = 0.3"), "models.w.sampling.temprature"),
        (("max_calls = 50", "max_calls = true"), "project.max_calls"),
        (('base_url = "https://example.invalid/v1"', ""), "models.api.base_url"),
        (("[project]", '[project]\nprofile = "tpu"'), "project.profile"),
        # values TOML allows that no setting takes, caught at load rather than when a server starts
        (("temperature = 0.3", "temperature = nan"), "models.w.sampling.temperature"),
        (("top_k = 20", "top_k = 20\ntop_p = inf"), "models.w.sampling.top_p"),
        (('model = "big-judge"', 'model = "big-judge"\ntimeout_s = nan'), "models.api.timeout_s"),
        (('model = "big-judge"', 'model = "big-judge"\ntimeout_s = -inf'), "models.api.timeout_s"),
        (("port = 8201", "port = 8201\n[models.w.serve]\nkv_cache_gib = 100000000"), "models.w.serve.kv_cache_gib"),
        (("port = 8201", 'port = 8201\n[models.w.serve]\nchat_template = "none.jinja"'), "chat_template"),
        (("port = 8201", 'port = 8201\n[models.w.serve]\nchat_template = "vocab:none.jinja"'), "chat_template"),
        (("[project]", "[lop]\nmax_attempts = 3\n[project]"), "lop"),
        (("[project]", "[model.x]\nkind = 1\n[project]"), "model"),
    ],
)
def test_bad_value_names_file_and_key(tmp_path, change, key):
    path = write(tmp_path, GOOD.replace(*change, 1))
    with pytest.raises(ConfigError) as e:
        load_config(path)
    msg = str(e.value)
    assert msg.startswith(str(path)) and key in msg and "\n" not in msg


def test_missing_file_and_bad_toml(tmp_path):
    with pytest.raises(ConfigError, match="no such config"):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "[models.w\nkind="))


def test_a_config_that_is_not_utf8_deeply_nested_or_huge_is_one_line(tmp_path):
    p = tmp_path / "cfg.toml"
    p.write_bytes(GOOD.encode() + b"# caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(p)
    p.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match="not valid TOML") as e:
        load_config(p)
    assert "\n" not in str(e.value)
    with p.open("w") as f:
        f.truncate(10**9)  # sparse
    with pytest.raises(ConfigError, match="over the 1,000,000 a config may have"):
        load_config(p)


def test_two_servers_on_one_port(tmp_path):
    text = GOOD + '[models.x]\nkind = "vllm"\nmodel = "some/model"\nport = 8201\n'
    with pytest.raises(ConfigError, match=r"port 8201 is used twice \(models\.\w+ and models\.\w+\)"):
        load_config(write(tmp_path, text))


@pytest.mark.parametrize("name", ["a__b", "a_", "_a", "a.b"])
def test_a_model_name_that_could_share_a_cell_is_refused(tmp_path, name):
    """A cell is named writer__critic: models `a_` and `b` would make cell `a___b`, as would `a` and `_b`."""
    text = GOOD + f'[models."{name}"]\nkind = "vllm"\nmodel = "some/model"\nport = 8209\n'
    with pytest.raises(ConfigError, match=f"models.{name}.*single '_' inside it only"):
        load_config(write(tmp_path, text))


def test_no_models(tmp_path):
    with pytest.raises(ConfigError, match="no model configured"):
        load_config(write(tmp_path, "[project]\nmax_calls = 3\n"))


def test_unknown_model_lookup(tmp_path):
    cfg = load_config(write(tmp_path, GOOD))
    with pytest.raises(ConfigError, match="no model named 'z'"):
        cfg.model("z")


@pytest.mark.parametrize(
    "rpc, words",
    [
        (99999, "data_parallel_rpc_port: must lie in 1024..65535, got 99999"),
        (8201, r"port 8201 is used twice \(models\.\w+ and models\.\w+\)"),  # another model's API port
    ],
)
def test_a_data_parallel_rpc_port_is_range_checked_and_owned_by_one_model(tmp_path, rpc, words):
    """The gpu profile took port 99999 and another model's port for a head's data-parallel RPC; a headless worker
    names its head's port (another node), which is no conflict: configs/gpu-2node.toml loads."""
    text = GOOD + (f'[models.x]\nkind = "vllm"\nmodel = "some/model"\nport = 8301\n[models.x.serve]\n'
                   f'data_parallel_size = 2\ndata_parallel_rpc_port = {rpc}\n')  # fmt: skip
    with pytest.raises(ConfigError, match=words):
        load_config(write(tmp_path, text))
    load_config(Path(__file__).resolve().parents[2] / "configs" / "gpu-2node.toml")


def test_the_assets_a_config_names_are_the_assets_serving_makes():
    """A config's embedded assets are named in vocab.config (reading a config imports no serving code): they are
    the assets vocab.serving.models knows how to prepare, in its order."""
    from vocab.config.types import EMBEDDED_ASSETS
    from vocab.serving.models import ASSETS

    assert tuple(ASSETS) == EMBEDDED_ASSETS


def test_preparing_opens_each_gguf_once_and_puts_the_reader_back(tmp_path):
    """transformers opens the GGUF once for the tokenizer, once for the config and once for the weights: inside
    prepare's block the second and third get the first reader (a stand-in module counts the readers made)."""
    from types import SimpleNamespace

    from vocab.serving.models import _each_gguf_read_once

    made = []

    class Reader:
        def __init__(self, path, mode="r"):
            made.append((str(path), mode))

    gguf = SimpleNamespace(GGUFReader=Reader)
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    with _each_gguf_read_once(gguf):
        first = gguf.GGUFReader(a)  # as transformers' loader calls it, three times a file
        assert gguf.GGUFReader(str(a)) is first and gguf.GGUFReader(a) is first
        assert gguf.GGUFReader(b) is not first
    assert made == [(str(a), "r"), (str(b), "r")]
    assert gguf.GGUFReader is Reader  # restored after the block
