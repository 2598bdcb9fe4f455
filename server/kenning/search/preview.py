"""The few lines of a hit shown in a result list, around the query's words."""

from __future__ import annotations

from collections.abc import Sequence

PREVIEW_CHARS = 300


def preview(text: str, terms: Sequence[str]) -> str:
    lines = text.split("\n")
    best, best_hits = 0, 0
    lowered = [t.lower() for t in terms if len(t) > 1]
    if lowered:
        for i, line in enumerate(lines):
            low = line.lower()
            hits = sum(1 for t in lowered if t in low)
            if hits > best_hits:
                best, best_hits = i, hits
    out: list[str] = []
    size = 0
    for line in lines[best:]:
        stripped = line.strip()
        if not stripped:
            continue
        if size + len(stripped) > PREVIEW_CHARS:
            if not out:
                out.append(_window(stripped, lowered))
            break
        out.append(stripped)
        size += len(stripped) + 1
        if len(out) == 3:
            break
    return "\n".join(out)


def _window(line: str, terms: Sequence[str]) -> str:
    """A preview-sized slice of a long line, around the first query term it contains."""
    low = line.lower()
    at = min((i for i in (low.find(t) for t in terms) if i >= 0), default=0)
    start = max(0, min(at - PREVIEW_CHARS // 3, len(line) - (PREVIEW_CHARS - 2)))
    piece = line[start : start + PREVIEW_CHARS - 2]
    return ("…" if start else "") + piece + ("…" if start + len(piece) < len(line) else "")
