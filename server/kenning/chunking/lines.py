"""Line bookkeeping shared by every chunker, and the line-window packer.

A file is ``text.split("\\n")`` — never ``str.splitlines()``, which also breaks on ``\\x0b``,
``\\x0c``, ``\\u2028`` and friends, none of which start a new line in an editor, so line numbers
would drift. Lines are 1-based here, as in ``Chunk``. A line is *blank* when ``line.strip()`` is
empty (so a form-feed-only line, common in old C and Python sources, is blank).

``pack_windows`` cuts a line range into windows that fit a character budget, choosing where to
cut from a score per line boundary (blank lines, statement starts, list items …) while keeping
window sizes even, so a range slightly over budget becomes two halves, not a full window and a
crumb.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping
from itertools import accumulate

# A cut next to a blank line is worth this much; callers add their own bonuses on top.
BLANK_BONUS = 4
# How much a window that strays from the even target size loses, per target-size of deviation.
_SIZE_WEIGHT = 5.0
# ... and a window under a quarter of the target this much more: only when nothing else fits.
_CRUMB_PENALTY = 8.0
_NO_BONUS: Mapping[int, int] = {}


class LineIndex:
    """The lines of one text with prefix sums, so any span's character size is O(1)."""

    __slots__ = ("_blank", "_pos", "lines")

    def __init__(self, text: str) -> None:
        self.lines: list[str] = text.split("\n")
        # _pos[i] = characters in lines 1..i including one "\n" after each of them.
        self._pos: list[int] = [0, *accumulate(len(line) + 1 for line in self.lines)]
        self._blank: list[bool] = [not line.strip() for line in self.lines]

    @property
    def count(self) -> int:
        return len(self.lines)

    def line(self, n: int) -> str:
        return self.lines[n - 1]

    def is_blank(self, n: int) -> bool:
        return self._blank[n - 1]

    def nonblank(self, start: int, end: int) -> int:
        """How many of lines ``start..end`` hold more than whitespace."""
        return end - start + 1 - sum(self._blank[start - 1 : end])

    def size(self, start: int, end: int) -> int:
        """Characters of ``"\\n".join(lines[start-1:end])``."""
        return self._pos[end] - self._pos[start - 1] - 1

    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start - 1 : end])

    def last_fitting(self, start: int, budget: int, limit: int) -> int:
        """The last line ``e <= limit`` with ``size(start, e) <= budget``; ``start - 1`` if none."""
        cap = self._pos[start - 1] + budget + 1
        return min(limit, bisect_right(self._pos, cap, start, limit + 1) - 1)

    def trim(self, start: int, end: int) -> tuple[int, int] | None:
        """The span without its leading and trailing blank lines; None when all blank."""
        blank = self._blank
        while start <= end and blank[start - 1]:
            start += 1
        while end >= start and blank[end - 1]:
            end -= 1
        return (start, end) if start <= end else None

    def next_nonblank(self, start: int, end: int) -> int | None:
        blank = self._blank
        while start <= end:
            if not blank[start - 1]:
                return start
            start += 1
        return None

    def has_word(self, start: int, end: int) -> bool:
        """Whether lines start..end hold any letter or digit (a lone ``}`` or ``);`` does not)."""
        return any(ch.isalnum() for line in self.lines[start - 1 : end] for ch in line)


def pack_windows(
    index: LineIndex,
    start: int,
    end: int,
    budget: int,
    bonus: Mapping[int, int] = _NO_BONUS,
    *,
    first_budget: int | None = None,
    leads: Callable[[int, int], bool] | None = None,
) -> list[tuple[int, int]]:
    """Cut lines ``start..end`` into trimmed windows of at most ``budget`` characters.

    ``bonus[c]`` rewards a cut just before line ``c``; a cut next to a blank line earns
    ``BLANK_BONUS`` on top. A line longer than the budget becomes a window of its own (never
    truncated). ``first_budget`` caps the first window only (room left after a heading that
    will be glued in front of it). ``leads(first, last)`` says lines that lead into what
    follows them (a section's heading): no window is cut to hold only them while a cut
    further on fits. Every non-blank line of the range ends up in exactly one window, in order.
    """
    windows: list[tuple[int, int]] = []
    blank = index._blank
    s = index.next_nonblank(start, end)
    last = None if s is None else index.trim(s, end)
    if s is None or last is None:
        return windows
    end = last[1]
    cap = budget if first_budget is None else max(1, min(first_budget, budget))
    while s is not None:
        if index.size(s, s) > cap:
            # Over budget on its own: its own window, kept whole (the embedder truncates).
            if cap < budget and index.size(s, s) <= budget:
                cap = budget  # only the reduced first budget was too small; retry at full size
                continue
            windows.append((s, s))
            s = index.next_nonblank(s + 1, end)
            cap = budget
            continue
        fit = index.last_fitting(s, cap, end)
        if fit >= end:
            windows.append((s, end))
            break
        remaining = index.size(s, end)
        parts = -(-remaining // budget)
        target = max(1.0, min(cap, remaining / parts))
        best_cut, best_value = fit + 1, float("-inf")
        for cut in range(s + 1, fit + 2):  # window = s .. cut-1
            if leads is not None and cut <= fit and leads(s, cut - 1):
                continue
            size = index.size(s, cut - 1)
            value = bonus.get(cut, 0) - _SIZE_WEIGHT * abs(size - target) / target
            if blank[cut - 1] or blank[cut - 2]:
                value += BLANK_BONUS
            if size < target / 4:
                value -= _CRUMB_PENALTY  # a banner comment alone is a poor window
            if value >= best_value:  # ties go to the later cut: fuller windows
                best_cut, best_value = cut, value
        span = index.trim(s, best_cut - 1)
        assert span is not None  # line s is not blank
        windows.append(span)
        s = index.next_nonblank(best_cut, end)
        cap = budget
    return windows
