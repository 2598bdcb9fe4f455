"""Result hygiene: import blocks and licence headers do not crowd out definitions in semantic
results or in Find Similar, and stay findable by their words (the real model, a real store)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kenning.config import Config
from kenning.engine import Engine
from kenning.search import SearchQuery, search, similar, tuning
from tests.search_helpers import indexed_files

BOILERPLATE_KINDS = {"imports", "preamble"}

FILES = {
    "timing.py": (
        '"""Timing helpers."""\n\nimport time\nimport urllib.request\n\n\n'
        "def elapsed_since(start):\n    now = time.monotonic()\n    return now - start\n\n\n"
        "def fetch_page(url):\n    with urllib.request.urlopen(url) as response:\n"
        "        return response.read()\n"
    ),
    "clock.py": (
        "import time\nimport datetime\n\n\n"
        "def sleep_until(deadline):\n    while time.time() < deadline:\n        time.sleep(0.1)\n"
    ),
    "web.go": (
        "// Copyright 2020 Example Authors. All rights reserved.\n"
        "// Use of this source code is governed by a BSD-style licence.\n\n"
        'package web\n\nimport (\n\t"net/http"\n\t"time"\n)\n\n'
        "func Download(url string, timeout time.Duration) (*http.Response, error) {\n"
        "\tclient := &http.Client{Timeout: timeout}\n\treturn client.Get(url)\n}\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    yield from indexed_files(tmp_path_factory.mktemp("hygiene"), FILES)


def _kinds(engine: Engine, path: str) -> dict[int, str]:
    assert engine.db is not None
    conn = engine.db.reader()
    row = engine.db.file_by_path(path, conn)
    assert row is not None
    return {c.start_line: c.kind for c in engine.db.chunks_of_file(row.id, conn)}


def test_import_blocks_are_marked(engine: Engine) -> None:
    assert _kinds(engine, "timing.py")[1] == "imports"
    assert _kinds(engine, "web.go")[1] == "imports"


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
@pytest.mark.parametrize(
    "query", ["measure how much time passed", "download a web page over http", "wait until a time"]
)
def test_descriptive_queries_rank_definitions_not_imports(engine: Engine, mode: str, query: str) -> None:
    hits = search(engine, SearchQuery(query, limit=5, mode=mode)).hits
    assert hits and hits[0].kind not in BOILERPLATE_KINDS
    if mode == "semantic":
        assert all(h.kind not in BOILERPLATE_KINDS for h in hits)


def test_imports_stay_lexically_findable(engine: Engine) -> None:
    lexical = search(engine, SearchQuery("datetime", limit=5, mode="lexical")).hits
    assert lexical and lexical[0].path == "clock.py" and lexical[0].kind == "imports"
    hybrid = search(engine, SearchQuery("datetime", limit=5, mode="hybrid")).hits
    assert any(h.kind == "imports" and h.path == "clock.py" for h in hybrid)


def test_find_similar_returns_definitions_not_import_blocks(engine: Engine) -> None:
    hits = similar(engine, "clock.py", 5, 7, limit=10).hits
    assert hits and all(h.kind not in BOILERPLATE_KINDS for h in hits)


def test_find_similar_on_an_import_block_may_return_import_blocks(engine: Engine) -> None:
    hits = similar(engine, "clock.py", 1, 2, limit=10).hits
    assert any(h.kind == "imports" for h in hits)


def test_a_store_chunked_by_another_version_rechunks_unchanged_files(tmp_path: Path) -> None:
    from kenning.chunking import CHUNKER_VERSION
    from kenning.indexer import CHUNKER_VERSION_KEY, scan

    for rel, text in FILES.items():
        (tmp_path / rel).write_text(text)
    with Engine(tmp_path, Config()).open() as eng:
        assert eng.db is not None
        assert scan(eng).files_changed == len(FILES)
        assert eng.db.get_meta(CHUNKER_VERSION_KEY) == str(CHUNKER_VERSION)
        assert scan(eng).files_changed == 0
        with eng.db.transaction() as conn:
            eng.db.set_meta(conn, CHUNKER_VERSION_KEY, str(CHUNKER_VERSION - 1))
        assert scan(eng).files_changed == len(FILES)
        assert eng.db.get_meta(CHUNKER_VERSION_KEY) == str(CHUNKER_VERSION)
        assert scan(eng).files_changed == 0


def test_a_first_index_stopped_early_does_not_rechunk_what_it_committed(tmp_path: Path) -> None:
    """A first scan stopped after its first batch leaves those files committed by this chunker;
    the next scan chunks only the rest (a killed first index used to start over)."""
    from kenning.indexer import scan
    from kenning.indexer.scanner import SCAN_BATCH_FILES

    total = SCAN_BATCH_FILES + 50
    for n in range(total):
        (tmp_path / f"m{n}.py").write_text(f"def f{n}():\n    return {n}\n")
    batches = iter([False, True])
    with Engine(tmp_path, Config()).open() as eng:
        first = scan(eng, should_stop=lambda: next(batches))
        assert 0 < first.files_changed < total
        assert scan(eng).files_changed == total - first.files_changed
        assert scan(eng).files_changed == 0


def test_semantic_scores_are_cosines_less_the_share_of_the_workspace_mean(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk close to what every chunk of the workspace shares is close to every query: the
    query vector is moved away from the workspace's mean (tuning.CENTROID_WEIGHT), so each
    semantic score is the chunk's cosine with the query less the weight times its cosine with
    the mean, and the hits are ranked by it."""
    assert engine.db is not None
    conn = engine.db.reader()
    vectors = {
        int(i): v for ids, vecs in engine.db.iter_vectors(conn=conn) for i, v in zip(ids, vecs, strict=True)
    }
    unit = np.stack([v / np.linalg.norm(v) for v in vectors.values()])
    mean = unit.mean(axis=0)
    query = "fetch a web page over HTTP"
    qvec = engine.encoder().embed_query(query)
    for weight in (0.0, tuning.CENTROID_WEIGHT):
        monkeypatch.setattr(tuning, "CENTROID_WEIGHT", weight)
        hits = search(engine, SearchQuery(text=query, limit=20, mode="semantic")).hits
        assert hits
        expected = {c: float(v @ qvec - weight * (v @ mean)) for c, v in vectors.items()}
        for hit in hits:
            assert hit.score == pytest.approx(expected[hit.chunk_id], abs=0.01)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
