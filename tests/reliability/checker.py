"""A long-lived subprocess that inspects (and, asked to, finishes) a store a killed server left.

Run as ``python -m tests.reliability.checker``; it reads one JSON request per line on stdin and
answers one JSON line on stdout, so the imports (onnxruntime, usearch, tree-sitter) are paid
once per test, and a segfault in the native code kills this process, not the test runner.

A request: ``{"root": ..., "model": ..., "tokens": {path: token}, "probes": [path, ...],
"complete": bool}``. Inspection reads the store exactly as the kill left it (SQLite and FTS5
integrity, the recorded vector file, the embedding cache). Completion then opens it the way a
restarted server does — with the real engine — and reports what the scan and the embedding
redid, whether the graph and the database agree, and where a search finds each probe's token.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import traceback
from pathlib import Path
from typing import Any

# onnxruntime before usearch, always (the other order segfaults); kenning.store.vectors does it.
from kenning.config import Config
from kenning.engine import Engine
from kenning.indexer import embed_input, embed_pending, scan
from kenning.search import MAX_QUERY_CHARS, SearchQuery, search
from kenning.store.schema import DB_FILENAME
from kenning.store.trust import store_key
from kenning.store.vectors import file_mac


def _content_hash(path: Path) -> str:
    return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()


def inspect(root: Path, tokens: dict[str, str]) -> dict[str, Any]:
    """What the kill left: read with plain sqlite3, nothing repaired."""
    store = root / ".kenning"
    out: dict[str, Any] = {
        "tmp_files_after_kill": sorted(p.name for p in store.glob("*.tmp")),
        "rows": 0,
        "embeddings": 0,
        "expected_changed": [],
        "expected_deleted": [],
        "integrity": ["ok"],
        "fts": "ok",
        "recorded_vectors": None,
        "chunk_ids": [],
        "embedded_ids": [],
    }
    db_path = store / DB_FILENAME
    if not db_path.exists():
        out["expected_changed"] = sorted(tokens)
        return out
    conn = sqlite3.connect(db_path)
    try:
        out["integrity"] = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "files" not in tables:  # killed before the schema's first commit
            out["expected_changed"] = sorted(tokens)
            return out
        try:
            conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)")
        except sqlite3.DatabaseError as exc:
            out["fts"] = str(exc)
        rows = {str(p): h for p, h in conn.execute("SELECT path, content_hash FROM files")}
        out["rows"] = len(rows)
        out["embeddings"] = conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        out["chunk_ids"] = [r[0] for r in conn.execute("SELECT id FROM chunks")]
        out["embedded_ids"] = [
            r[0] for r in conn.execute("SELECT c.id FROM chunks c JOIN embeddings e ON e.key = c.embed_key")
        ]
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()
    out["expected_changed"] = sorted(rel for rel in tokens if rows.get(rel) != _content_hash(root / rel))
    out["expected_deleted"] = sorted(rel for rel in rows if rel not in tokens)
    name = meta.get("vectors_file")
    if name:
        path = store / name
        out["recorded_vectors"] = {
            "exists": path.is_file(),
            "size_ok": path.is_file() and path.stat().st_size == int(meta["vectors_size"]),
            "hash_ok": path.is_file() and file_mac(path, store_key()) == meta["vectors_mac"],
        }
    return out


def complete(root: Path, model: str, tokens: dict[str, str], probes: list[str]) -> dict[str, Any]:
    """Open the store as a restarted server would, finish the index, and check it."""
    out: dict[str, Any] = {}
    config = Config(model=model)
    engine = Engine(root, config).open()
    try:
        assert engine.db is not None and not engine.read_only
        out["tmp_files_after_open"] = sorted(p.name for p in engine.store_dir.glob("*.tmp"))
        report = scan(engine)
        out["files_changed"] = report.files_changed
        out["files_deleted"] = report.files_deleted
        out["pending_keys"] = (
            engine.db.reader()
            .execute(
                "SELECT count(DISTINCT embed_key) FROM chunks"
                " WHERE embed_key NOT IN (SELECT key FROM embeddings)"
            )
            .fetchone()[0]
        )
        embedded = embed_pending(engine)
        # Computed by the model or taken from the shared embedding cache (which keeps what the
        # killed rounds computed): either way, exactly the inputs that lacked a vector.
        out["embedded"] = embedded.embedded + embedded.from_shared
        assert engine.vectors is not None
        keys = set(engine.vectors.keys().tolist())
        live = set(engine.db.embedded_chunk_ids().tolist())
        out["vector_keys_without_chunk"] = len(keys - live)
        out["embedded_chunks_without_vector"] = len(live - keys)
        out["problems"] = engine.db.integrity_problems()
        out["pending_after"] = engine.status().pending
        found: dict[str, Any] = {}
        for rel in probes:
            hits = search(engine, SearchQuery(tokens[rel], mode="lexical", limit=5)).hits
            found[rel] = {"lexical": [(h.path, h.start_line, h.end_line) for h in hits[:1]]}
            if hits:
                # The chunk's own model input as the query: its vector is the chunk's vector,
                # so the dense half must rank exactly that chunk first (keys map to chunks).
                row = engine.db.chunks_by_id([hits[0].chunk_id])[hits[0].chunk_id]
                text = embed_input(row.path, row.header, row.text)[:MAX_QUERY_CHARS]
                dense = search(engine, SearchQuery(text, mode="semantic", limit=3)).hits
                found[rel]["dense_first"] = dense[0].chunk_id == row.id if dense else False
        out["found"] = found
        out["embedded_ids"] = engine.db.embedded_chunk_ids().tolist()
    finally:
        engine.close()
    # What the next start will load: the saved graph must hold exactly the embedded chunks.
    reader = Engine(root, config, read_only=True).open()
    try:
        assert reader.db is not None
        saved = set(reader.vectors.keys().tolist()) if reader.vectors is not None else set()
        live = set(reader.db.embedded_chunk_ids().tolist())
        out["saved_keys_without_chunk"] = len(saved - live)
        out["embedded_chunks_not_saved"] = len(live - saved)
    finally:
        reader.close()
    return out


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        try:
            root = Path(request["root"])
            result: dict[str, Any] = {"inspect": inspect(root, request["tokens"])}
            if request.get("complete"):
                result["complete"] = complete(
                    root, request["model"], request["tokens"], request.get("probes", [])
                )
        except Exception:
            result = {"error": traceback.format_exc()}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
