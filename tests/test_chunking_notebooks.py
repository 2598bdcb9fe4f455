"""Jupyter notebooks: their cells read where they stand in the JSON (code with the kernel's
grammar, Markdown as comments beside it), their outputs and metadata left out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from kenning.chunking import DEFAULT_MAX_CHARS, ChunkedFile, chunk_source
from kenning.chunking.notebooks import notebook_view
from kenning.languages import language_for_path
from tests.chunking_helpers import check_invariants

PNG = "iVBORw0KGgo" + "A" * 60_000  # an image output: one line far past the "generated" limit


def cell(kind: str, source: str, outputs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    made: dict[str, Any] = {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
    if kind == "code":
        made |= {"execution_count": 1, "outputs": outputs or []}
    return made


def notebook(cells: list[dict[str, Any]], language: str = "python") -> str:
    """As Jupyter writes it: one-space indent, one source line to a line, keys sorted."""
    metadata = {"kernelspec": {"display_name": language, "language": language, "name": language}}
    document = {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


ANALYSIS = notebook(
    [
        cell("markdown", "# Fitting a line\n\nWeighted least squares, with the errors as weights."),
        cell("code", "%matplotlib inline\nimport numpy as np\n!pip install scipy"),
        cell(
            "code",
            'def fit_line(x, y, err):\n    """Slope and intercept."""\n    w = 1 / err ** 2\n'
            "    return np.polyfit(x, y, 1, w=w)\n\nclass Model:\n    def predict(self, x):\n"
            '        return x * "\\u00e9"\n',
            outputs=[
                {"name": "stdout", "output_type": "stream", "text": ["slope 2.0\n", "intercept 1.0\n"]},
                {"data": {"image/png": PNG, "text/plain": ["<Figure>"]}, "output_type": "display_data"},
            ],
        ),
        cell("code", "%%bash\nls -l data/\necho done"),
    ]
)


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), 1) if needle in line)


def test_a_notebooks_cells_are_chunked_where_they_stand() -> None:
    assert language_for_path("analysis.ipynb") == "jupyter"
    result = chunk_source("analysis.ipynb", ANALYSIS, "jupyter")
    view = notebook_view(ANALYSIS)
    assert view is not None and view.language == "python"
    # The chunks keep every chunker's guarantees over the view (symbols: below, over the file).
    check_invariants(view.text, ChunkedFile(chunks=result.chunks, symbols=[]), DEFAULT_MAX_CHARS)
    found = {(s.name, s.kind, s.container): s for s in result.symbols}
    assert set(found) == {
        ("fit_line", "function", None),
        ("Model", "class", None),
        ("predict", "method", "Model"),
    }
    lines = ANALYSIS.split("\n")
    for symbol in found.values():
        # The editor's line and column in the JSON file: the name inside its string.
        assert lines[symbol.name_line - 1][symbol.name_col :].startswith(symbol.name)
    assert found["fit_line", "function", None].name_line == line_of(ANALYSIS, "def fit_line")
    text = "\n".join(c.text for c in result.chunks)
    # Decoded code, not JSON; the Markdown beside it as comments; IPython syntax commented out.
    assert 'def fit_line(x, y, err):\n    """Slope and intercept."""' in text
    assert 'return x * "\\u00e9"' in text  # the source's own escape, decoded once
    assert "# # Fitting a line" in text and "# %matplotlib inline" in text and "# !pip install" in text
    assert "# %%bash\n# ls -l data/" in text
    # Prose beside imports is no boilerplate: search ranks it with the rest.
    intro = next(c for c in result.chunks if "# # Fitting a line" in c.text)
    assert "import numpy as np" in intro.text and intro.kind == "window"
    # No output, no metadata, no JSON.
    for left_out in ("slope 2.0", "iVBORw0KGgo", "<Figure>", "kernelspec", '"cell_type"', "\\n"):
        assert left_out not in text, left_out


def test_a_notebook_of_another_kernel_is_windowed_decoded() -> None:
    text = notebook(
        [cell("markdown", "Load the data."), cell("code", 'df <- read.csv("x.csv")\nsummary(df)')], "R"
    )
    result = chunk_source("a.ipynb", text, "jupyter")
    assert not result.symbols
    text_of_chunks = "\n".join(c.text for c in result.chunks)
    # Prose as written (an R comment is no Python one), the code decoded: no JSON.
    assert "\nLoad the data." not in text_of_chunks and text_of_chunks.startswith("Load the data.")
    assert 'df <- read.csv("x.csv")\nsummary(df)' in text_of_chunks
    assert '"cell_type"' not in text_of_chunks


def test_a_notebook_not_written_a_line_to_a_line_is_windowed_as_text() -> None:
    code = cell("code", "def load(path):\n    return open(path).read()\n")
    compact = json.dumps({"cells": [code], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    result = chunk_source("compact.ipynb", compact, "jupyter")
    assert notebook_view(compact) is None
    assert [c.text for c in result.chunks] == [compact]  # its JSON, as before
    # ...unless its long lines are outputs, which nobody searches.
    code["outputs"] = [{"data": {"image/png": PNG}, "output_type": "display_data"}]
    with_outputs = json.dumps({"cells": [code], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    assert chunk_source("compact.ipynb", with_outputs, "jupyter").chunks == []


def test_files_that_are_no_notebook_are_windowed() -> None:
    for text in ("not json {", "[1, 2, 3]", '{"cells": 3}', '{"cells": [{"source": [1, 2]}]}'):
        result = chunk_source("x.ipynb", text, "jupyter")
        assert [c.text for c in result.chunks] == [text]
        assert not result.symbols
    # Nested past the JSON reader's recursion limit: no view, and its one long line no window.
    assert chunk_source("x.ipynb", "[" * 100_000, "jupyter").chunks == []


def test_an_outputs_source_key_is_not_taken_for_the_cells() -> None:
    # Keys sorted, a cell's outputs come before its source; an output's data may hold a
    # "source" array of its own, which must not be read as the cell's.
    data = {"application/json": {"source": ["not code\n", "at all"]}}
    code = cell("code", "def load(path):\n    return path", [{"data": data, "output_type": "execute_result"}])
    text = notebook([code])
    result = chunk_source("a.ipynb", text, "jupyter")
    assert [(s.name, s.name_line) for s in result.symbols] == [("load", line_of(text, "def load"))]
    assert "not code" not in "\n".join(c.text for c in result.chunks)


def test_kenning_finds_a_notebooks_cell_by_its_description(tmp_path: Path) -> None:
    """As a user runs it: `kenning index`, then `kenning search` in words the Markdown cell
    says, and `kenning symbols`: both at the notebook's lines, and no output indexed."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "analysis.ipynb").write_text(ANALYSIS)
    (root / "io.py").write_text("def read_rows(path):\n    return open(path).read().split()\n")

    def kenning(*args: str) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "kenning", *args], capture_output=True, text=True, timeout=600, check=False
        )
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert "indexed 2 files" in kenning("index", str(root))
    where = f"analysis.ipynb:{line_of(ANALYSIS, 'def fit_line')}"
    assert where in kenning("symbols", "fit_line", "--root", str(root))
    found = kenning("search", "fit a straight line with the errors as weights", "--root", str(root))
    assert f"{where}-" in found.split("\n")[0] and "fit_line" in found.split("\n")[0], found
    assert "iVBORw0KGgo" not in kenning("search", "iVBORw0KGgo", "--root", str(root))


def test_a_source_line_of_a_long_run_of_spaces_is_read_in_linear_time() -> None:
    # After a `"source": [` line, each line is matched as a JSON string and a comma; with two
    # runs of spaces in the pattern, 8,000 spaces before a stray character took 0.33 s, growing
    # with the square (hours for a line at the 2 MiB cap).
    cells = '{"cells": [{"cell_type": "code", "source": ["y"]}],\n'
    text = cells + ' "source": [\n  "x"' + " " * 400_000 + "]\n}\n"
    assert json.loads(text)["source"] == ["x"]  # valid JSON: the line is matched
    assert notebook_view(text) is None
