"""The on-disk cache of derived model graphs: atomic, verified, safe with concurrent builders.

Layout: ``<cache dir>/models/<key>.onnx`` with a ``<key>.onnx.json`` sidecar recording the
file's SHA-256, and ``<key>.lock`` taken (``fcntl.flock``) while building, so a second process
waits and then reuses the first one's result instead of building it again. Files are written
to a temp file in the same directory, fsynced and ``os.replace``d into place, so a reader sees
a complete old file or a complete new one. A file whose hash does not match its sidecar
(truncated, bit-flipped, or a builder killed between the two renames) is rebuilt.

A build that fails for a reason the recipe cannot fix (the model does not fit it) leaves a
``<key>.failed`` note, so that every start does not retry it; an onnxruntime upgrade retries.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: builders may then race, which atomic writes make harmless
    fcntl = None  # type: ignore[assignment]

__all__ = ["cache_dir", "load_or_build", "read_failure", "record_failure", "sha256_hex"]

log = logging.getLogger(__name__)


def cache_dir() -> Path:
    """``$KENNING_CACHE_DIR``, else ``$XDG_CACHE_HOME/kenning``, else ``~/.cache/kenning``."""
    explicit = os.environ.get("KENNING_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "kenning"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_or_build(
    key: str,
    build: Callable[[], bytes],
    *,
    validate: Callable[[bytes], None] | None = None,
    directory: Path | None = None,
) -> bytes:
    """The bytes cached under ``key``, building (and storing) them when absent or corrupt.

    ``validate`` may reject a cached file that hashes fine but no longer works (say, after an
    onnxruntime downgrade) by raising; it is then rebuilt once. Exceptions from ``build`` pass
    through. If the cache directory cannot be written, the built bytes are still returned.
    """
    models = (directory or cache_dir()) / "models"
    path = models / f"{key}.onnx"
    cached = _read_verified(path)
    if cached is not None and _valid(cached, validate, path):
        return cached
    try:
        models.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        log.warning("model cache %s is not writable (%s); building in memory", models, exc)
        return build()
    with _build_lock(models / f"{key}.lock"):
        # Another process may have built it while we waited for the lock.
        cached = _read_verified(path)
        if cached is not None and _valid(cached, validate, path):
            return cached
        data = build()
        try:
            _atomic_write(path, data)
            sidecar = {"sha256": sha256_hex(data), "size": len(data)}
            _atomic_write(_sidecar(path), json.dumps(sidecar).encode())
        except OSError as exc:
            log.warning("cannot store %s (%s); it will be rebuilt next time", path, exc)
        with contextlib.suppress(OSError):
            (models / f"{key}.failed").unlink()
    return data


def read_failure(key: str, *, directory: Path | None = None) -> str | None:
    """The note a failed build left for ``key``, or None."""
    path = (directory or cache_dir()) / "models" / f"{key}.failed"
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def record_failure(key: str, note: str, *, directory: Path | None = None) -> None:
    """Remember that building ``key`` failed, so that it is not retried on every start."""
    models = (directory or cache_dir()) / "models"
    try:
        models.mkdir(parents=True, exist_ok=True)
        _atomic_write(models / f"{key}.failed", note.encode())
    except OSError as exc:
        log.debug("cannot record the failed build of %s: %s", key, exc)


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _read_verified(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
        meta = json.loads(_sidecar(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("cached model %s unreadable (%s): rebuilding", path, exc)
        return None
    if not isinstance(meta, dict) or meta.get("sha256") != sha256_hex(data):
        log.warning("cached model %s does not match its recorded hash: rebuilding", path)
        return None
    return data


def _valid(data: bytes, validate: Callable[[bytes], None] | None, path: Path) -> bool:
    if validate is None:
        return True
    try:
        validate(data)
    except Exception as exc:
        log.warning("cached model %s cannot be used (%s): rebuilding", path, exc)
        return False
    return True


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    # The rename is durable only once the directory entry is on disk.
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


@contextlib.contextmanager
def _build_lock(path: Path) -> Iterator[None]:
    if fcntl is None:
        yield
        return
    try:
        fh = open(path, "a+b")  # noqa: SIM115 - held for the duration of the with-block
    except OSError:
        yield  # no lock file (read-only corner cases): building twice is only wasteful
        return
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        except OSError as exc:  # file systems without locks: proceed, writes stay atomic
            log.debug("cannot lock %s: %s", path, exc)
        yield
    finally:
        fh.close()  # closing releases the lock
