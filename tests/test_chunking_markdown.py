"""Markdown chunking: sections at headings, blocks kept whole, oversize fences and lists cut."""

from __future__ import annotations

from kenning.chunking.markdown import _Scanner
from tests.chunking_helpers import (
    chunked,
    src,
)

# ---- Markdown -----------------------------------------------------------------------------

MARKDOWN = src(
    """
    ---
    title: Guide
    tags: [a, b]
    ---

    # Guide

    Welcome to the guide.

    ## Install

    Run:

    ```sh
    pip install kenning
    # a comment, not a heading
    ```

    ## Usage

    | flag | meaning |
    |------|---------|
    | -v   | verbose |

    - first item
      continued
    - second item

      more of the second item
    - third item

    > a quote
    lazy continuation
    """
)


def test_markdown_blocks() -> None:
    lines = MARKDOWN.split("\n")
    blank = [not line.strip() for line in lines]
    kinds = [(b.start, b.end, b.kind) for b in _Scanner(lines, blank).blocks()]
    assert kinds == [
        (1, 4, "front_matter"),
        (6, 6, "heading"),
        (8, 8, "paragraph"),
        (10, 10, "heading"),
        (12, 12, "paragraph"),
        (14, 17, "fence"),
        (19, 19, "heading"),
        (21, 23, "table"),
        (25, 30, "list"),
        (32, 33, "quote"),
    ]


def test_markdown_setext_headings_and_math() -> None:
    text = "Title\n=====\n\n$$\na = b\n\nc = d\n$$\n\nSub\n---\ntext\n"
    lines = text.split("\n")
    blocks = _Scanner(lines, [not line.strip() for line in lines]).blocks()
    assert [(b.start, b.end, b.kind, b.level, b.title) for b in blocks] == [
        (1, 2, "heading", 1, "Title"),
        (4, 8, "math", 0, ""),
        (10, 11, "heading", 2, "Sub"),
        (12, 12, "paragraph", 0, ""),
    ]


def test_markdown_section_that_fits_is_one_chunk() -> None:
    result = chunked(MARKDOWN, "markdown")
    assert [(c.start_line, c.end_line, c.symbol, c.header) for c in result.chunks] == [
        (1, 4, None, ""),
        (6, 33, "Guide", ""),
    ]
    assert all(c.kind == "section" for c in result.chunks)
    assert result.symbols == []


def test_markdown_subsection_that_fits_stays_with_its_parent() -> None:
    result = chunked(MARKDOWN, "markdown", max_chars=120)
    assert [(c.start_line, c.end_line, c.symbol, c.header) for c in result.chunks] == [
        (1, 4, None, ""),
        (6, 17, "Guide", ""),  # "## Install" fits whole into the "# Guide" chunk
        (19, 23, "Usage", "# Guide"),  # "## Usage" does not: it starts a new chunk
        (25, 33, "Usage", "# Guide > ## Usage"),
    ]


def test_markdown_sections_start_at_headings_and_keep_blocks_whole() -> None:
    result = chunked(MARKDOWN, "markdown", max_chars=100)
    assert [(c.start_line, c.end_line, c.symbol, c.header) for c in result.chunks] == [
        (1, 4, None, ""),
        (6, 8, "Guide", ""),
        (10, 17, "Install", "# Guide"),  # the fence is never cut
        (19, 23, "Usage", "# Guide"),  # heading + table
        (25, 30, "Usage", "# Guide > ## Usage"),  # the list is never cut
        (32, 33, "Usage", "# Guide > ## Usage"),
    ]


def test_markdown_never_ends_a_chunk_on_a_heading() -> None:
    text = src(
        """
        # Title

        An introduction that takes up most of the budget.

        ## Empty section

        ## Next

        Content of the next section.
        """
    )
    result = chunked(text, "markdown", max_chars=90)
    assert [(c.start_line, c.end_line, c.symbol, c.header) for c in result.chunks] == [
        (1, 3, "Title", ""),
        (5, 9, "Next", "# Title"),  # the empty section's heading moved on with "## Next"
    ]
    for chunk in result.chunks:
        assert not chunk.text.split("\n")[-1].startswith("#"), chunk


def test_markdown_heading_keeps_its_paragraph_but_not_at_the_cost_of_a_fence() -> None:
    prose = "\n".join(f"Sentence number {i} of the paragraph." for i in range(4))
    fence = "```\n" + "\n".join(f"call_{i}()" for i in range(10, 24)) + "\n```"
    budget = 150
    assert len(prose) <= budget < len("# Intro\n\n" + prose)
    assert len(fence) <= budget < len("# Code\n\n" + fence)
    text = f"# Intro\n\n{prose}\n\n# Code\n\n{fence}\n"
    result = chunked(text, "markdown", max_chars=budget)
    # The paragraph fits alone but not after its heading: it is cut, the heading stays with it.
    assert result.chunks[0].text.startswith("# Intro\n\nSentence number 0")
    # The fence fits alone but not after its heading: it stays whole, the heading is alone
    # (and repeated in the fence chunk's header).
    code_heading, code = result.chunks[-2:]
    assert code_heading.text == "# Code"
    assert code.text == fence and code.header == "# Code"


def test_markdown_oversize_fence_is_cut_at_blank_lines_as_a_last_resort() -> None:
    code = "\n\n".join(f"step_{i}()\nmore_{i}()" for i in range(20))
    text = f"# Code\n\n```python\n{code}\n```\n"
    result = chunked(text, "markdown", max_chars=100)
    assert len(result.chunks) > 2
    assert result.chunks[0].text.startswith("# Code\n\n```python")
    for chunk in result.chunks[1:]:
        assert chunk.header == "# Code"
        # Cut only at the blank lines between statement pairs.
        assert chunk.text.split("\n")[0].startswith(("step_", "```"))


def test_markdown_oversize_list_is_cut_between_items() -> None:
    items = "\n".join(f"- item {i}\n  continued {i}" for i in range(30))
    text = f"## List\n\n{items}\n"
    result = chunked(text, "markdown", max_chars=120)
    for chunk in result.chunks[1:]:
        assert chunk.text.startswith("- item")
