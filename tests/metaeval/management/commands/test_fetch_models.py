"""manage.py fetch_models: the authors' models by default, local paths printed, fetch failures as CommandError."""
from __future__ import annotations

import io
from pathlib import Path

import huggingface_hub
import pytest
import requests
from django.core.management import CommandError, call_command

from metaeval.core.measures.models import AUTHORS_BERTSCORE, AUTHORS_INFOLM


@pytest.fixture
def downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """snapshot_download replaced by a recorder that answers a folder per name (no network)."""
    calls: list[dict[str, object]] = []

    def fake(**kwargs: object) -> str:
        calls.append(kwargs)
        return str(tmp_path / "snapshots" / str(kwargs["repo_id"]).replace("/", "--"))

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    return calls


def run_command(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("fetch_models", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_without_names_it_fetches_the_authors_models(downloads: list[dict[str, object]], tmp_path: Path) -> None:
    out, _ = run_command()
    assert [call["repo_id"] for call in downloads] == [AUTHORS_INFOLM, AUTHORS_BERTSCORE]
    assert out.splitlines() == [
        f"{AUTHORS_INFOLM}\t{tmp_path / 'snapshots' / 'google--bert_uncased_L-2_H-128_A-2'}",
        f"{AUTHORS_BERTSCORE}\t{tmp_path / 'snapshots' / 'distilbert-base-uncased'}",
    ]


def test_named_models_into_a_cache_dir(downloads: list[dict[str, object]], tmp_path: Path) -> None:
    out, err = run_command("org/one", "two", "--cache-dir", str(tmp_path / "cache"), "--verbosity", "2")
    assert [call["repo_id"] for call in downloads] == ["org/one", "two"]
    assert all(call["cache_dir"] == tmp_path / "cache" for call in downloads)
    assert len(out.splitlines()) == 2 and "org/one" in err


def test_an_unreachable_hub_is_a_command_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def unreachable(**kwargs: object) -> str:
        raise requests.exceptions.ConnectionError("Failed to resolve 'huggingface.co'")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    with pytest.raises(CommandError) as caught:
        run_command("--cache-dir", str(tmp_path / "cache"))
    message = str(caught.value)
    assert AUTHORS_INFOLM in message and "machine with internet" in message and str(tmp_path / "cache") in message


def test_help_explains_the_offline_workflow() -> None:
    from metaeval.management.commands.fetch_models import Command

    text = Command().create_parser("manage.py", "fetch_models").format_help()
    assert "HF_HUB_CACHE" in text and "--cache-dir" in text and "internet" in text
