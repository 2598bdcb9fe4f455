"""A query's doc markup (`{@link X}`, Markdown link addresses, rustdoc's `[`X`]`) is read as the
words it shows."""

from __future__ import annotations

import pytest

from kenning.engine import Engine
from kenning.search import SearchQuery, search
from kenning.search.fusion import spans_written
from kenning.search.markup import code_spans, linked_names, reader_text, written_names
from kenning.search.signatures import signature_words
from kenning.store.rows import ChunkRow
from tests.search_helpers import indexed


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "Converts an Observable of {@link ObservableNotification} objects",
            "Converts an Observable of ObservableNotification objects",
        ),
        ("Adds it, see {@link List#add(Object) add}", "Adds it, see add"),
        ("see {@link List#add(Object)}", "see List.add"),
        ("see {@link #size}", "see size"),
        ("A {@linkcode Subscriber|subscriber} of it", "A subscriber of it"),
        ("{@linkplain   Foo  }", "Foo"),
        ("Returns {@code true} if {@literal a<b}", "Returns true if a<b"),
        ("{@inheritDoc} Closes it", " Closes it"),
        (
            "Performs an HTTP PUT using the [XMLHttpRequest](https://developer.mozilla.org/en-US/docs/Web/API)",
            "Performs an HTTP PUT using the XMLHttpRequest",
        ),
        ("see [the guide](./guide.md#setup) and [top](#top)", "see the guide and top"),
        (
            "Copies the string into a newly allocated <code>[Arc]&lt;[OsStr]&gt;</code>",
            "Copies the string into a newly allocated `Arc<OsStr>`",
        ),
        (
            "Extends it with <code>&[OsStr]</code> or <code>[io::Error]</code>",
            "Extends it with `&OsStr` or `io::Error`",
        ),
        ("a <code>Box<[u8]> &amp;&amp; b</code>", "a `Box<[u8]> && b`"),
        ('unescapes entities like "&lt;" to become "<"', 'unescapes entities like "&lt;" to become "<"'),
        # rustdoc's intra-doc links read as the name they show, in backticks when written so.
        ("Returns the [`Vec`] as a [`Box`]", "Returns the `Vec` as a `Box`"),
        ("if the poll is a [Pending] value", "if the poll is a Pending value"),
        ("passed to [`Once::call_once_force()`]", "passed to `Once::call_once_force()`"),
        ("Moves it into a [`Vec`][vec] or [Box][boxed]", "Moves it into a `Vec` or Box"),
        # Code stays as written: a call, an index, brackets in a code span, a name typed as a query.
        ("handlers[0](event) and handlers[i](e)", "handlers[0](event) and handlers[i](e)"),
        ("reads a[i][j] and b[idx]", "reads a[i][j] and b[idx]"),
        ("Creates a `&mut UserRef<[T]>` from [`Box`]", "Creates a `&mut UserRef<[T]>` from `Box`"),
        ("[T] as_mut", "[T] as_mut"),
        ("[Symbol_observable]", "[Symbol_observable]"),
        ("Map<K, V> { key }", "Map<K, V> { key }"),
        ("`parse` the {@ header", "`parse` the {@ header"),
    ],
)
def test_reader_text(query: str, expected: str) -> None:
    assert reader_text(query) == expected


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("markup")
    (root / "dematerialize.ts").write_text(
        "export function dematerialize<N extends ObservableNotification<any>>(): OperatorFunction<N, any> {\n"
        "  return operate((source, subscriber) => {\n"
        "    source.subscribe(\n"
        "      createOperatorSubscriber(subscriber, (n) => observeNotification(n, subscriber)),\n"
        "    );\n"
        "  });\n}\n"
    )
    (root / "links.ts").write_text(
        "export function linkTo(anchor: HTMLAnchorElement, href: string): void {\n"
        "  // See https://developer.mozilla.org/en-US/docs/Web/HTML/Element/a for the link element.\n"
        "  anchor.href = href;\n}\n"
    )
    yield from indexed(root)


def paths(engine: Engine, text: str, mode: str) -> list[str]:
    return [hit.path for hit in search(engine, SearchQuery(text, limit=5, mode=mode)).hits]  # type: ignore[arg-type]


def test_the_definitions_a_querys_doc_links_point_at() -> None:
    assert linked_names("Removes a finalizer added with the {@link #add} method") == {("add",)}
    assert linked_names("Equivalent to {@link List#add(Object) add}") == {("List", "add")}
    assert linked_names("Creates an {@link Observable} and a {@linkcode Subject|subject}") == {
        ("Observable",),
        ("Subject",),
    }
    assert linked_names("Emits the value of {@code x} {@inheritDoc}") == frozenset()
    assert linked_names("Performs an HTTP PUT using [XMLHttpRequest](https://example.org/xhr)") == frozenset()


def test_a_link_tag_is_not_a_query_word(engine: Engine) -> None:
    assert paths(engine, "link", "lexical") == ["links.ts"]  # "link" alone finds the comment
    assert paths(engine, "{@link ObservableNotification}", "lexical") == ["dematerialize.ts"]
    assert paths(engine, "the {@link ObservableNotification} link", "lexical")[0] == "links.ts"


def test_a_markdown_links_address_is_not_a_query_word(engine: Engine) -> None:
    assert paths(engine, "mozilla", "lexical") == ["links.ts"]
    query = "Notification [ObservableNotification](https://developer.mozilla.org/en-US/docs/Web)"
    assert paths(engine, query, "lexical") == ["dematerialize.ts"]


def test_both_halves_read_the_markup_as_its_words(engine: Engine) -> None:
    marked = "Converts an Observable of {@link ObservableNotification} objects into emissions"
    plain = "Converts an Observable of ObservableNotification objects into emissions"
    hits = search(engine, SearchQuery(marked, limit=5)).hits
    assert [(h.path, h.score) for h in hits] == [
        (h.path, h.score) for h in search(engine, SearchQuery(plain, limit=5)).hits
    ]
    assert hits[0].path == "dematerialize.ts"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Converts a `&str` into a `Box<str>`", ["Box<str>"]),
        ("Converts to `Box<[T], A>` or `Pin< Rc<T> >`", ["Box<[T],A>", "Pin<Rc<T>>"]),
        ("Listens with `process.on('error')`", ["process.on('error')"]),
        # One name, or a path, is the halves' to find; an operator is search.aliases'.
        ('The `Rc`, `"json"`, `connect()`, `std::mem::swap` and `+=`', []),
        ("no code here <T>", []),
    ],
)
def test_code_spans(query: str, expected: list[str]) -> None:
    assert code_spans(query) == expected


def test_spans_written() -> None:
    text = "impl From<&str> for Box<str> {\n    fn from(s: &str) -> Box< str > {"
    assert spans_written(["Box<str>"], text) == 1.0
    assert spans_written(["Box<str>", "Box<[u8]>"], text) == 0.5
    assert spans_written(["Rc<str>"], text) == 0.0


CONVERSIONS = [
    ("&str", "Box<str>"),
    ("&str", "Rc<str>"),
    ("String", "Box<str>"),
    ("Box<str>", "Box<[u8]>"),
    ("&[T]", "Box<[T]>"),
    ("Vec<T>", "Box<[T]>"),
    ("[T; N]", "Box<[T]>"),
    ("T", "Box<T>"),
    ("Box<T>", "Rc<T>"),
    ("Vec<T>", "Rc<[T]>"),
]


@pytest.fixture(scope="module")
def conversions(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("conversions")
    (root / "boxed.rs").write_text(
        "".join(
            f"impl<T> From<{source}> for {target} {{\n"
            f"    fn from(value: {source}) -> {target} {{\n        convert(value)\n    }}\n}}\n\n"
            for source, target in CONVERSIONS
        )
    )
    yield from indexed(root)


@pytest.mark.parametrize(
    ("conversion", "mode"),
    [
        # BM25 alone ranks `From<T> for Box<[T]>`-like siblings first for these two: every
        # impl holds the words `box`, `t` and `rc`; only the written type tells them apart.
        (("T", "Box<T>"), "lexical"),
        (("Box<T>", "Rc<T>"), "lexical"),
        (("&str", "Box<str>"), "hybrid"),
        (("&[T]", "Box<[T]>"), "hybrid"),
        (("Box<str>", "Box<[u8]>"), "hybrid"),
    ],
)
def test_code_the_query_writes_finds_the_chunk_that_writes_it(
    conversions: Engine, conversion: tuple[str, str], mode: str
) -> None:
    source, target = conversion
    query = SearchQuery(f"Converts a `{source}` into a `{target}`", limit=4, mode=mode)  # type: ignore[arg-type]
    hits = search(conversions, query).hits
    assert hits[0].start_line == 1 + 6 * CONVERSIONS.index(conversion)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Converts a [`String`] into an [`OsString`]", {"String", "OsString"}),
        ("Gets the `TypeId` of `self`, or of `self`", {"TypeId", "self"}),
        # One name is any code about it; a span relating names is a code span; a path is not a name.
        ("Returns the length of this `OsStr`", set()),
        ("Converts a `&str` into a `Box<str>`", set()),
        ("Calls `std::mem::swap` on `a`", set()),
    ],
)
def test_written_names(query: str, expected: set[str]) -> None:
    assert written_names(query) == expected


def test_signature_words_are_the_first_line_of_code_and_the_enclosing_signatures() -> None:
    row = ChunkRow(
        1,
        1,
        "os_str.rs",
        "rust",
        10,
        14,
        "method",
        "OsString.from",
        "os string from\nimpl From<String> for OsString",
        "#[inline]\n// Moves it.\nfn from(s: String) -> OsString {\n"
        "    OsString { inner: Buf::from_string(s) }\n}",
    )
    assert signature_words(row) == {"fn", "from", "s", "String", "OsString", "impl", "From", "for"}


# Six methods of one shape: only the signature of `get_or_insert_with` relates `value` and `f`.
SET_METHODS = [
    ("get_or_insert", "value: T", "&T"),
    ("get_or_insert_owned", "value: &Q", "&T"),
    ("get_or_insert_with", "value: &Q, f: F", "&T"),
    ("insert", "value: T", "bool"),
    ("replace", "value: T", "Option<T>"),
    ("take", "value: &Q", "Option<T>"),
]


@pytest.fixture(scope="module")
def hash_set(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("hash_set")
    body = "".join(f"        let step{i} = self.table.probe({i});\n" for i in range(12))
    (root / "set.rs").write_text(
        "impl<T, S> HashSet<T, S> {\n"
        + "\n".join(
            f"    pub fn {name}(&mut self, {args}) -> {result} {{\n"
            f"{body}        self.base.{name}(value)\n    }}\n"
            for name, args, result in SET_METHODS
        )
        + "}\n"
    )
    yield from indexed(root)


def test_names_the_query_writes_find_the_signature_that_relates_them(hash_set: Engine) -> None:
    # Without the signature's names `insert` ranks first: the model and BM25 read "inserts".
    sentence = (
        "Inserts a value computed from `f` into the set if the given `value` is not present,"
        " returning a reference to the value in the set"
    )
    hits = search(hash_set, SearchQuery(sentence, limit=6)).hits
    assert hits[0].symbol == "HashSet.get_or_insert_with"
    # One name alone is any code about it: the ranking is the halves'.
    one = search(hash_set, SearchQuery("Inserts the given `value` into the set", limit=6)).hits
    assert [h.symbol for h in one] == [
        h.symbol for h in search(hash_set, SearchQuery("Inserts the given value into the set", limit=6)).hits
    ]
