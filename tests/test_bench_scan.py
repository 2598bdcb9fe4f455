"""``python -m bench.scan`` runs, and its three ways of scanning (tree-sitter in the server's
process, in the chunk worker one file at a time, in the worker with files read ahead) store
the same chunks and symbols: the benchmark exits 1 where they differ."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_way_of_scanning_stores_the_same_chunks(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for n in range(30):  # more files than are read ahead, in several languages
        (tree / f"m{n}.py").write_text(f"class Store{n}:\n    def save(self, path):\n        return path\n")
        go = f"package p\n\n// Save{n} saves.\nfunc Save{n}(path string) error {{\n\treturn nil\n}}\n"
        (tree / f"g{n}.go").write_text(go)
        (tree / f"r{n}.md").write_text(f"# Saving {n}\n\nHow files are saved.\n")
    proc = subprocess.run(
        [sys.executable, "-m", "bench.scan", str(tree), "--repeats", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "| tree | 90 | " in proc.stdout
