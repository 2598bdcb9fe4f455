"""Language detection from paths, and the language table's consistency."""

from __future__ import annotations

import pytest

from kenning.languages import LANGUAGES, is_known_language, known_languages, language_for_path

STRUCTURED = ("python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp")


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a.py", "python"),
        ("pkg/mod/stubs.pyi", "python"),
        ("web/app.js", "javascript"),
        ("web/app.mjs", "javascript"),
        ("web/App.jsx", "javascript"),
        ("src/index.ts", "typescript"),
        ("src/types.d.ts", "typescript"),
        ("src/App.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("src/Main.java", "java"),
        ("src/x.c", "c"),
        ("include/x.h", "c"),
        ("src/x.cpp", "cpp"),
        ("src/x.cc", "cpp"),
        ("include/x.hpp", "cpp"),
        ("src/legacy.C", "cpp"),  # upper-case .C is C++ on case-sensitive systems
        ("README.md", "markdown"),
        ("docs/README.MD", "markdown"),  # case-insensitive fallback
        ("docs/guide.markdown", "markdown"),
        ("Makefile", "makefile"),
        ("sub/dir/Dockerfile", "dockerfile"),
        ("CMakeLists.txt", "cmake"),  # file name wins over the extension
        ("notes.txt", "text"),
        ("Gemfile", "ruby"),
        ("lib/a.rb", "ruby"),
        ("scripts/build.sh", "shell"),
        ("pyproject.toml", "toml"),
        (".github/workflows/ci.yml", "yaml"),
        ("package.json", "json"),
        ("schema.sql", "sql"),
        ("docs/index.rst", "rst"),
    ],
)
def test_language_for_path(path: str, language: str) -> None:
    assert language_for_path(path) == language


@pytest.mark.parametrize("path", ["LICENSE", "a.unknownext", ".gitignore", "dir.with.dots/noext", "x.", ""])
def test_unknown_paths_are_text(path: str) -> None:
    assert language_for_path(path) == "text"


def test_directories_with_dots_do_not_leak_an_extension() -> None:
    assert language_for_path("pkg.py/README") == "text"


def test_table_is_consistent() -> None:
    names = [info.name for info in known_languages()]
    assert names == sorted(names)
    assert set(names) == set(LANGUAGES)
    for info in known_languages():
        assert LANGUAGES[info.name] is info
        assert all(ext.startswith(".") for ext in info.extensions)
        assert info.parser in ("tree-sitter", "markdown", "text")
    for name in STRUCTURED:
        assert LANGUAGES[name].parser == "tree-sitter"
    assert LANGUAGES["markdown"].parser == "markdown"
    assert LANGUAGES["text"].parser == "text"


def test_every_extension_maps_back_to_its_language() -> None:
    for info in known_languages():
        for ext in info.extensions:
            assert language_for_path(f"dir/file{ext}") == info.name, ext
        for filename in info.filenames:
            assert language_for_path(f"dir/{filename}") == info.name, filename


def test_is_known_language() -> None:
    assert is_known_language("python")
    assert is_known_language("text")
    assert not is_known_language("Python")
    assert not is_known_language("klingon")
    assert not is_known_language("")


def test_language_info_is_frozen() -> None:
    info = LANGUAGES["python"]
    with pytest.raises(AttributeError):
        info.name = "snake"  # type: ignore[misc]
