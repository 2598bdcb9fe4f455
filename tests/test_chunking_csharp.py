"""C#: definitions, symbols as OmniSharp lists them, and conditional compilation read as its
first branches."""

from __future__ import annotations

from kenning.chunking.directives import blank_inactive_branches
from kenning.chunking.grammars import GRAMMARS, parser_for
from kenning.languages import language_for_path
from tests.chunking_helpers import chunk_at, chunked, spans, src, symbols_of

# In the shape of pythonnet's runtime: a block namespace, doc comments and attributes, a
# property with accessor bodies, an event, a delegate, `#if` in the middle of a statement.
FINALIZER = src(
    """
    using System;
    using System.Collections.Concurrent;

    namespace Python.Runtime
    {
        /// <summary>Collects the objects Python released, on the thread that holds the GIL.</summary>
        [Serializable]
        public sealed class Finalizer
        {
            public const int DefaultThreshold = 200;
            private readonly ConcurrentQueue<IntPtr> _objQueue = new(), _bufferQueue = new();
            public event EventHandler<CollectArgs> BeforeCollect;
            public delegate void IncorrectRefCntHandler(object sender, IncorrectFinalizeArgs e);

            public int Threshold
            {
                get { return _threshold; }
                set { _threshold = Math.Max(value, 1); }
            }

            /// <summary>Releases every queued object, checking reference counts first.</summary>
            public void Collect()
            {
    #if FINALIZER_CHECK
                lock (_queueLock)
    #endif
                {
                    while (_objQueue.TryDequeue(out var obj))
                    {
                        Runtime.XDecref(obj);
                    }
                }
            }

    #if NETSTANDARD
            internal bool RefCountValidationEnabled { get; set; } = true;
    #else
            internal bool RefCountValidationEnabled { get; set; } = false;
    #endif

            public void ThrottledCollect()
            {
                if (++_throttled > Threshold) Collect();
            }
        }

        public interface IPyBuffer { bool IsReadOnly { get; } void Release(); }
        public record struct PendingFinalization(IntPtr PyObj, string StackTrace);
        public enum GILState { Unlocked, Locked = 1 }
    }
    """
)


def test_csharp_definitions_are_symbols_of_their_types() -> None:
    assert language_for_path("src/runtime/Finalizer.cs") == "csharp"
    result = chunked(FINALIZER, "csharp")
    assert symbols_of(result) == {
        ("Python.Runtime", "namespace", None),
        ("Finalizer", "class", None),
        ("DefaultThreshold", "constant", "Finalizer"),
        ("_objQueue", "field", "Finalizer"),
        ("_bufferQueue", "field", "Finalizer"),
        ("BeforeCollect", "event", "Finalizer"),
        ("IncorrectRefCntHandler", "type", "Finalizer"),
        ("Threshold", "property", "Finalizer"),
        ("Collect", "method", "Finalizer"),
        # Written in both branches of an `#if`: read once, from the first.
        ("RefCountValidationEnabled", "property", "Finalizer"),
        ("ThrottledCollect", "method", "Finalizer"),
        ("IPyBuffer", "interface", None),
        ("IsReadOnly", "property", "IPyBuffer"),
        ("Release", "method", "IPyBuffer"),
        ("PendingFinalization", "class", None),
        ("PyObj", "property", "PendingFinalization"),
        ("StackTrace", "property", "PendingFinalization"),
        ("GILState", "enum", None),
        ("Unlocked", "enum_member", "GILState"),
        ("Locked", "enum_member", "GILState"),
    }
    assert [s.name for s in result.symbols].count("RefCountValidationEnabled") == 1
    assert spans(result)[0] == (1, 2, "imports", None)


def test_a_directive_inside_a_statement_is_no_parse_error() -> None:
    # `lock (_queueLock)` under `#if`, its block after `#endif`: read as written, the grammar
    # errs there (in pythonnet's Finalizer.cs the error took every method after it). The
    # parser's copy reads without one; the chunks are still the file as written.
    parser = parser_for(GRAMMARS["csharp"])
    assert parser.parse(FINALIZER.encode()).root_node.has_error
    assert not parser.parse(blank_inactive_branches(FINALIZER.encode())).root_node.has_error
    collect = chunk_at(chunked(FINALIZER, "csharp", max_chars=300), 23)
    assert (collect.kind, collect.symbol) == ("method", "Finalizer.Collect")
    assert "#if FINALIZER_CHECK" in collect.text


def test_conditional_branches_after_the_first_are_blanked_offsets_kept() -> None:
    text = b"a\n#if X\nb\n  #elif Y\nc\n#else\nd\n#if Z\ne\n#endif\n#endif\nf\n"
    blanked = blank_inactive_branches(text)
    assert len(blanked) == len(text) and blanked.count(b"\n") == text.count(b"\n")
    assert [line.strip() for line in blanked.split(b"\n")] == [
        *(b"a", b"", b"b", b"", b"", b"", b"", b"", b"", b"", b"", b"f", b""),
    ]
    # Unbalanced directives, as a hostile file writes them, end nothing they did not open.
    assert blank_inactive_branches(b"#endif\n#else\nx\n") == b"      \n     \nx\n"


def test_usings_under_file_directives_are_boilerplate() -> None:
    text = src(
        """
        #pragma warning disable IDE1006
        #nullable enable
        using System;
        using System.IO;

        namespace Acme;

        public static class Paths
        {
            public static string Home() => Environment.GetEnvironmentVariable("HOME");
        }
        """
    )
    assert spans(chunked(text, "csharp"))[0] == (1, 6, "imports", None)


def test_a_local_function_is_a_symbol_of_its_method() -> None:
    text = src(
        """
        static class PyObjectConversions
        {
            static Converter GetDecoder(Type targetType)
            {
                bool TryDecode(BorrowedReference pyHandle, out object? result)
                {
                    result = null;
                    return false;
                }
                return TryDecode;
            }
        }
        """
    )
    result = chunked(text, "csharp")
    assert ("TryDecode", "function", "PyObjectConversions.GetDecoder") in symbols_of(result)


def test_operators_conversions_finalizers_and_indexers_are_methods_named_as_roslyn_names_them() -> None:
    # In the shape of pythonnet's BorrowedReference.cs and ListWrapper.cs: each was part of a
    # window named after its type, found by no symbol search.
    text = src(
        """
        readonly ref struct BorrowedReference
        {
            public static bool operator ==(BorrowedReference a, BorrowedReference b)
                => a.pointer == b.pointer;
            public static bool operator!=(BorrowedReference a, BorrowedReference b) => !(a == b);
            public static implicit operator BorrowedReference(PyObject pyObject) => pyObject.Reference;
            public static explicit   operator
                IntPtr(BorrowedReference reference) => reference.pointer;
            public T this[int index, string key] { get { return Get(index); } }
            ~BorrowedReference() { Release(); }
        }
        """
    )
    result = chunked(text, "csharp")
    assert symbols_of(result) == {
        ("BorrowedReference", "struct", None),
        ("operator ==", "method", "BorrowedReference"),
        ("operator!=", "method", "BorrowedReference"),
        ("implicit operator BorrowedReference", "method", "BorrowedReference"),
        ("explicit operator IntPtr", "method", "BorrowedReference"),
        ("this[]", "method", "BorrowedReference"),
        ("~BorrowedReference", "method", "BorrowedReference"),
    }
    # The editor's selection starts at the name's first token.
    lines = text.split("\n")
    for symbol in result.symbols[1:]:
        first = symbol.name.split(" ")[0].split("[")[0]
        assert lines[symbol.name_line - 1][symbol.name_col :].startswith(first), symbol
    # A type too big to keep whole: each is a chunk of its own, named after its type.
    assert chunk_at(chunked(text, "csharp", max_chars=300), 3).symbol == "BorrowedReference.operator =="
