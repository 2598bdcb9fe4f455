"""Persistence: the SQLite database (source of truth), the HNSW vector cache, the writer lock."""
