"""The LSP layer's columns: a hit's range ends in UTF-16 code units on the wire, while the engine
hands it the last line's text (and code points); no server needed."""

from __future__ import annotations

import pytest

from kenning.lsp.positions import utf16_len
from kenning.lsp.protocol import hit_to_wire
from kenning.search import Hit


@pytest.mark.parametrize(
    ("text", "code_points", "utf16"),
    [
        ("", 0, 0),
        ("    return x", 12, 12),
        ("    return 'Grüße'", 18, 18),  # Latin-1 and BMP characters: one unit each
        ("    s = '→ …'", 13, 13),
        ("    return '🎉'", 14, 15),  # past U+FFFF: a surrogate pair, two units
        ("𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🎉", 9, 17),
    ],
)
def test_utf16_len_counts_surrogate_pairs_twice(text: str, code_points: int, utf16: int) -> None:
    assert len(text) == code_points
    assert utf16_len(text) == utf16


def _hit(last_line: str) -> Hit:
    return Hit(
        chunk_id=1,
        path="uni.py",
        start_line=6,
        end_line=8,
        score=0.5,
        preview="def emoji_tail():",
        symbol="emoji_tail",
        kind="function",
        language="python",
        dense_rank=1,
        lexical_rank=None,
        last_line=last_line,
    )


def test_hit_range_ends_in_utf16_units() -> None:
    hit = _hit("    return '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🎉'")
    assert hit.end_column == 22  # the engine's column: code points
    wire = hit_to_wire(hit, "file:///ws/uni.py")
    assert wire["range"] == {"start": {"line": 5, "character": 0}, "end": {"line": 7, "character": 30}}
    # An ASCII last line: both units agree.
    assert hit_to_wire(_hit("    x = 1"), "file:///ws/uni.py")["range"]["end"]["character"] == 9
