"""Jupyter notebooks (``.ipynb``), for the chunker.

A notebook is JSON: each line of a cell is a string in an array, and beside the cells lie their
outputs (tables, base64 images) and metadata. Read as text, a notebook was embedded as JSON
escapes and outputs; its functions were no symbols. The chunker reads a *view* of it instead,
with the file's own lines: every line of a cell's source, decoded, where it stands in the file;
a Markdown cell's lines as comments in a Python notebook (so a heading and its prose go with the
code below them); everything else blank. Locations are the file's own lines, and a symbol's
column is moved to where its name stands in the JSON string.

Jupyter, JupyterLab, VS Code and nbformat write each source line on a line of its own. A
notebook written otherwise (a cell's source as one string, the file on one line) has no such
view, and is windowed as text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# The line that opens a cell's source array, and a line holding one string of it.
_SOURCE_OPEN = re.compile(r'^\s*"source"\s*:\s*\[\s*$')
# `\s*(?:,\s*)?$`, not `\s*,?\s*$`: the two runs of spaces could split a long run of them every
# way, and 8,000 spaces before a stray character took 0.33 s (quadratic; hours at 2 MiB).
_STRING_LINE = re.compile(r'^(\s*)("(?:[^"\\]|\\.)*")\s*(?:,\s*)?$')
# IPython's own syntax, which is no Python: a line magic, a shell escape, a help request, and a
# cell magic (`%%bash`), which makes its whole cell another language.
_MAGIC = re.compile(r"^\s*(?:%|!|\?)")
_CELL_MAGIC = re.compile(r"^%%")
# A notebook's kernel language → the kenning language its code cells are read as.
_LANGUAGE_OF_KERNEL = {"python": "python", "python3": "python", "ipython": "python"}


@dataclass(frozen=True, slots=True)
class NotebookView:
    text: str  # the file's lines: the cells' decoded where they stand, the rest blank
    language: str  # what the code cells are written in ("text" for a kernel kenning cannot parse)
    offsets: list[int]  # per line (0-based): the column in the file where the view's line starts
    prose: frozenset[int]  # the lines (1-based) of Markdown cells


def notebook_view(text: str) -> NotebookView | None:
    """The view of the notebook ``text`` (a ``.ipynb`` file's content); None when it is no
    notebook, or not one written a source line to a line."""
    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError):
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return None
    language = _kernel_language(notebook.get("metadata"))
    lines = text.split("\n")
    view = [""] * len(lines)
    offsets = [0] * len(lines)
    prose: set[int] = set()
    at = 0
    for cell in cells:
        source = cell.get("source") if isinstance(cell, dict) else None
        if isinstance(source, str):
            source = [source] if source else []
        if not isinstance(source, list) or not source:
            continue
        if not all(isinstance(part, str) for part in source):
            return None
        # The next `"source": [` line whose strings are this cell's (an output's data may hold
        # a "source" key of its own). Linear: a candidate is read only up to the first line
        # that is no string, and the next candidate is such a line.
        while True:
            while at < len(lines) and not _SOURCE_OPEN.match(lines[at]):
                at += 1
            if at == len(lines):
                return None
            if _stands_at(lines, at + 1, source):
                break
            at += 1
        kind = cell.get("cell_type")
        whole_cell_magic = bool(_CELL_MAGIC.match(source[0]))
        for i, part in enumerate(source):
            line = at + 1 + i
            decoded = part.removesuffix("\n")
            string = _STRING_LINE.match(lines[line])
            assert string is not None  # _stands_at matched it
            offsets[line] = len(string.group(1)) + 1
            if language == "python" and (kind != "code" or whole_cell_magic or _MAGIC.match(decoded)):
                decoded = "# " + decoded  # prose and IPython syntax, kept beside the code
                offsets[line] -= 2
            view[line] = decoded
            if kind == "markdown":
                prose.add(line + 1)
        at += 1 + len(source)
    return NotebookView("\n".join(view), language, offsets, frozenset(prose))


def _stands_at(lines: list[str], start: int, source: list[str]) -> bool:
    """Whether ``source`` stands one part a line from ``lines[start]``."""
    for i, part in enumerate(source):
        line = start + i
        found = _STRING_LINE.match(lines[line]) if line < len(lines) else None
        if found is None or "\n" in part[:-1] or _decode(found.group(2)) != part:
            return False
    return True


def _decode(literal: str) -> str | None:
    try:
        decoded = json.loads(literal)
    except ValueError:
        return None
    return decoded if isinstance(decoded, str) else None


def _kernel_language(metadata: object) -> str:
    """The notebook's code language as kenning names it; Python where the notebook names none
    (nbformat's own default)."""
    if not isinstance(metadata, dict):
        return "python"
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        section = metadata.get(key)
        name = section.get(field) if isinstance(section, dict) else None
        if isinstance(name, str) and name:
            return _LANGUAGE_OF_KERNEL.get(name.lower(), "text")
    return "python"
