"""``blank_macros``: the C/C++ macro invocations tree-sitter misreads become spaces, every offset
kept; code that only looks like a macro (a return type on its own line, a GNU-style definition's
name line, an enumerator) stays."""

from __future__ import annotations

import pytest

from kenning.chunking.macros import blank_macros


def blanked(text: str) -> str:
    out = blank_macros(text.encode()).decode()
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    return out


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("void attribute_hidden\n__foo (void)\n{\n}\n", "attribute_hidden"),
        ("extern int f (int) __THROW __wur;\n", "__THROW"),
        ("class JUCE_API  Button  : public Component\n{\n};\n", "JUCE_API"),
        ("}\nweak_alias (__strlen, strlen)\nlibc_hidden_def (strlen)\n\nint x;\n", "weak_alias"),
        ("}\nweak_alias (__strlen, strlen)\nlibc_hidden_def (strlen)\n\nint x;\n", "libc_hidden_def"),
        ("    int x;\n\n    JUCE_DECLARE_NON_COPYABLE (Foo)\n};\n", "JUCE_DECLARE_NON_COPYABLE"),
        ("    int x;\r\n    JUCE_LEAK_DETECTOR (Foo)\r\n};\r\n", "JUCE_LEAK_DETECTOR"),
        ("{\n    JUCE_ASSERT_MESSAGE_THREAD\n    go();\n}\n", "JUCE_ASSERT_MESSAGE_THREAD"),
        ("#include <a.h>\n__libc_tsd_define (, const uint16_t *, CTYPE_B)\n", "__libc_tsd_define"),
    ],
)
def test_blanked(text: str, gone: str) -> None:
    assert gone not in blanked(text)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("#include <m.h>\n\nFLOAT\nM_DECL_FUNC (__cabs) (CFLOAT z)\n{\n}\n", "FLOAT"),
        ("}\n\nElfW(Addr)\n_dl_make_fptr (struct link_map *map)\n{\n}\n", "ElfW(Addr)"),
        ("char *\nSTRCHR (const char *s, int c)\n{\n}\n", "STRCHR (const char *s, int c)"),
        (";\nSTRCHR (const char *s, int c)\n{\n}\n", "STRCHR (const char *s, int c)"),
        ("enum Kind\n{\n    FIRST,\n    SECOND\n};\n", "FIRST,"),
        ("    x = a +\n        LIMIT;\n", "LIMIT"),
        ("#define X(a) \\\n  FOO (a)\n", "FOO (a)"),
        ("    if (x)\n    {\n        go();\n    }\n", "go();"),
    ],
)
def test_kept(text: str, kept: str) -> None:
    assert kept in blanked(text)
