"""Shell scripts: read with tree-sitter-bash, their functions symbols and chunks (with the
comment above them), their UPPER_CASE settings constants; fish is not Bourne shell."""

from __future__ import annotations

from kenning.languages import language_for_path
from tests.chunking_helpers import chunk_at, chunked, src, symbols_of

# In the shape of Debian's and git's shell scripts.
SCRIPT = src(
    """
    #!/bin/sh
    # Compresses executables in place.
    set -e

    readonly TMPDIR="${TMPDIR:-/tmp}"
    VERSION=1.12
    verbose=0

    # Prints the usage and exits with the given status.
    usage() {
      echo "usage: $0 [-d] file..."
      exit "$1"
    }

    function compress_file {
      local file=$1
      gzip -9 -c "$file" > "$TMPDIR/$file.gz"
    }

    cleanup() { rm -f "$TMPDIR"/*.gz; }

    for f in "$@"; do
      compress_file "$f"
    done
    """
)


def test_shell_functions_and_settings_are_symbols() -> None:
    assert language_for_path("scripts/build.sh") == "shell"
    assert language_for_path(".bashrc") == "shell"
    assert language_for_path("conf.d/env.fish") == "fish"
    result = chunked(SCRIPT, "shell")
    assert symbols_of(result) == {
        ("TMPDIR", "constant", None),
        ("VERSION", "constant", None),
        ("usage", "function", None),
        ("compress_file", "function", None),
        ("cleanup", "function", None),
    }
    usage = chunk_at(result, 10)
    assert (usage.kind, usage.symbol) == ("function", "usage")
    assert usage.text.startswith("# Prints the usage")
    assert (chunk_at(result, 16).kind, chunk_at(result, 16).symbol) == ("function", "compress_file")
