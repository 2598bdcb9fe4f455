"""The database's layout: its schema version, file name, the meta keys with a meaning of their own,
and the tables, indexes, FTS5 tables and triggers (one ``CREATE … IF NOT EXISTS`` script).
"""

from __future__ import annotations

# Bump when the layout changes: an older or newer store is rebuilt, never misread.
SCHEMA_VERSION = 3
DB_FILENAME = "kenning.sqlite3"
# Meta key: every chunk with an id up to this one has a vector of the store's model (chunk ids
# only grow and a chunk never changes its model input; a model change deletes the key). The
# embedding pass starts after it, and counting pending chunks looks only past it.
EMBEDDED_THROUGH = "embedded_through"
# Meta key: the store's database token (``trust.database_token``); only a database holding the
# token of the store it lies in is believed or written.
STORE_AUTH = "store_auth"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    content_hash TEXT,
    language TEXT,
    skip_reason TEXT,
    line_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS files_language ON files(language);
-- AUTOINCREMENT: a chunk id is never reused, so a key in the HNSW file can never point at a
-- different chunk than the one it was embedded from, whatever happened between saves.
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    kind TEXT NOT NULL,
    symbol TEXT,
    header TEXT NOT NULL,
    text TEXT NOT NULL,
    idents TEXT NOT NULL,
    embed_key BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE INDEX IF NOT EXISTS chunks_embed_key ON chunks(embed_key);
CREATE TABLE IF NOT EXISTS symbols(
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    container TEXT,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    name_line INTEGER NOT NULL,
    name_col INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS symbols_file ON symbols(file_id);
-- The embedding cache: float16 vectors keyed by a hash of the exact model input. It is valid for
-- the store's model only (meta 'model_id'); a model change empties it.
CREATE TABLE IF NOT EXISTS embeddings(key BLOB PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, idents, content='chunks', content_rowid='id',
    tokenize="unicode61 remove_diacritics 2"
);
-- FTS5's own per-term counts (a view, no storage). A search counts with a capped MATCH instead
-- (SearchReads.term_doc_counts): this walks every doclist whole. Kept as the tests' reference.
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text, idents) VALUES (new.id, new.text, new.idents);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, idents)
    VALUES ('delete', old.id, old.text, old.idents);
END;
CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE OF text, idents ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, idents)
    VALUES ('delete', old.id, old.text, old.idents);
    INSERT INTO chunks_fts(rowid, text, idents) VALUES (new.id, new.text, new.idents);
END;
"""
