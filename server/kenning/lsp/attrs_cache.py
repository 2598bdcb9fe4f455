"""Importing lsprotocol with its attrs-generated methods compiled once, not on every start.

pygls needs ``lsprotocol.types``, whose ~750 attrs classes each get an ``__init__``, ``__repr__``,
``__eq__``… that attrs writes as source and ``compile()``s at import: about half of the import,
itself a third of an unchanged server restart on the standard library. The source depends only
on the class definitions, so the compiled code objects are kept in one file in kenning's cache
directory, keyed by each script's text and file name, per Python bytecode version; the next
start evaluates them without compiling. Measured on this two-core machine under load (three
imports each, alternated): ``import lsprotocol.types`` 0.67-0.75 s → 0.37-0.39 s; the server's
CPU time from start to ready on the standard library, six restarts each: 1.71 → 1.58 s.

Only attrs' one compile step is replaced, only while lsprotocol is imported, and only when it
has the signature this was written against; anything unexpected (no file, an unreadable or
foreign one, another attrs) falls back to compiling. The file holds code, as ``__pycache__``
does: it is written atomically and user-only, and read only when the user owns it and nobody
else may write it. A workspace's content never reaches it.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import marshal
import os
import sys
import tempfile
import types
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.util import MAGIC_NUMBER
from pathlib import Path

log = logging.getLogger(__name__)

# attr._make._compile_and_eval(script, globs, locs=None, filename=""): compile and exec one
# class's generated methods. Checked before it is replaced, so an attrs that changed it is
# left alone.
ATTRS_COMPILE_PARAMS = ["script", "globs", "locs", "filename"]


@dataclass(slots=True)
class CacheUse:
    """What one import did with the cache (the tests read it)."""

    loaded: int = 0  # code objects read from the file
    reused: int = 0  # of those, evaluated by this import
    compiled: int = 0  # scripts the file did not hold, compiled now
    written: bool = False  # the file was (re)written with what this import used


def cache_file(directory: Path) -> Path:
    tag = sys.implementation.cache_tag or sys.implementation.name
    return directory / f"lsprotocol-attrs-{tag}-{MAGIC_NUMBER.hex()}.marshal"


def import_lsprotocol(directory: Path | None = None) -> CacheUse:
    """Import ``lsprotocol.types`` (a no-op if it is imported), reusing and updating the cache."""
    use = CacheUse()
    if "lsprotocol.types" in sys.modules:
        return use
    try:
        import attr._make as make

        original = make._compile_and_eval
        params = list(inspect.signature(original).parameters)
    except (ImportError, AttributeError, TypeError, ValueError):
        params = []
    if params != ATTRS_COMPILE_PARAMS:
        import lsprotocol.types  # compiled as attrs always does

        return use
    if directory is None:
        from kenning.embedding.cache import cache_dir

        directory = cache_dir()
    path = cache_file(directory)
    known = _read(path)
    use.loaded = len(known)
    used: dict[bytes, types.CodeType] = {}

    def compile_and_eval(
        script: str,
        globs: dict[str, object] | None,
        locs: Mapping[str, object] | None = None,
        filename: str = "",
    ) -> None:
        key = hashlib.blake2b(f"{filename}\0{script}".encode(), digest_size=16).digest()
        code = known.get(key)
        if code is None:
            code = compile(script, filename, "exec")
            use.compiled += 1
        used[key] = code
        eval(code, globs, locs)  # attrs' own step, on attrs' own source

    make._compile_and_eval = compile_and_eval
    try:
        import lsprotocol.types  # noqa: F401
    finally:
        make._compile_and_eval = original
    use.reused = len(used) - use.compiled
    # Rewritten when something was compiled (first start, an upgrade), holding only what this
    # import used, so entries of an older lsprotocol do not pile up.
    if use.compiled:
        use.written = _write(path, used)
    return use


def _read(path: Path) -> dict[bytes, types.CodeType]:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return {}
    except OSError as exc:
        log.info("compiled lsprotocol methods not read (%s): compiling", exc)
        return {}
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        getuid = getattr(os, "getuid", None)
        if (getuid is not None and st.st_uid != getuid()) or st.st_mode & 0o022:
            log.warning("%s is not the user's own file: ignored", path)
            return {}
        try:
            data = marshal.load(f)
        except (EOFError, ValueError, TypeError) as exc:
            log.info("%s is unreadable (%s): compiling", path, exc)
            return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, bytes) and isinstance(v, types.CodeType)}


def _write(path: Path, codes: dict[bytes, types.CodeType]) -> bool:
    tmp = ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")  # mode 0600
        with os.fdopen(fd, "wb") as f:
            marshal.dump(codes, f)
        os.replace(tmp, path)
        return True
    except OSError as exc:
        log.info("compiled lsprotocol methods not kept (%s)", exc)
        if tmp:
            Path(tmp).unlink(missing_ok=True)
        return False
