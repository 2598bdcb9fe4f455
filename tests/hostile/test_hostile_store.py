"""A repository prepared by an attacker, aimed at kenning's store: opened by the CLI and the server.

Every case prepares a workspace, opens it with ``kenning index`` + ``kenning search`` and with a
real server (a subprocess over stdio), and checks three things: nothing outside the workspace was
touched (a canary directory's every file: bytes, mode, mtime; and its listing), nothing outside
was returned, and the rest of the workspace was indexed. Each side gets its own copy of the
prepared repository, so the server meets the hostile store as the CLI did, not as the CLI left it.

Two shapes of attack (see docs/security.md):
- "shipped": the repository itself contains ``.kenning`` (any content, links included). It has
  no marker made with this user's key, so it is never opened or written; the index goes to a
  private store in the cache directory.
- "planted": the user's own store exists and git (which overwrites ignored files) replaced files
  inside it. The marker is ours, so each file is checked on its own: links and foreign files are
  moved aside untouched, a database without this store's token is moved aside, a graph whose
  keyed MAC does not match is rebuilt, and names in the database are never used as paths.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kenning.store.trust import data_mac
from tests.conftest import FILES, write_workspace
from tests.reliability.client import Client
from tests.reliability.conftest import StartServer, start_server, tiny_model  # noqa: F401  (fixtures)

INSIDE_TOKEN = "qzinsidetokenxq"
CANARY_TOKEN = "qzcanarysecretxq"
WORKSPACE_FILES = {**FILES, "inside.py": f"def {INSIDE_TOKEN}():\n    return 'found me'\n"}


# -- the canary: everything outside the workspace that an attack could aim at ---------------------


class Canary:
    """A directory outside the workspace whose files must never change, in any way."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir()
        (path / "secret.py").write_text(f"def {CANARY_TOKEN}():\n    return 'hunter2'\n")
        (path / "home.txt").write_text("a file in the user's home\n")
        (path / "vectors.1.usearch").write_bytes(b"not kenning's, only named like it\n" * 10)
        (path / "kenning.sqlite3").write_bytes(b"named like kenning's database, but another app's\n")
        with sqlite3.connect(path / "other-app.sqlite3") as conn:
            conn.execute("CREATE TABLE notes(text TEXT)")
            conn.execute("INSERT INTO notes VALUES ('precious')")
        conn.close()
        os.chmod(path, 0o755)
        self.before = self.snapshot()

    def snapshot(self) -> dict[str, tuple[int, int, str]]:
        out = {}
        for p in [self.path, *sorted(self.path.rglob("*"))]:
            st = os.lstat(p)
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""
            out[str(p.relative_to(self.path))] = (st.st_mode, st.st_mtime_ns, digest)
        return out

    def check(self) -> None:
        assert self.snapshot() == self.before, "something outside the workspace was touched"


@pytest.fixture
def canary(tmp_path: Path) -> Canary:
    return Canary(tmp_path / "outside")


# -- the attacker's own kenning store (made with a key that is not the user's) -------------------


@pytest.fixture(scope="module")
def attacker_store(tmp_path_factory: pytest.TempPathFactory, tiny_model: Path) -> Path:  # noqa: F811
    base = tmp_path_factory.mktemp("attacker")
    root = write_workspace(base / "repo", FILES)
    env = {**os.environ, "KENNING_STATE_DIR": str(base / "attacker-state")}
    out = subprocess.run(
        [sys.executable, "-m", "kenning", "index", str(root), "--model", str(tiny_model), "-q"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return root / ".kenning"


def _set_meta(db: Path, **values: str) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for key, value in values.items():
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _meta(db: Path) -> dict[str, str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()


# -- running both front ends ---------------------------------------------------------------------


def kenning(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kenning", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _inside(rel: str) -> bool:
    """A CLI result path names a file inside the root: relative, without ``..``."""
    return not os.path.isabs(rel) and ".." not in Path(rel).parts


def check_cli(root: Path, model: Path, canary: Canary, extra: tuple[str, ...] = ()) -> None:
    out = kenning("index", str(root), "--model", str(model), "-q", *extra)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    assert f"indexed {len(WORKSPACE_FILES)} files" in out.stdout, out.stdout
    for query, mode in ((INSIDE_TOKEN, "lexical"), (CANARY_TOKEN, "lexical"), ("circle area", "hybrid")):
        out = kenning(
            "search", query, "--root", str(root), "--model", str(model), "--mode", mode, "--json", *extra
        )
        assert out.returncode == 0, out.stderr
        hits = json.loads(out.stdout)["results"]
        assert all(_inside(h["path"]) for h in hits), hits
        assert not any(CANARY_TOKEN in h["preview"] or "hunter2" in h["preview"] for h in hits)
        if query == INSIDE_TOKEN:
            assert hits and hits[0]["path"] == "inside.py", hits
        if mode == "hybrid":
            assert hits, "dense search found nothing"
    canary.check()


def check_server(client: Client, root: Path, canary: Canary) -> None:
    status = client.wait_state("ready")
    assert status["files"] == len(WORKSPACE_FILES) and status["pending"] == 0, status
    found = client.search(INSIDE_TOKEN, mode="lexical")["results"]
    assert found and found[0]["uri"].endswith("/inside.py"), found
    for query, mode in ((CANARY_TOKEN, "lexical"), ("hunter2", "hybrid"), ("area of a circle", "semantic")):
        hits = client.search(query, mode=mode)["results"]
        assert all(h["uri"].startswith(root.resolve().as_uri() + "/") for h in hits), hits
        assert not any(CANARY_TOKEN in h["preview"] or "hunter2" in h["preview"] for h in hits)
        if mode == "semantic":
            assert hits, "dense search found nothing"
    assert client.alive()
    assert client.close() == 0
    canary.check()


Prepare = Callable[[Path, Canary], None]


def run_case(
    tmp_path: Path, canary: Canary, model: Path, start: StartServer, prepare: Prepare
) -> tuple[Path, Path]:
    """Prepare two copies of the repository; open one with the CLI, the other with a server."""
    roots = []
    for side in ("cli", "server"):
        root = write_workspace(tmp_path / side / "repo", WORKSPACE_FILES)
        prepare(root, canary)
        roots.append(root)
    canary.check()
    check_cli(roots[0], model, canary)
    check_server(start(roots[1], {"model": str(model)}), roots[1], canary)
    return roots[0], roots[1]


def tree_state(path: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry under ``path`` (links not followed): mode, mtime and content or link target."""
    out = {}
    for p in [path, *sorted(path.rglob("*"))] if path.is_dir() and not path.is_symlink() else [path]:
        st = os.lstat(p)
        if p.is_symlink():
            what = "-> " + os.readlink(p)
        elif p.is_file():
            what = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            what = ""
        out[str(p.relative_to(path.parent))] = (st.st_mode, st.st_mtime_ns, what)
    return out


# -- "shipped": the repository carries its own .kenning -----------------------------------------


def _ship_store(attacker_store: Path) -> Callable[[Path], Path]:
    def ship(root: Path) -> Path:
        store = root / ".kenning"
        shutil.copytree(attacker_store, store, symlinks=True)
        return store

    return ship


SHIPPED: dict[str, Callable[[Path, Canary, Path], None]] = {}


def shipped(
    name: str,
) -> Callable[[Callable[[Path, Canary, Path], None]], Callable[[Path, Canary, Path], None]]:
    def register(fn: Callable[[Path, Canary, Path], None]) -> Callable[[Path, Canary, Path], None]:
        SHIPPED[name] = fn
        return fn

    return register


@shipped("graph-named-by-absolute-path")
def _abs_graph(root: Path, canary: Canary, attacker: Path) -> None:
    store = _ship_store(attacker)(root)
    _set_meta(store / "kenning.sqlite3", vectors_file=str(canary.path / "vectors.1.usearch"))


@shipped("graph-named-by-relative-path")
def _rel_graph(root: Path, canary: Canary, attacker: Path) -> None:
    store = _ship_store(attacker)(root)
    rel = os.path.relpath(canary.path / "home.txt", store)
    _set_meta(store / "kenning.sqlite3", vectors_file=rel, vectors_generation="0")


@shipped("lock-links-to-a-home-file")
def _lock_link(root: Path, canary: Canary, attacker: Path) -> None:
    store = _ship_store(attacker)(root)
    (store / "lock").unlink()
    (store / "lock").symlink_to(canary.path / "home.txt")


@shipped("database-links-to-another-apps-database")
def _db_link(root: Path, canary: Canary, attacker: Path) -> None:
    store = _ship_store(attacker)(root)
    (store / "kenning.sqlite3").unlink()
    (store / "kenning.sqlite3").symlink_to(canary.path / "other-app.sqlite3")


@shipped("wal-links-outside")
def _wal_link(root: Path, canary: Canary, attacker: Path) -> None:
    store = _ship_store(attacker)(root)
    (store / "kenning.sqlite3-wal").symlink_to(canary.path / "home.txt")
    (store / "kenning.sqlite3-shm").symlink_to(canary.path / "kenning.sqlite3")


@shipped("graph-with-flipped-bytes-and-matching-meta")
def _flipped(root: Path, canary: Canary, attacker: Path) -> None:
    store = _ship_store(attacker)(root)
    (graph,) = store.glob("vectors.*.usearch")
    data = bytearray(graph.read_bytes())
    for i in range(200, len(data), 97):
        data[i] ^= 0x5A
    graph.write_bytes(bytes(data))
    # The MAC "recorded" is one the attacker can compute: with their own key.
    _set_meta(store / "kenning.sqlite3", vectors_size=str(len(data)), vectors_mac=data_mac(bytes(32), data))


@shipped("forged-marker")
def _forged_marker(root: Path, canary: Canary, attacker: Path) -> None:
    store = _ship_store(attacker)(root)
    text = (store / "kenning-store").read_text().splitlines()
    text[2] = "mac " + "0" * 64
    (store / "kenning-store").write_text("\n".join(text) + "\n")


@shipped("store-dir-links-outside")
def _dir_link(root: Path, canary: Canary, attacker: Path) -> None:
    (root / ".kenning").symlink_to(canary.path)


@shipped("store-is-a-regular-file")
def _store_file(root: Path, canary: Canary, attacker: Path) -> None:
    (root / ".kenning").write_text("not a directory\n")


@shipped("gitignore-dangling-link")
def _gitignore_link(root: Path, canary: Canary, attacker: Path) -> None:
    (root / ".kenning").mkdir()
    (root / ".kenning" / ".gitignore").symlink_to(canary.path / "created-by-kenning")


@pytest.mark.parametrize("case", sorted(SHIPPED))
def test_a_shipped_store_is_never_opened_or_written(
    case: str,
    tmp_path: Path,
    canary: Canary,
    attacker_store: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    def prepare(root: Path, canary: Canary) -> None:
        SHIPPED[case](root, canary, attacker_store)

    states: dict[Path, dict[str, tuple[int, int, str]]] = {}
    original_prepare = prepare

    def prepare_and_record(root: Path, canary: Canary) -> None:
        original_prepare(root, canary)
        states[root] = tree_state(root / ".kenning")

    cli_root, server_root = run_case(tmp_path, canary, tiny_model, start_server, prepare_and_record)
    for root in (cli_root, server_root):
        # The shipped .kenning is exactly as it came: not opened for writing, chmodded or cleaned.
        assert tree_state(root / ".kenning") == states[root]
        assert not (canary.path / "created-by-kenning").exists()


# -- "planted": git replaced files inside the user's own store ----------------------------------


@pytest.fixture(scope="module")
def own_store(tmp_path_factory: pytest.TempPathFactory, tiny_model: Path) -> Path:  # noqa: F811
    """A store the user's kenning built (this test session's key) for the workspace's files;
    each case gets a copy, which stays authentic: nothing in it is bound to where it lies."""
    root = write_workspace(tmp_path_factory.mktemp("own") / "repo", WORKSPACE_FILES)
    out = kenning("index", str(root), "--model", str(tiny_model), "-q")
    assert out.returncode == 0, out.stderr
    return root / ".kenning"


PLANTED: dict[str, Callable[[Path, Canary, Path], None]] = {}


def planted(
    name: str,
) -> Callable[[Callable[[Path, Canary, Path], None]], Callable[[Path, Canary, Path], None]]:
    def register(fn: Callable[[Path, Canary, Path], None]) -> Callable[[Path, Canary, Path], None]:
        PLANTED[name] = fn
        return fn

    return register


@planted("database-replaced-by-the-attackers")
def _p_db(store: Path, canary: Canary, attacker: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        (store / f"kenning.sqlite3{suffix}").unlink(missing_ok=True)
    shutil.copy(attacker / "kenning.sqlite3", store / "kenning.sqlite3")
    _set_meta(store / "kenning.sqlite3", vectors_file=str(canary.path / "vectors.1.usearch"))


@planted("database-links-to-another-apps-database")
def _p_db_link(store: Path, canary: Canary, attacker: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        (store / f"kenning.sqlite3{suffix}").unlink(missing_ok=True)
    (store / "kenning.sqlite3").symlink_to(canary.path / "other-app.sqlite3")


@planted("wal-and-shm-link-outside")
def _p_wal(store: Path, canary: Canary, attacker: Path) -> None:
    for suffix in ("-wal", "-shm"):
        (store / f"kenning.sqlite3{suffix}").unlink(missing_ok=True)
        (store / f"kenning.sqlite3{suffix}").symlink_to(canary.path / "home.txt")


@planted("lock-links-to-a-home-file")
def _p_lock(store: Path, canary: Canary, attacker: Path) -> None:
    (store / "lock").unlink()
    (store / "lock").symlink_to(canary.path / "home.txt")


@planted("graph-links-outside")
def _p_graph_link(store: Path, canary: Canary, attacker: Path) -> None:
    (graph,) = store.glob("vectors.*.usearch")
    graph.unlink()
    graph.symlink_to(canary.path / "vectors.1.usearch")
    (store / "vectors.99.usearch.tmp").symlink_to(canary.path / "home.txt")


@planted("own-database-names-an-outside-graph")
def _p_meta(store: Path, canary: Canary, attacker: Path) -> None:
    # What a forged WAL could write into an authentic database: names that are paths.
    _set_meta(
        store / "kenning.sqlite3",
        vectors_file=str(canary.path / "vectors.1.usearch"),
        vectors_generation="../../outside/x",
    )


@planted("graph-with-flipped-bytes-and-matching-meta")
def _p_flipped(store: Path, canary: Canary, attacker: Path) -> None:
    (graph,) = store.glob("vectors.*.usearch")
    data = bytearray(graph.read_bytes())
    for i in range(200, len(data), 97):
        data[i] ^= 0x5A
    graph.write_bytes(bytes(data))
    old = hashlib.blake2b(bytes(data), digest_size=16).hexdigest()  # the unkeyed hash of before
    _set_meta(store / "kenning.sqlite3", vectors_size=str(len(data)), vectors_mac=old, vectors_hash=old)


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_files_planted_in_the_users_store_are_set_aside(
    case: str,
    tmp_path: Path,
    canary: Canary,
    attacker_store: Path,
    own_store: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    def prepare(root: Path, canary: Canary) -> None:
        store = Path(shutil.copytree(own_store, root / ".kenning", symlinks=True))
        PLANTED[case](store, canary, attacker_store)

    cli_root, server_root = run_case(tmp_path, canary, tiny_model, start_server, prepare)
    for root in (cli_root, server_root):
        store = root / ".kenning"
        for name in ("kenning.sqlite3", "kenning.sqlite3-wal", "kenning.sqlite3-shm", "lock"):
            assert not (store / name).is_symlink(), name
        assert not any(p.is_symlink() for p in store.glob("vectors.*.usearch"))
        meta = _meta(store / "kenning.sqlite3")
        assert meta["vectors_file"] == f"vectors.{meta['vectors_generation']}.usearch"


# -- a store location that is not kenning's is refused ----------------------------------------------


def _explicit_cases(root: Path, canary: Canary) -> dict[str, str]:
    return {
        "workspace-root": ".",
        "a-folder-of-the-repository": "pkg",
        "outside-directory": str(canary.path),
        "relative-path-through-a-repository-link": "out/store",
    }


@pytest.mark.parametrize(
    "case",
    [
        "workspace-root",
        "a-folder-of-the-repository",
        "outside-directory",
        "relative-path-through-a-repository-link",
    ],
)
def test_a_store_location_that_is_not_kenning_s_is_refused(
    case: str,
    tmp_path: Path,
    canary: Canary,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    roots = []
    for side in ("cli", "server"):
        root = write_workspace(tmp_path / side / "repo", {**WORKSPACE_FILES, "pkg/mod.py": "X = 1\n"})
        (root / "out").symlink_to(canary.path)
        (root / "vectors.3.usearch").write_text("a file of the repository\n")
        roots.append(root)
    store = _explicit_cases(roots[0], canary)[case]
    before = [tree_state(r) for r in roots]

    out = kenning("index", str(roots[0]), "--model", str(tiny_model), "--store", store)
    assert out.returncode != 0
    assert out.stderr.startswith("kenning: ") and "Traceback" not in out.stderr, out.stderr
    assert "not used as an index" in out.stderr or "outside the workspace" in out.stderr, out.stderr

    client = start_server(roots[1], {"model": str(tiny_model), "storePath": store})
    status = client.wait_state("error")
    assert "not used as an index" in status["message"] or "outside the workspace" in status["message"], status
    assert client.alive()
    assert client.close() == 0

    canary.check()
    assert [tree_state(r) for r in roots] == before, "the workspace was written into"


def test_an_empty_directory_of_the_users_is_adopted(tmp_path: Path, tiny_model: Path) -> None:  # noqa: F811
    """A new or empty directory becomes a store (marked, 0700, .gitignore); kenning made it so."""
    root = write_workspace(tmp_path / "repo", WORKSPACE_FILES)
    empty = tmp_path / "empty-store"
    empty.mkdir(mode=0o755)
    out = kenning("index", str(root), "--model", str(tiny_model), "-q", "--store", str(empty))
    assert out.returncode == 0, out.stderr
    assert (empty / "kenning-store").is_file() and (empty / ".gitignore").is_file()
    assert oct(empty.stat().st_mode & 0o777) == oct(0o700)
    assert not (root / ".kenning").exists()
