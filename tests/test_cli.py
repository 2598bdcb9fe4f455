"""The command line on a small real workspace: output shapes, options, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def kenning(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", "kenning", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import write_workspace

    root = write_workspace(tmp_path_factory.mktemp("cli") / "ws")
    out = kenning("index", str(root))
    assert out.returncode == 0, out.stderr
    return root


def test_search_json_shape(indexed: Path) -> None:
    out = kenning("search", "retry failed uploads", "--json", "-k", "3", "--root", str(indexed))
    data = json.loads(out.stdout)
    assert set(data) >= {"results", "index"}
    assert data["index"]["files"] == 5 and data["index"]["embedded"] == data["index"]["chunks"]
    first = data["results"][0]
    assert set(first) == {"path", "start_line", "end_line", "score", "preview", "symbol", "language", "match"}
    assert first["path"] == "uploads.py" and set(first["match"]) == {"dense_rank", "lexical_rank"}
    assert len(data["results"]) <= 3


def test_a_reader_that_stops_reading_gets_no_traceback(indexed: Path) -> None:
    # `kenning search … | head -1`: the pipe closes before the results are written.
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kenning",
            "search",
            "retry failed uploads",
            "-k",
            "20",
            "--root",
            str(indexed),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=600) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_search_from_inside_the_root_and_modes(indexed: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kenning", "search", "parseHttpHeader", "--mode", "lexical", "--json"],
        cwd=indexed,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    results = json.loads(out.stdout)["results"]
    assert results[0]["path"] == "web/headers.js"
    assert all(r["match"]["dense_rank"] is None for r in results)


def test_symbols_stats_languages(indexed: Path) -> None:
    sym = json.loads(kenning("symbols", "urp", "--json", "--root", str(indexed)).stdout)
    assert sym["results"][0]["name"] == "UploadRetryPolicy"
    stats = json.loads(kenning("stats", "--json", "--root", str(indexed)).stdout)
    assert stats["files"] == 5 and stats["pending"] == 0
    assert stats["languages"] == {"python": 2, "javascript": 1, "go": 1, "markdown": 1}
    langs = kenning("languages").stdout
    assert "python" in langs and "tree-sitter" in langs and "markdown" in langs


def test_store_option_and_env(tmp_path: Path) -> None:
    from tests.conftest import write_workspace

    root = write_workspace(tmp_path / "ws", {"a.py": "def alpha_beta():\n    return 1\n"})
    store = tmp_path / "elsewhere"
    assert kenning("index", str(root), "--store", str(store)).returncode == 0
    assert (store / "kenning.sqlite3").exists() and not (root / ".kenning").exists()
    env_store = tmp_path / "from-env"
    assert kenning("index", str(root), env={"KENNING_STORE": str(env_store)}).returncode == 0
    assert (env_store / "kenning.sqlite3").exists()


def test_errors_are_clear(indexed: Path, tmp_path: Path) -> None:
    bad = kenning("search", "x", "-k", "0", "--root", str(indexed))
    assert bad.returncode == 2 and "limit must be between 1 and 200" in bad.stderr
    missing = kenning("index", str(tmp_path / "nope"))
    assert missing.returncode != 0 and "is not a directory" in missing.stderr
