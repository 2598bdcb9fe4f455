"""Case 3: the disk fills up under the index.

With a real full file system (a 16 MiB tmpfs, when this process may mount one) the server's
SQLite writes and graph saves fail as they would in the field; without mount rights the same
is provoked in an engine subprocess by a graph save that writes half a file and fails like
usearch does on a full disk. Either way: a clear error, searches keep answering from the last
good generation, no partial file becomes current, and indexing completes once space is back.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from kenning.store.trust import store_key
from kenning.store.vectors import file_mac
from tests.reliability.conftest import StartServer, fill_disk, generate_workspace, module_text, token_for

REPO = Path(__file__).resolve().parents[2]


def _recorded_vectors_ok(store: Path) -> bool:
    with sqlite3.connect(f"file:{store / 'kenning.sqlite3'}?mode=ro", uri=True) as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    path = store / meta["vectors_file"]
    return (
        path.stat().st_size == int(meta["vectors_size"])
        and file_mac(path, store_key()) == meta["vectors_mac"]
    )


def test_disk_full_on_a_real_file_system(
    tmp_path: Path, tiny_model: Path, small_fs: Path, start_server: StartServer
) -> None:
    root = tmp_path / "ws"
    tokens = generate_workspace(root, 40, seed=11)
    store = small_fs / "store"
    client = start_server(root, {"model": str(tiny_model), "storePath": str(store)}, watch_files=True)
    client.wait_state("ready")
    old_token = tokens[sorted(tokens)[0]]
    filler = fill_disk(small_fs)
    for i in range(150):  # far more than the little space left
        (root / "more" / f"m{i}.py").parent.mkdir(exist_ok=True)
        (root / "more" / f"m{i}.py").write_text(module_text(1000 + i, token_for(1000 + i, 1), 4))
    seen = len(client.statuses())
    client.command("kenning.reindex")
    status = client.wait_state("error", after=seen)
    message = status.get("message", "")
    assert "disk is full" in message or "No space left" in message, status
    # Searches keep answering from what was committed before.
    hit = client.search(old_token, mode="lexical")["results"][0]
    assert hit["uri"].endswith(sorted(tokens)[0])
    dense = client.search("helper items factor total", mode="semantic")["results"]
    assert dense and dense[0]["match"]["denseRank"] == 1
    assert _recorded_vectors_ok(store)
    errors = [line for line in client.log_lines() if "full" in line or "No space" in line]
    assert 1 <= len(errors) <= 3, errors  # said, not repeated in a storm

    filler.unlink()  # space is back: the next re-index completes
    seen = len(client.statuses())
    client.command("kenning.reindex")
    client.wait_state("ready", after=seen, timeout=120)
    assert client.search(token_for(1149, 1), mode="lexical")["results"][0]["uri"].endswith("more/m149.py")
    assert client.close() == 0
    assert _recorded_vectors_ok(store)
    with sqlite3.connect(store / "kenning.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


_ENGINE = textwrap.dedent("""
    import errno, json, sys
    from pathlib import Path
    import kenning.store.vectors as vectors
    from kenning.config import Config
    from kenning.engine import Engine
    from kenning.engine.vectors import recorded_vector_file
    from kenning.indexer import update
    from kenning.search import SearchQuery, search

    root, model = Path(sys.argv[1]), sys.argv[2]
    out = {}
    engine = Engine(root, Config(model=model)).open()
    update(engine)
    before = recorded_vector_file(engine.db)
    (root / "late.py").write_text("def late_numbat_sighting():\\n    return 1\\n")

    # The graph is serialised in memory and written by kenning: the device fills up midway.
    real_write = vectors.os.write
    def full_disk_write(fd, data):
        if not vectors.os.readlink(f"/proc/self/fd/{fd}").endswith(".usearch.tmp"):
            return real_write(fd, data)
        real_write(fd, bytes(data[:1000]))   # half written, then the device is full
        raise OSError(errno.ENOSPC, "No space left on device")
    vectors.os.write = full_disk_write
    try:
        update(engine)
        out["error"] = None
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["tmp_after_failure"] = sorted(p.name for p in engine.store_dir.glob("*.tmp"))
    out["recorded_unchanged"] = recorded_vector_file(engine.db) == before
    vectors.VectorIndex.load(engine.store_dir, recorded_vector_file(engine.db), engine._key)  # still loads
    out["lexical"] = [h.path for h in search(engine, SearchQuery("late_numbat_sighting",
                                                                 mode="lexical")).hits]
    out["dense"] = len(search(engine, SearchQuery("helper items total", mode="semantic")).hits)
    engine.close()   # saving fails again: logged, and the store is still closed and unlocked

    vectors.os.write = real_write   # space is back
    with Engine(root, Config(model=model)) as engine:
        out["reopened_writer"] = not engine.read_only
        update(engine)
        hits = search(engine, SearchQuery("late numbat sighting", mode="semantic")).hits
        out["dense_late"] = hits[0].path if hits else None
        after = recorded_vector_file(engine.db)
        out["saved_after"] = after is not None and after != before
    out["tmp_left"] = sorted(p.name for p in engine.store_dir.glob("*.tmp"))
    print(json.dumps(out))
""")


def test_failed_graph_save_keeps_the_last_good_generation(tmp_path: Path, tiny_model: Path) -> None:
    root = tmp_path / "ws"
    generate_workspace(root, 30, seed=12)
    proc = subprocess.run(
        [sys.executable, "-c", _ENGINE, str(root), str(tiny_model)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    # A clear error that says what could not be written and how much room there was.
    assert out["error"] is not None and out["error"].startswith("OSError: cannot write vectors."), out
    assert "MiB free in" in out["error"]
    assert out["tmp_after_failure"] == []  # the partial file never lingers, never becomes current
    assert out["recorded_unchanged"]
    assert out["lexical"] == ["late.py"] and out["dense"] > 0
    assert out["reopened_writer"] and out["dense_late"] == "late.py"
    assert out["saved_after"] and out["tmp_left"] == []
