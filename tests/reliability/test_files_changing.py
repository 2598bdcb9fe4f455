"""Cases 8 and 9 in the indexer: a file deleted, or rewritten, between the walk and the read.

``tests/test_workspace_reading.py`` checks the reader alone; here the whole scan runs (in a subprocess,
with the real engine and the tiny model) and the file is changed at exactly that moment by
wrapping the indexer's ``read_source`` — the only way to hit the window deterministically.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import FILES, write_workspace

REPO = Path(__file__).resolve().parents[2]

_SCRIPT = textwrap.dedent("""
    import hashlib, json, sys
    from pathlib import Path
    import kenning.indexer as indexer
    import kenning.indexer.scanner as scanner
    from kenning.config import Config
    from kenning.engine import Engine
    from kenning.search import SearchQuery, search

    root, model = Path(sys.argv[1]), sys.argv[2]
    out = {}
    with Engine(root, Config(model=model)) as engine:
        indexer.update(engine)
        (root / "geometry.py").write_text("def fresh_gecko_area():\\n    return 1\\n")
        (root / "uploads.py").write_text("def qzbetweenversionxq():\\n    return 2\\n")
        real_read = scanner.read_source
        def racing_read(entry, **kwargs):
            if entry.path == "geometry.py":      # deleted after the walk listed it
                (root / "geometry.py").unlink()
            if entry.path == "uploads.py":       # rewritten after the walk stat'ed it
                (root / "uploads.py").write_text("def newest_upload_retry_version():\\n    pass\\n")
            return real_read(entry, **kwargs)
        scanner.read_source = racing_read
        report, _ = indexer.update(engine)
        scanner.read_source = real_read
        out["changed"], out["skipped"] = report.files_changed, report.skipped
        q = lambda text: [h.path for h in search(engine, SearchQuery(text, mode="lexical")).hits]
        out["old_geometry"] = q("circle_area")
        out["fresh_geometry"] = q("fresh_gecko_area")
        out["uploads_newest"] = q("newest_upload_retry_version")
        out["uploads_between"] = q("qzbetweenversionxq")
        row = engine.db.file_by_path("uploads.py")
        data = (root / "uploads.py").read_bytes()
        out["hash_is_of_indexed_bytes"] = row.content_hash == hashlib.blake2b(
            data, digest_size=16).hexdigest()
        out["others"] = q("parseHttpHeader")
        # The next scan sees nothing new to do, and a deleted file's row is gone after it.
        again, _ = indexer.update(engine)
        out["again_changed"], out["again_deleted"] = again.files_changed, again.files_deleted
        out["geometry_row"] = engine.db.file_by_path("geometry.py") is not None
    print(json.dumps(out))
""")


def test_file_deleted_or_rewritten_during_the_scan(tmp_path: Path, tiny_model: Path) -> None:
    root = write_workspace(tmp_path / "ws", FILES)
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(root), str(tiny_model)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    # Deleted mid-scan: skipped (with a reason), its old chunks gone, the scan went on.
    assert out["skipped"] == {"vanished": 1}
    assert "geometry.py" not in out["old_geometry"] + out["fresh_geometry"]
    assert out["others"][0] == "web/headers.js"
    # Rewritten mid-scan: what was read is what is indexed, and the hash is of those bytes.
    assert out["uploads_newest"][0] == "uploads.py"
    assert out["uploads_between"] == []
    assert out["hash_is_of_indexed_bytes"]
    assert out["again_changed"] == 0
    assert out["again_deleted"] == 1 and not out["geometry_row"]
