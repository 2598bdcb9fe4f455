"""Markdown chunks: blocks first, then sections packed up to the budget.

The text is split into blocks — front matter (``---``/``+++`` at the top), fenced code (```` ``` ````
and ``~~~``), display math (``$$``), ATX and setext headings, tables, block quotes, lists (an
item's continuation lines and nested items included), indented code, HTML blocks, thematic
breaks and paragraphs — with CommonMark's rules approximated line by line (no inline parsing).

Blocks are packed into chunks:

* A heading starts a new chunk, unless the chunk so far is only headings, or the heading is a
  deeper subsection that fits whole into the current chunk (a section that fits the budget is
  one chunk with its subsections).
* A chunk never ends on a heading: a heading is always followed by content in its chunk, a
  paragraph being cut if it does not fit after its heading. The exceptions: a heading that is
  the last thing in the file; a heading followed by a single line longer than the budget; and
  a heading followed by a fenced block, table or list that fits the budget alone but not with
  the heading — the block stays whole, the heading is left alone (and is also in the block's
  ``header``).
* A block is never cut while it fits the budget. A block longer than the budget is cut at line
  boundaries as a last resort, at the best places its kind offers: fenced code and front matter
  at blank lines, lists between items, tables between rows, quotes at ``>`` blank lines,
  paragraphs after sentence ends. (The issue allowed this only for fenced blocks and paragraphs;
  tables and lists are cut too, between rows/items, so that every chunk of every file obeys the
  same budget and a 2,000-line link list does not become one unsearchable chunk.)

Every chunk is ``kind="section"``; ``symbol`` is the text of the nearest heading at or above the
chunk's first content line; ``header`` is the heading path above the chunk, e.g.
``# Guide > ## Install`` (a heading that the chunk itself starts with is in its text, not in its
header). Markdown yields no symbols.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kenning.chunking.lines import LineIndex, pack_windows

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r" {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_LIST = re.compile(r"( *)(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_QUOTE = re.compile(r" {0,3}>")
_TABLE_DELIMITER = re.compile(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_HTML = re.compile(r" {0,3}<(?:[A-Za-z][A-Za-z0-9-]*[\s/>]|[A-Za-z][A-Za-z0-9-]*$|!--|/[A-Za-z])")
_SENTENCE_END = re.compile(r"[.!?:;][\"')\]*_]*\s*$")
# Blocks that may be cut (at line boundaries) to keep a heading together with its first
# lines; code, tables and lists are only cut when they exceed the budget on their own.
_PROSE = frozenset({"paragraph", "quote", "html"})
# Front matter longer than this is not front matter but a document that starts with a rule.
_MAX_FRONT_MATTER = 500


@dataclass(frozen=True, slots=True)
class Block:
    start: int  # 1-based, inclusive
    end: int
    kind: str  # heading, fence, math, front_matter, table, quote, list, code, html, rule, paragraph
    level: int = 0  # headings: 1-6
    title: str = ""  # headings: the text


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


class _Scanner:
    """Line-by-line block splitter (0-based indices internally)."""

    def __init__(self, lines: list[str], blank: list[bool]) -> None:
        self.lines = lines
        self.blank = blank
        self.count = len(lines)

    def _heading_title(self, line: str) -> str:
        title = line.strip().lstrip("#").strip()
        closing = re.search(r"(?:^|[ \t])#+$", title)  # "## Title ##" → "Title"
        if closing is not None:
            title = title[: closing.start()].strip()
        return title

    def _table_starts(self, i: int) -> bool:
        lines = self.lines
        return (
            i + 1 < self.count
            and "|" in lines[i]
            and "-" in lines[i + 1]
            and _TABLE_DELIMITER.match(lines[i + 1]) is not None
        )

    def _interrupts_paragraph(self, i: int) -> bool:
        line = self.lines[i]
        if _FENCE.match(line) or _ATX.match(line) or _QUOTE.match(line) or _THEMATIC.match(line):
            return True
        if line.lstrip().startswith("$$") or self._table_starts(i):
            return True
        item = _LIST.match(line)
        # CommonMark: a list interrupts a paragraph only with a bullet or "1."
        return (
            item is not None
            and len(item.group(1)) <= 3
            and (line.lstrip()[:1] in "-+*" or line.lstrip().startswith(("1.", "1)")))
        )

    def _fence_end(self, i: int, marker: str) -> int:
        char, width = marker[0], len(marker)
        closing = re.compile(rf" {{0,3}}{re.escape(char)}{{{width},}}[ \t]*$")
        for j in range(i + 1, self.count):
            if closing.match(self.lines[j]):
                return j
        return self.count - 1  # unclosed: CommonMark runs it to the end of the document

    def _list_end(self, i: int) -> int:
        lines, blank = self.lines, self.blank
        base = _indent(lines[i])
        j, last = i + 1, i
        while j < self.count:
            if blank[j]:
                k = j
                while k < self.count and blank[k]:
                    k += 1
                if k >= self.count:
                    break
                item = _LIST.match(lines[k])
                if _indent(lines[k]) > base or (item is not None and _indent(lines[k]) >= base):
                    j = k
                    continue
                break
            line = lines[j]
            item = _LIST.match(line)
            if (item is not None and _indent(line) >= base) or _indent(line) > base:
                last = j
            elif (
                _FENCE.match(line)
                or _ATX.match(line)
                or _THEMATIC.match(line)
                or _QUOTE.match(line)
                or self._table_starts(j)
                or item is not None
            ):
                break
            else:
                last = j  # lazy continuation of the item's paragraph
            j += 1
        return last

    def blocks(self) -> list[Block]:
        lines, blank, count = self.lines, self.blank, self.count
        out: list[Block] = []
        i = 0
        first = lines[0].rstrip() if count else ""
        if first in ("---", "+++"):
            closers = ("---", "...") if first == "---" else ("+++",)
            for j in range(1, min(count, _MAX_FRONT_MATTER)):
                if lines[j].rstrip() in closers:
                    out.append(Block(1, j + 1, "front_matter"))
                    i = j + 1
                    break
        previous_kind = ""
        while i < count:
            if blank[i]:
                i += 1
                previous_kind = ""
                continue
            line = lines[i]
            stripped = line.strip()
            fence = _FENCE.match(line)
            if fence is not None:
                j = self._fence_end(i, fence.group(1))
                out.append(Block(i + 1, j + 1, "fence"))
            elif _ATX.match(line):
                level = len(stripped) - len(stripped.lstrip("#"))
                out.append(Block(i + 1, i + 1, "heading", level, self._heading_title(line)))
                j = i
            elif stripped.startswith("$$") and (j := self._math_end(i)) >= 0:
                out.append(Block(i + 1, j + 1, "math"))
            elif _THEMATIC.match(line):
                out.append(Block(i + 1, i + 1, "rule"))
                j = i
            elif _QUOTE.match(line):
                j = i
                while j + 1 < count and not blank[j + 1]:
                    j += 1  # lazy continuation: a quote runs to the next blank line
                out.append(Block(i + 1, j + 1, "quote"))
            elif (item := _LIST.match(line)) is not None and len(item.group(1)) <= 3:
                j = self._list_end(i)
                out.append(Block(i + 1, j + 1, "list"))
            elif self._table_starts(i):
                j = i + 1
                while j + 1 < count and not blank[j + 1] and "|" in lines[j + 1]:
                    j += 1
                out.append(Block(i + 1, j + 1, "table"))
            elif _indent(line.expandtabs(4)) >= 4 and previous_kind != "paragraph":
                j = i
                k = i + 1
                while k < count and (blank[k] or _indent(lines[k].expandtabs(4)) >= 4):
                    if not blank[k]:
                        j = k
                    k += 1
                out.append(Block(i + 1, j + 1, "code"))
            elif _HTML.match(line):
                j = i
                while j + 1 < count and not blank[j + 1]:
                    j += 1
                out.append(Block(i + 1, j + 1, "html"))
            else:
                j = i
                kind, level, title = "paragraph", 0, ""
                while j + 1 < count and not blank[j + 1]:
                    underline = _SETEXT.match(lines[j + 1])
                    if underline is not None:
                        j += 1
                        kind, level = "heading", 1 if underline.group(1)[0] == "=" else 2
                        title = " ".join(lines[k].strip() for k in range(i, j))
                        break
                    if self._interrupts_paragraph(j + 1):
                        break
                    j += 1
                out.append(Block(i + 1, j + 1, kind, level, title))
            previous_kind = out[-1].kind
            i = j + 1
        return out

    def _math_end(self, i: int) -> int:
        """Last line of a ``$$`` block starting at line i; -1 when it is not closed."""
        stripped = self.lines[i].strip()
        if len(stripped) >= 4 and stripped.endswith("$$"):
            return i  # $$ x $$ on one line
        for j in range(i + 1, self.count):
            if self.blank[j] and j > i + 1 and self.blank[j - 1]:
                return -1  # two blank lines: this was never display math
            if self.lines[j].strip().endswith("$$"):
                return j
        return -1


def _cut_bonus(index: LineIndex, block: Block) -> dict[int, int]:
    """Where an oversize block is best cut (a bonus per line that may start the next piece)."""
    bonus: dict[int, int] = {}
    if block.kind == "list":
        base = _indent(index.line(block.start))
        for n in range(block.start + 1, block.end + 1):
            item = _LIST.match(index.line(n))
            if item is not None:
                bonus[n] = 6 if len(item.group(1)) <= base else 3
    elif block.kind == "quote":
        for n in range(block.start + 1, block.end + 1):
            if index.line(n - 1).strip() == ">":
                bonus[n] = 4
    elif block.kind == "paragraph":
        for n in range(block.start + 1, block.end + 1):
            if _SENTENCE_END.search(index.line(n - 1)):
                bonus[n] = 2
    return bonus


@dataclass(slots=True)
class _Unit:
    """A block, or a piece of an oversize block; what the packer moves around."""

    start: int
    end: int
    level: int  # heading level, 0 for content
    title: str
    section_end: int = 0  # headings: the last line of their section


def _units(index: LineIndex, blocks: list[Block], budget: int) -> list[_Unit]:
    units: list[_Unit] = []
    run_start: int | None = None  # first line of the headings directly before this block
    for block in blocks:
        if block.kind == "heading":
            if index.size(block.start, block.end) <= budget:
                units.append(_Unit(block.start, block.end, block.level, block.title))
            else:
                # A setext heading whose text runs over the budget: the first piece carries
                # the heading, the rest is content.
                pieces = pack_windows(index, block.start, block.end, budget)
                units.append(_Unit(*pieces[0], block.level, block.title))
                units.extend(_Unit(start, end, 0, "") for start, end in pieces[1:])
                if len(pieces) > 1:
                    run_start = None
                    continue
            if run_start is None:
                run_start = block.start
            continue
        fits = index.size(block.start, block.end) <= budget
        if fits and (
            run_start is None or block.kind not in _PROSE or index.size(run_start, block.end) <= budget
        ):
            units.append(_Unit(block.start, block.end, 0, ""))
        else:
            # Too big, or prose that does not fit after its headings: cut, the first piece
            # leaving room for the headings that will be glued in front of it.
            first = None
            if run_start is not None:
                first = budget - index.size(run_start, block.start - 1) - 1
            pieces = pack_windows(
                index,
                block.start,
                block.end,
                budget,
                _cut_bonus(index, block),
                first_budget=first,
            )
            units.extend(_Unit(start, end, 0, "") for start, end in pieces)
        run_start = None
    # Each heading's section runs to the line before the next heading of the same or a
    # shallower level.
    open_headings: list[_Unit] = []
    for unit in units:
        if unit.level:
            while open_headings and open_headings[-1].level >= unit.level:
                open_headings.pop().section_end = unit.start - 1
            open_headings.append(unit)
    last = units[-1].end if units else 0
    for unit in open_headings:
        unit.section_end = last
    return units


def chunk_markdown(index: LineIndex, budget: int) -> list[tuple[int, int, str, str | None, str]]:
    """``(start, end, "section", symbol, header)`` per chunk, in order."""
    blank = [index.is_blank(n) for n in range(1, index.count + 1)]
    blocks = _Scanner(index.lines, blank).blocks()
    units = _units(index, blocks, budget)
    if not units:
        return []

    # Per unit: the heading stack before it (for headers) and after it (for symbols).
    before: list[tuple[tuple[int, str], ...]] = []
    after: list[tuple[tuple[int, str], ...]] = []
    stack: tuple[tuple[int, str], ...] = ()
    for unit in units:
        before.append(stack)
        if unit.level:
            kept = tuple(entry for entry in stack if entry[0] < unit.level)
            stack = (*kept, (unit.level, unit.title))
        after.append(stack)

    groups: list[list[int]] = []  # unit indices per chunk
    current: list[int] = []

    def size_from(first: int, last_line: int) -> int:
        return index.size(units[first].start, last_line)

    def heading_only(group: list[int]) -> bool:
        return all(units[k].level for k in group)

    def close(next_index: int) -> None:
        """End the current chunk before unit next_index, never on a heading if avoidable."""
        nonlocal current
        tail = len(current)
        while tail > 0 and units[current[tail - 1]].level:
            tail -= 1
        moved: list[int] = []
        if 0 < tail < len(current) and size_from(current[tail], units[next_index].end) <= budget:
            moved = current[tail:]
            current = current[:tail]
        groups.append(current)
        current = moved

    for k, unit in enumerate(units):
        if not current:
            current = [k]
            continue
        first = units[current[0]]
        if unit.level:
            if heading_only(current) and size_from(current[0], unit.end) <= budget:
                current.append(k)
            elif (
                first.level and unit.level > first.level and size_from(current[0], unit.section_end) <= budget
            ):
                current.append(k)  # a subsection that fits whole stays with its parent
            else:
                close(k)
                current.append(k)
        elif size_from(current[0], unit.end) <= budget:
            current.append(k)
        else:
            close(k)
            current.append(k)
    if current:
        groups.append(current)

    chunks: list[tuple[int, int, str, str | None, str]] = []
    for group in groups:
        span = index.trim(units[group[0]].start, units[group[-1]].end)
        if span is None:
            continue
        content = next((k for k in group if not units[k].level), None)
        headings = before[content] if content is not None else after[group[-1]]
        symbol = headings[-1][1] if headings else None
        above = before[group[0]]
        if units[group[0]].level:  # starts with its own heading: only the shallower ones are above
            above = tuple(entry for entry in above if entry[0] < units[group[0]].level)
        header = " > ".join(f"{'#' * level} {title}" for level, title in above)
        chunks.append((span[0], span[1], "section", symbol, header))
    return chunks
