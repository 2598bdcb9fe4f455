"""lsprotocol imported through the compiled-methods cache (kenning.lsp.attrs_cache).

Each case imports lsprotocol in a new interpreter (this one has it imported already), as a
server start does, and checks both what the cache did and that the classes behave.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from kenning.lsp.attrs_cache import cache_file

IMPORT = """
import json, sys
from pathlib import Path
from kenning.lsp.attrs_cache import import_lsprotocol
use = import_lsprotocol(Path(sys.argv[1]))
import lsprotocol.types as T
p = T.Position(line=1, character=2)
r = T.Range(start=p, end=T.Position(line=3, character=0))
checks = [
    repr(T.TextEdit(range=T.Range(start=p, end=p), new_text="x")).startswith("TextEdit("),
    p == T.Position(line=1, character=2),
    p != T.Position(line=1, character=3),
    r.end.line == 3,
]
print(json.dumps({"loaded": use.loaded, "reused": use.reused, "compiled": use.compiled,
                  "written": use.written, "checks": checks}))
"""


def _import(directory: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", IMPORT, str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    assert all(result["checks"]), result
    return result


def test_second_import_compiles_nothing(tmp_path: Path) -> None:
    first = _import(tmp_path)
    assert first["loaded"] == 0 and first["compiled"] > 500 and first["written"]
    path = cache_file(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    second = _import(tmp_path)
    assert second == {**second, "loaded": first["compiled"], "compiled": 0, "written": False}
    assert second["reused"] == first["compiled"]


def test_a_damaged_file_is_compiled_again_and_replaced(tmp_path: Path) -> None:
    path = cache_file(tmp_path)
    path.write_bytes(b"\x00not marshal data" * 100)
    os.chmod(path, 0o600)
    result = _import(tmp_path)
    assert result["loaded"] == 0 and result["compiled"] > 500 and result["written"]
    assert _import(tmp_path)["compiled"] == 0


def test_a_file_others_may_write_is_not_trusted(tmp_path: Path) -> None:
    _import(tmp_path)
    path = cache_file(tmp_path)
    os.chmod(path, 0o664)  # group-writable: someone else could have put code in it
    result = _import(tmp_path)
    assert result["loaded"] == 0 and result["compiled"] > 500
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # replaced by a user-only file
