"""What proves a store was written by this user's kenning: a secret key kept outside every workspace.

A repository is untrusted input, and it can ship a ``.kenning/`` of its own (or git can write
files into ours: git overwrites ignored files on checkout). So nothing in a store is believed
because of where it lies; it is believed because it carries a MAC made with a key the repository
cannot know:

- the key: 32 random bytes in ``$KENNING_STATE_DIR`` (else ``$XDG_STATE_HOME/kenning``, else
  ``~/.local/state/kenning``) as ``store-key``, mode 0600, made on first use;
- the store marker ``<store>/kenning-store``: a random store id and HMAC(key, id). A directory
  without a valid marker was not made by kenning and is never written into;
- the database's token (meta ``store_auth``): HMAC(key, id), written when kenning creates the
  database, checked before kenning writes to it or believes anything it says;
- the graph file's MAC: keyed BLAKE2b over its bytes, checked before usearch sees them.

This module owns the key, the MACs and the marker; ``location`` decides which directory is the
store, ``db`` and ``vectors`` call the checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import threading
import time
from pathlib import Path

from kenning.types import KenningError

KEY_FILENAME = "store-key"
KEY_BYTES = 32
MARKER_FILENAME = "kenning-store"
_MARKER_HEADER = "kenning store 1"
_MARKER_MAX = 4096

_key_cache: dict[str, bytes] = {}
_key_lock = threading.Lock()


class StoreRefused(KenningError):
    """A store location kenning will not use, or a key it cannot trust; the message says why."""


def state_dir() -> Path:
    """``$KENNING_STATE_DIR``, else ``$XDG_STATE_HOME/kenning``, else ``~/.local/state/kenning``."""
    explicit = os.environ.get("KENNING_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    try:
        base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    except RuntimeError as exc:  # no $HOME and no passwd entry
        raise StoreRefused(
            f"cannot find a state directory for kenning's key ({exc}); set KENNING_STATE_DIR"
        ) from exc
    return base / "kenning"


def cache_dir() -> Path:
    """``$KENNING_CACHE_DIR``, else ``$XDG_CACHE_HOME/kenning``, else ``~/.cache/kenning``.

    The same rule as ``kenning.embedding.cache.cache_dir``, repeated so that the store does not
    import the embedding package (and onnxruntime with it).
    """
    explicit = os.environ.get("KENNING_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    try:
        base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    except RuntimeError as exc:
        raise StoreRefused(
            f"cannot find a cache directory for kenning ({exc}); set KENNING_CACHE_DIR"
        ) from exc
    return base / "kenning"


def store_key() -> bytes:
    """This user's store key, made on first use (0600 in a 0700 directory)."""
    directory = state_dir()
    cache_key = str(directory)
    with _key_lock:
        key = _key_cache.get(cache_key)
        if key is None:
            key = _load_or_make_key(directory)
            _key_cache[cache_key] = key
        return key


def _load_or_make_key(directory: Path) -> bytes:
    path = directory / KEY_FILENAME
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise StoreRefused(f"cannot create kenning's state directory {directory}: {exc}") from exc
    key = _read_key(path)
    if key is not None:
        return key
    # Write a temp file and link it into place: two processes starting at once agree on one key
    # (link never replaces), and a reader never sees a half-written key.
    tmp = directory / f"{KEY_FILENAME}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, secrets.token_bytes(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    except OSError as exc:
        raise StoreRefused(f"cannot write kenning's store key {path}: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    key = _read_key(path)
    if key is None:
        raise StoreRefused(f"kenning's store key {path} vanished while it was being made")
    return key


def _read_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreRefused(f"cannot read kenning's store key {path}: {exc} (a symlink is refused)") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise StoreRefused(f"kenning's store key {path} is not a regular file")
        if st.st_uid != os.getuid():
            raise StoreRefused(f"kenning's store key {path} belongs to another user (uid {st.st_uid})")
        if stat.S_IMODE(st.st_mode) & 0o077:
            raise StoreRefused(
                f"kenning's store key {path} is readable by others (mode {stat.S_IMODE(st.st_mode):o}):"
                " delete it (every index is then rebuilt once) or chmod 600 it"
            )
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise StoreRefused(f"kenning's store key {path} is damaged ({len(data)} bytes): delete it")
    return data


# -- MACs ----------------------------------------------------------------------------------------


def _mac(key: bytes, purpose: bytes, message: bytes) -> str:
    return hmac.new(key, purpose + b"\0" + message, hashlib.sha256).hexdigest()


def database_token(key: bytes, store_id: str) -> str:
    """The token a database kenning created for store ``store_id`` carries in its meta table."""
    return _mac(key, b"kenning-database-v1", store_id.encode())


def same_mac(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


# The graph file's MAC is HMAC-SHA-256: OpenSSL runs it on the CPU's SHA instructions, 2.2-2.5x
# the keyed BLAKE2b it replaced on this machine (which cost 0.71 s of a million-chunk start). The
# prefix names the algorithm; a MAC recorded without one is the older BLAKE2b, still accepted, so
# an upgrade does not throw away a saved graph.
_DATA_MAC_PREFIX = "hmac-sha256:"


def data_mac(key: bytes, data: bytes | bytearray | memoryview) -> str:
    """Keyed MAC of a file's bytes (the graph file)."""
    mac = hmac.new(key, b"kenning-vectors\0", "sha256")
    mac.update(data)  # releases the GIL: the graph's load runs beside the scan
    return _DATA_MAC_PREFIX + mac.hexdigest()


def _legacy_data_mac(key: bytes, data: bytes | bytearray | memoryview) -> str:
    return hashlib.blake2b(data, key=key, digest_size=32, person=b"kenning-vectors").hexdigest()


def data_mac_matches(key: bytes, data: bytes | bytearray | memoryview, recorded: str) -> bool:
    """Whether ``data`` has the MAC ``recorded`` (by ``data_mac``, or by the older BLAKE2b)."""
    if recorded.startswith(_DATA_MAC_PREFIX):
        return same_mac(data_mac(key, data), recorded)
    return len(recorded) == 64 and same_mac(_legacy_data_mac(key, data), recorded)


# -- the store marker --------------------------------------------------------------------------


def read_marker(store: Path, key: bytes) -> str | None:
    """The store id if ``store`` holds a marker made with ``key``; None otherwise (never raises
    for what a repository could have put there)."""
    path = store / MARKER_FILENAME
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > _MARKER_MAX:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        raw = os.read(fd, _MARKER_MAX)
    except OSError:
        return None
    finally:
        os.close(fd)
    lines = raw.decode("ascii", "replace").splitlines()
    if len(lines) != 3 or lines[0] != _MARKER_HEADER:
        return None
    id_field, mac_field = lines[1].split(" ", 1), lines[2].split(" ", 1)
    if len(id_field) != 2 or len(mac_field) != 2 or id_field[0] != "id" or mac_field[0] != "mac":
        return None
    store_id = id_field[1]
    if len(store_id) != 32 or any(c not in "0123456789abcdef" for c in store_id):
        return None
    if not same_mac(mac_field[1], _mac(key, b"kenning-store-v1", store_id.encode())):
        return None
    return store_id


def write_marker(store: Path, key: bytes) -> str:
    """Mark ``store`` as kenning's and return its id; if a valid marker appears meanwhile (another
    process adopting the same new directory), that one wins and its id is returned."""
    store_id = secrets.token_hex(16)
    text = f"{_MARKER_HEADER}\nid {store_id}\nmac {_mac(key, b'kenning-store-v1', store_id.encode())}\n"
    tmp = store / f"{MARKER_FILENAME}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, store / MARKER_FILENAME)
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    found = read_marker(store, key)
    if found is None:
        raise StoreRefused(f"{store / MARKER_FILENAME} exists and was not written by this kenning")
    return found


def is_marker_temp(name: str) -> bool:
    """A leftover of ``write_marker`` killed midway: an otherwise empty directory is still new."""
    return name.startswith(MARKER_FILENAME + ".") and name.endswith(".tmp")


# -- files inside a store ----------------------------------------------------------------------


def foreign_file(path: Path) -> str | None:
    """Why ``path`` (a file kenning keeps in its store) cannot be one kenning wrote, or None if it
    is absent or a plain file of this user's with one link. Checked with ``lstat`` before any
    open: SQLite and usearch follow symlinks, and a FIFO would block the opener."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be examined ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_nlink != 1:
        return f"has {st.st_nlink} hard links"
    if st.st_uid != os.getuid():
        return "belongs to another user"
    return None


def aside_name(path: Path, tag: str) -> Path:
    """A free name ``<name>.<tag>-<unix time>[.n]`` next to ``path`` to move it aside to."""
    base = f"{path.name}.{tag}-{int(time.time())}"
    n = 0
    while True:
        aside = path.with_name(f"{base}.{n}" if n else base)
        if not os.path.lexists(aside):
            return aside
        n += 1
