"""Cases 10–14 and 30 through the server: a workspace built to hurt an indexer.

A 50 MB one-line bundle, a generated file under the size cap, a binary ``.py``, a FIFO, Latin-1,
Shift-JIS, a BOM with CRLF, CR-only and UTF-16 files, symlink loops, a link out of the tree, and
a hit on a 5,000-character line. The server must skip what it should with a recorded reason,
stay small and quick, and report lines that match what an editor shows.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from pathlib import Path

from tests.conftest import FILES, write_workspace
from tests.reliability.conftest import StartServer


def _build(root: Path, outside: Path) -> dict[str, tuple[str, int]]:
    """Write the tree; return {marker word: (its file, its 0-based line as an editor counts)}."""
    write_workspace(root, {"geometry.py": FILES["geometry.py"]})
    with open(root / "bundle.min.js", "wb") as f:
        for _ in range(50):
            f.write(b"var a=1;" * (1 << 17))  # 50 MiB, one line
    (root / "gen.js").write_bytes(b"var b=2;" * 150_000)  # 1.2 MB, under the cap, one line
    (root / "bin.py").write_bytes(b"import os\n\x00\x01" + random.Random(1).randbytes(4000))
    os.mkfifo(root / "pipe.py")
    (root / "latin.py").write_bytes("# café naïve\ndef latin_marker_fn():\n    return 1\n".encode("latin-1"))
    (root / "sjis.py").write_bytes(
        "# 日本語のコメント\n\ndef sjis_marker_fn():\n    return 1\n".encode("shift_jis")
    )
    (root / "bom.py").write_bytes(
        "\ufeff# bom\r\n\r\n\r\ndef bom_marker_fn():\r\n    return 2\r\n".encode("utf-8")
    )
    (root / "cr.py").write_bytes(b"# old mac\r\rdef cr_marker_fn():\r    return 3\r")
    (root / "utf16.py").write_bytes("# wide\ndef utf16_marker_fn():\n    return 4\n".encode("utf-16"))
    (root / "long.py").write_text(  # one 5,000-character line among ordinary ones
        "def long_line_holder():\n    return (\n        '"
        + "a" * 2500
        + " qzlonglinexq "
        + "b" * 2500
        + "'\n    )\n"
        + "".join(f"\n\ndef filler_{i}(x):\n    return x + {i}\n" for i in range(12))
    )
    (outside / "secret.py").write_text("def qzoutsidesecretxq():\n    return 0\n")
    (root / "out_link.py").symlink_to(outside / "secret.py")
    (root / "self").symlink_to(".")
    (root / "up").symlink_to("..")
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    return {
        "latin_marker_fn": ("latin.py", 1),
        "sjis_marker_fn": ("sjis.py", 2),
        "bom_marker_fn": ("bom.py", 3),
        "cr_marker_fn": ("cr.py", 2),
        "utf16_marker_fn": ("utf16.py", 1),
        "qzlonglinexq": ("long.py", 2),
    }


def test_hostile_tree(tmp_path: Path, tiny_model: Path, start_server: StartServer) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    markers = _build(root, outside)
    client = start_server(root, {"model": str(tiny_model)}, watch_files=True)
    baseline_peak = int(client.status_line("VmHWM").split()[0])
    started = time.monotonic()
    status = client.wait_state("ready", timeout=60)
    took = time.monotonic() - started
    peak_growth_mib = (int(client.status_line("VmHWM").split()[0]) - baseline_peak) / 1024
    assert took < 30, f"indexing the hostile tree took {took:.1f}s"
    assert peak_growth_mib < 100, f"peak RSS grew {peak_growth_mib:.0f} MiB (a 50 MB file was read?)"
    assert status["skipped"] >= 8, status

    for marker, (name, line) in markers.items():
        hits = client.search(marker, mode="lexical")["results"]
        assert hits and hits[0]["uri"].endswith("/" + name), (marker, hits)
        hit = hits[0]
        assert hit["range"]["start"]["line"] <= line <= hit["range"]["end"]["line"], (marker, hit)
        assert len(hit["preview"]) <= 300
        # The long line's preview is the 300 characters around the marker, not its first 300.
        assert marker in hit["preview"], (marker, hit["preview"][:100])
    long_reply = client.call("workspace/semanticSearch", {"query": "qzlonglinexq"})
    assert len(str(long_reply)) < 20_000  # snippets are bounded, not the 5,000-char line
    assert not client.search("qzoutsidesecretxq", mode="lexical")["results"]
    assert client.close() == 0

    with sqlite3.connect(root / ".kenning" / "kenning.sqlite3") as conn:
        reasons = dict(
            conn.execute("SELECT path, skip_reason FROM files WHERE skip_reason IS NOT NULL").fetchall()
        )
    assert reasons["bundle.min.js"] == "too-large"
    assert reasons["gen.js"] == "generated"
    assert reasons["bin.py"] == "binary"
    assert reasons["pipe.py"] == "not-a-file"
    assert reasons["out_link.py"] == "outside-root"
    assert reasons["up"] == "outside-root"
    assert reasons["a"] == reasons["b"] == "broken-link"
    assert reasons["self"] == "not-a-file"
