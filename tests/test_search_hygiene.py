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


def test_a_rechunk_whose_last_batch_ends_the_files_records_its_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop asked for once every file is written does not leave the store marked as chunked
    by the old version (which would rechunk everything at the next start)."""
    from kenning.chunking import CHUNKER_VERSION
    from kenning.indexer import CHUNKER_VERSION_KEY, scan, scanner

    for rel, text in FILES.items():
        (tmp_path / rel).write_text(text)
    monkeypatch.setattr(scanner, "SCAN_BATCH_FILES", 1)  # one batch a file: the last one is full
    with Engine(tmp_path, Config()).open() as eng:
        assert eng.db is not None
        scan(eng)
        with eng.db.transaction() as conn:
            eng.db.set_meta(conn, CHUNKER_VERSION_KEY, str(CHUNKER_VERSION - 1))
        checks = iter(range(len(FILES) + 1))
        stop_after_the_files = lambda: next(checks) >= len(FILES)  # noqa: E731
        assert scan(eng, should_stop=stop_after_the_files).files_changed == len(FILES)
        assert eng.db.get_meta(CHUNKER_VERSION_KEY) == str(CHUNKER_VERSION)


def test_a_rechunk_rewrites_lexical_words_the_model_input_did_not_change(tmp_path: Path) -> None:
    """A new chunker version may split names into other words (the FTS ``idents`` column)
    without changing a chunk's model input. The chunk keeps its id and vector, and its words
    and FTS row follow the new version: lexical search finds it by them."""
    from kenning.chunking import CHUNKER_VERSION
    from kenning.indexer import CHUNKER_VERSION_KEY, scan

    for rel, text in FILES.items():
        (tmp_path / rel).write_text(text)
    with Engine(tmp_path, Config()).open() as eng:
        assert eng.db is not None
        scan(eng)
        rows = eng.db.writer.execute("SELECT id, idents FROM chunks ORDER BY id").fetchall()
        # What an older chunker wrote: other words for every chunk, the model input the same.
        with eng.db.transaction() as conn:
            conn.execute("UPDATE chunks SET idents = 'qzstalewordxq'")
            eng.db.set_meta(conn, CHUNKER_VERSION_KEY, str(CHUNKER_VERSION - 1))
        assert search(eng, SearchQuery(text="qzstalewordxq", limit=5, mode="lexical")).hits
        assert scan(eng).files_changed == len(FILES)
        assert eng.db.writer.execute("SELECT id, idents FROM chunks ORDER BY id").fetchall() == rows
        assert not search(eng, SearchQuery(text="qzstalewordxq", limit=5, mode="lexical")).hits
        # An unchanged rescan rewrites nothing.
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


def _long_body(verb: str, lines: int) -> str:
    return "".join(
        f"\t\tcase {i}:\n\t\t\tp.{verb}Verb(arg, {i}) // {verb} the argument by its format verb\n"
        for i in range(lines)
    )


PIECES = {
    # One method longer than a chunk (cut into pieces, each named `pp.doPrintf`) and a short
    # function the query describes as well.
    "print.go": (
        "package fmt\n\n"
        "func (p *pp) doPrintf(format string, a []any) {\n\tfor i := 0; i < len(format); i++ {\n"
        "\t\tswitch format[i] {\n" + _long_body("format", 30) + "\t\t}\n\t}\n}\n\n"
        "func Printf(format string, a ...any) (n int, err error) {\n"
        "\treturn Fprintf(os.Stdout, format, a...)\n}\n"
    ),
    # Two same-named definitions, each cut into pieces: overloads stay two results.
    "Format.java": (
        "class Format {\n"
        "    String format(int value) {\n        switch (value) {\n"
        + "".join(
            f"        case {i}: return formatVerb(value, {i}); // format the int by its verb\n"
            for i in range(25)
        )
        + "        }\n        return null;\n    }\n\n"
        "    String format(long value) {\n        switch ((int) value) {\n"
        + "".join(
            f"        case {i}: return formatVerb(value, {i}); // format the long by its verb\n"
            for i in range(25)
        )
        + "        }\n        return null;\n    }\n}\n"
    ),
    # A doc comment longer than a chunk, cut above its function (documented TypeScript).
    "pairwise.ts": (
        "/**\n"
        + "".join(f" * Groups pairs of consecutive emissions together, line {i}.\n" for i in range(40))
        + " */\nexport function pairwise<T>(source: T[]): [T, T][] {\n"
        "  return source.slice(1).map((value, i) => [source[i], value]);\n}\n"
    ),
    # A method cut into pieces that sets attributes on self: each `self.option_N` is a field
    # symbol of the class, and none of them makes a piece stand for something else.
    "settings.py": (
        "class Settings:\n    def __init__(self, source):\n"
        + "".join(
            f"        self.option_{i} = source.read_option({i})  # read option {i}\n" for i in range(60)
        )
        + "\n    def reload(self, source):\n        return source.read_option(0)  # read option again\n"
    ),
    # A class body cut into pieces: each piece holds other members, or comments about them (no
    # definition of their own, as JUCE's headers document a member above it), so each stays.
    "document.hpp": (
        "class Document {\npublic:\n"
        + "".join(f"    // The saved part {i} of the document: where it starts.\n" for i in range(24))
        + "    int savedParts;\n};\n"
    ),
}


@pytest.fixture(scope="module")
def pieces(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    yield from indexed_files(tmp_path_factory.mktemp("pieces"), PIECES)


def _symbols(engine: Engine, path: str) -> list[tuple[str | None, int, int]]:
    assert engine.db is not None
    conn = engine.db.reader()
    row = engine.db.file_by_path(path, conn)
    assert row is not None
    return [(c.symbol, c.start_line, c.end_line) for c in engine.db.chunks_of_file(row.id, conn)]


@pytest.mark.parametrize("mode", ["semantic", "hybrid", "lexical"])
def test_a_definition_cut_into_pieces_is_one_result(pieces: Engine, mode: str) -> None:
    # The fixture is what the rule is about: the method is several chunks of one name.
    assert sum(1 for symbol, _, _ in _symbols(pieces, "print.go") if symbol == "pp.doPrintf") >= 3
    query = "format the argument by its format verb and print it"
    hits = search(pieces, SearchQuery(query, limit=20, mode=mode)).hits  # type: ignore[arg-type]
    # One result per definition (two overloads of `format`), then, as the candidates run out,
    # the other pieces: after every other result.
    allowed = {"pp.doPrintf": 1, "Format.format": 2, "pairwise": 1, "Settings.__init__": 1}
    seen: dict[str | None, int] = {}
    pieces_after = []
    for i, hit in enumerate(hits):
        seen[hit.symbol] = seen.get(hit.symbol, 0) + 1
        if hit.symbol in allowed and seen[hit.symbol] > allowed[hit.symbol]:
            pieces_after.append(i)
    assert pieces_after and pieces_after == list(range(pieces_after[0], len(hits)))
    assert any(h.symbol == "Printf" for h in hits[: pieces_after[0]])
    # Asked for as many results as there are definitions, no second piece comes back.
    shorter = search(pieces, SearchQuery(query, limit=pieces_after[0], mode=mode)).hits  # type: ignore[arg-type]
    assert [h.symbol for h in shorter].count("pp.doPrintf") == 1


def test_a_method_setting_attributes_on_self_is_one_result(pieces: Engine) -> None:
    init = [c for c in _symbols(pieces, "settings.py") if c[0] == "Settings.__init__"]
    assert len(init) >= 3
    hits = search(pieces, SearchQuery("read option", limit=20, mode="lexical")).hits
    symbols = [h.symbol for h in hits]
    # One piece, then `reload`, and only then, as the candidates run out, the other pieces.
    assert symbols[:2].count("Settings.__init__") == 1 and "Settings.reload" in symbols[:2]
    assert symbols[2:] == ["Settings.__init__"] * (len(init) - 1)


def test_same_named_definitions_stay_apart(pieces: Engine) -> None:
    chunks = [c for c in _symbols(pieces, "Format.java") if c[0] == "Format.format"]
    assert len(chunks) >= 4  # both overloads, each in pieces
    hits = search(pieces, SearchQuery("format the value by its verb", limit=20, mode="lexical")).hits
    found = [(h.start_line, h.end_line) for h in hits if h.symbol == "Format.format"][:2]
    # One piece of each overload: the first starts at line 2, the second after the first's end.
    second = next(i for i, line in enumerate(PIECES["Format.java"].splitlines(), 1) if "format(long" in line)
    assert len(found) == 2
    assert sum(1 for start, _ in found if start < second) == 1


def test_a_piece_is_of_the_definition_it_overlaps_most_and_holds_nothing_else() -> None:
    from kenning.search.fusion import piece_of
    from kenning.store.rows import ChunkRow

    def piece(symbol: str, start: int, end: int) -> ChunkRow:
        return ChunkRow(1, 1, "a.js", "javascript", start, end, "function", symbol, "", "")

    # `create` (lines 1-90) holds `check` (20-40); `format` is defined twice (overloads).
    definitions = [
        ("create", 1, 90, 1),
        ("check", 20, 40, 20),
        ("format", 100, 150, 100),
        ("format", 151, 200, 151),
    ]
    assert piece_of(piece("format", 120, 150), definitions) == (100, 150)
    assert piece_of(piece("format", 140, 170), definitions) == (151, 200)  # 20 lines of it against 11
    assert piece_of(piece("create", 50, 90), definitions) == (1, 90)
    # A constructor is named as its class, which holds it: the piece is the constructor's.
    constructed = [("Text", 1, 300, 1), ("Text", 139, 168, 139), ("Text", 242, 262, 242)]
    assert piece_of(piece("Text.Text", 153, 168), constructed) == (139, 168)
    assert piece_of(piece("Text.Text", 242, 262), constructed) == (242, 262)
    # A piece holding another definition's name line stands for that one too: never merged.
    assert piece_of(piece("create", 10, 49), definitions) is None
    assert piece_of(piece("missing", 1, 10), definitions) is None
    # A doc comment's piece above its definition is that definition's; not across another one.
    documented = [("pairwise", 43, 45, 43), ("other", 30, 32, 30)]
    assert piece_of(piece("pairwise", 33, 42), documented) == (43, 45)
    assert piece_of(piece("pairwise", 1, 20), documented) is None


def test_the_pieces_of_a_class_body_each_stay(pieces: Engine) -> None:
    body = [c for c in _symbols(pieces, "document.hpp") if c[0] == "Document"]
    assert len(body) >= 2
    hits = search(pieces, SearchQuery("saved part of the document", limit=20, mode="lexical")).hits
    assert sum(1 for h in hits if h.symbol == "Document") == len(body)


def test_a_doc_comment_cut_above_its_function_is_of_that_function(pieces: Engine) -> None:
    named = [c for c in _symbols(pieces, "pairwise.ts") if c[0] == "pairwise"]
    assert len(named) >= 3  # the comment in pieces, then the function
    query = "groups pairs of consecutive emissions together"
    for mode in ("hybrid", "semantic", "lexical"):
        hits = search(pieces, SearchQuery(query, limit=3, mode=mode)).hits  # type: ignore[arg-type]
        found = [h for h in hits if h.symbol == "pairwise"]
        # One result, first, and it is the function (its comment is what the query matched).
        assert len(found) == 1 and hits[0] is found[0], mode
        lines = PIECES["pairwise.ts"].splitlines()
        declared = next(i for i, line in enumerate(lines, 1) if line.startswith("export function pairwise"))
        assert found[0].start_line <= declared <= found[0].end_line, mode
