"""The CLI on real code nobody here wrote: a copy of this interpreter's standard library.

By default a handful of well-known packages (a few thousand chunks, about a minute to embed);
with --slow the whole of Lib/ without its tests. Speed is measured in bench/, not asserted here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SUBSET = (
    "json",
    "http",
    "urllib",
    "email",
    "csv.py",
    "textwrap.py",
    "heapq.py",
    "shutil.py",
    "base64.py",
    "gzip.py",
)
SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "__pycache__"}

# (description, where the answer lives, definitions that answer it; one must be in the top 10)
QUERIES = [
    ("deserialize a JSON document from a string", "json/", {"loads", "decode", "raw_decode"}),
    (
        "wrap a paragraph of text so every line is at most a given width",
        "textwrap.py",
        {"wrap", "fill", "TextWrapper"},
    ),
    (
        "percent-encode special characters in a URL component",
        "urllib/parse.py",
        {"quote", "quote_plus", "quote_from_bytes"},
    ),
    ("copy a whole directory tree recursively", "shutil.py", {"copytree", "_copytree"}),
    ("pop the smallest item off a heap", "heapq.py", {"heappop", "heappushpop", "heapreplace"}),
    ("decode base64 encoded bytes", "base64.py", {"b64decode", "standard_b64decode", "decodebytes"}),
]


def _copy_stdlib(dest: Path, full: bool) -> None:
    def ignore(_dir: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIP_DIRS}

    if full:
        shutil.copytree(STDLIB, dest, ignore=ignore, symlinks=True)
        return
    dest.mkdir(parents=True)
    for name in SUBSET:
        src = STDLIB / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)


def kenning(*args: str, timeout: float = 3600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kenning", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def stdlib_copy(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    root = tmp_path_factory.mktemp("stdlib") / "Lib"
    _copy_stdlib(root, full=bool(request.config.getoption("--slow")))
    first = kenning("index", str(root))
    assert first.returncode == 0, first.stderr
    assert "indexed" in first.stdout
    return root


def test_index_completes_and_everything_is_embedded(stdlib_copy: Path) -> None:
    stats = json.loads(kenning("stats", "--json", "--root", str(stdlib_copy)).stdout)
    assert stats["files"] > 30
    assert stats["chunks"] > 500
    assert stats["pending"] == 0 and stats["embedded"] == stats["chunks"]
    assert stats["languages"]["python"] > 30


@pytest.mark.parametrize(("query", "where", "names"), QUERIES)
def test_search_finds_well_known_functions_by_description(
    stdlib_copy: Path, query: str, where: str, names: set[str]
) -> None:
    out = kenning("search", query, "--json", "-k", "10", "--root", str(stdlib_copy))
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    found = [(r["path"], r["symbol"]) for r in results]
    assert any(path.startswith(where) and (sym or "").split(".")[-1] in names for path, sym in found), found


def test_second_index_changes_nothing(stdlib_copy: Path) -> None:
    again = kenning("index", str(stdlib_copy))
    assert again.returncode == 0, again.stderr
    assert "0 changed" in again.stderr
    assert "embedded" not in again.stderr.split("scanned", 1)[-1]  # nothing re-embedded


def test_human_output_and_filters(stdlib_copy: Path) -> None:
    out = kenning(
        "search",
        "parse an email message",
        "--lang",
        "python",
        "--path",
        "email/**",
        "-k",
        "3",
        "--root",
        str(stdlib_copy),
    )
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("1. ") and " email/" in first
    bad = kenning("search", "x", "--lang", "klingon", "--root", str(stdlib_copy))
    assert bad.returncode == 2 and "unknown language 'klingon'" in bad.stderr
