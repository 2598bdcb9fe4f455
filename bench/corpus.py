"""The benchmark corpora: the running interpreter's standard library, copied, replicated, and
stripped of its docstrings for the retrieval-quality check.

* :func:`copy_stdlib` copies ``Lib/`` without its tests (``test/``, ``tests/``, ``idle_test/``),
  ``site-packages/`` and ``__pycache__/`` into a workspace, every file type included (what an
  editor would open); ``subset`` keeps only some top-level entries (smoke and quick runs).
* :func:`replicate` adds ``copy1/…``, ``copy2/…`` copies of the ``.py`` files, each starting with
  a comment line naming its copy, so no two files (and no two first chunks) are byte-identical
  and every chunk's model input (which starts with its path) differs.
* :func:`strip_docstrings` removes docstrings with ``ast`` and blanks their lines instead of
  deleting them, so every line keeps its number; :func:`docstring_queries` turns the first
  sentence of each stripped function docstring into a query whose answer is that function.
"""

from __future__ import annotations

import ast
import inspect
import os
import random
import re
import shutil
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SKIP_DIRS = frozenset({"test", "tests", "idle_test", "site-packages", "__pycache__"})

# Smoke: two dozen small modules (~330 chunks: seconds to embed).
SMOKE_SUBSET = (
    "json",
    "keyword.py",
    "this.py",
    "tty.py",
    "token.py",
    "bisect.py",
    "colorsys.py",
    "fnmatch.py",
    "linecache.py",
    "sched.py",
    "uu.py",
    "genericpath.py",
    "abc.py",
    "copy.py",
    "glob.py",
    "shlex.py",
    "queue.py",
)
# Quick: a tenth of the library or so (a few thousand chunks: a minute or two to embed).
QUICK_SUBSET = (
    "json",
    "http",
    "urllib",
    "email",
    "logging",
    "concurrent",
    "importlib",
    "csv.py",
    "textwrap.py",
    "heapq.py",
    "shutil.py",
    "base64.py",
    "gzip.py",
    "argparse.py",
    "configparser.py",
    "dataclasses.py",
    "functools.py",
    "pathlib.py",
    "subprocess.py",
    "tempfile.py",
    "zipfile.py",
)


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def stdlib_files(subset: Iterable[str] | None = None) -> list[Path]:
    """Relative paths of the library's files (tests and caches left out), sorted."""
    root = stdlib_root()
    wanted = set(subset) if subset is not None else None
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        rel_dir = Path(dirpath).relative_to(root)
        if wanted is not None and rel_dir.parts and rel_dir.parts[0] not in wanted:
            dirnames[:] = []
            continue
        for name in sorted(filenames):
            rel = rel_dir / name
            if wanted is not None and not rel_dir.parts and name not in wanted:
                continue
            out.append(rel)
    return out


def copy_stdlib(dest: Path, subset: Iterable[str] | None = None) -> list[Path]:
    """Copy the library (or a subset of its top-level entries) into ``dest``; the copied paths."""
    root = stdlib_root()
    files = stdlib_files(subset)
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    return files


def copy_marker(copy: int) -> str:
    return f"# kenning benchmark copy {copy}\n"


def replicate(dest: Path, files: Iterable[Path], copy: int) -> list[Path]:
    """Write ``copy<N>/<file>`` for each ``.py`` file of ``dest``, a marker comment on top."""
    written: list[Path] = []
    for rel in files:
        if rel.suffix != ".py":
            continue
        source = (dest / rel).read_bytes()
        target = dest / f"copy{copy}" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(copy_marker(copy).encode() + source)
        written.append(target.relative_to(dest))
    return written


# -- docstrings --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DocQuery:
    """A query (a docstring's first sentence) and where its answer lives (1-based lines)."""

    query: str
    path: str
    name: str
    start_line: int  # the def line (decorators excluded)
    end_line: int
    # Other places that answer it too, (path, start, end): a C++ method's definitions in the
    # ``.cpp`` next to the documented declaration in the header (bench/mlcorpus.py).
    also: tuple[tuple[str, int, int], ...] = ()


def _first_sentence(doc: str) -> str:
    paragraph = inspect.cleandoc(doc).split("\n\n", 1)[0]
    text = " ".join(paragraph.split())
    match = re.search(r"(?<=[.!?])\s", text)
    sentence = text[: match.start()] if match else text
    return sentence.rstrip(".").strip()


def _doc_node(node: ast.AST) -> ast.Expr | None:
    body = getattr(node, "body", None)
    if not body:
        return None
    first = body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


def strip_docstrings(path: str, text: str) -> tuple[str, list[DocQuery]]:
    """``text`` without its docstrings (their lines blanked; a body left empty gets ``pass``),
    and a :class:`DocQuery` for every function whose docstring went.

    A docstring sharing a line with other code (``def f(): "doc"``) is left alone. Files that do
    not parse come back unchanged.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return text, []
    lines = text.split("\n")
    raw = [line.encode("utf-8", "surrogateescape") for line in lines]
    queries: list[DocQuery] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        expr = _doc_node(node)
        if expr is None or expr.end_lineno is None or expr.end_col_offset is None:
            continue
        first, last = expr.lineno - 1, expr.end_lineno - 1
        before = raw[first][: expr.col_offset]
        after = raw[last][expr.end_col_offset :].strip()
        if before.strip() or (after and not after.startswith(b"#")):
            continue
        body = node.body  # type: ignore[attr-defined]
        for i in range(first, last + 1):
            lines[i] = ""
        if len(body) == 1:
            lines[first] = before.decode("utf-8", "surrogateescape") + "pass"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = expr.value.value  # type: ignore[attr-defined]
            queries.append(
                DocQuery(
                    query=_first_sentence(doc),
                    path=path,
                    name=node.name,
                    start_line=node.lineno,
                    end_line=node.end_lineno or node.lineno,
                )
            )
    return "\n".join(lines), queries


def strip_tree(root: Path, files: Iterable[Path]) -> list[DocQuery]:
    """Strip the docstrings of every ``.py`` file under ``root`` in place; all their queries."""
    queries: list[DocQuery] = []
    for rel in files:
        if rel.suffix != ".py":
            continue
        path = root / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        stripped, found = strip_docstrings(rel.as_posix(), text)
        if stripped != text:
            path.write_text(stripped, encoding="utf-8")
        queries.extend(found)
    return queries


def docstring_queries(
    candidates: list[DocQuery], count: int, *, seed: int = 13, indexed: set[str] | None = None
) -> list[DocQuery]:
    """A seeded sample of ``count`` usable queries: 4-40 words, a sentence no other function
    shares, not a doctest, from a file the index holds."""
    seen: dict[str, int] = {}
    for q in candidates:
        seen[q.query.lower()] = seen.get(q.query.lower(), 0) + 1
    usable = [
        q
        for q in candidates
        if 4 <= len(q.query.split()) <= 40
        and seen[q.query.lower()] == 1
        and not q.query.startswith((">>>", "..", ":"))
        and (indexed is None or q.path in indexed)
    ]
    usable.sort(key=lambda q: (q.path, q.start_line))
    rng = random.Random(seed)
    return rng.sample(usable, min(count, len(usable)))
