"""An operator written as code in a query finds the definition that declares it as its doc alias
(Rust's `#[doc(alias = "+=")]` on `AddAssign`), as rustdoc's search does."""

from __future__ import annotations

import pytest

from kenning.engine import Engine
from kenning.search import SearchQuery, search, tuning
from kenning.search.aliases import doc_aliases, written_operators
from tests.search_helpers import indexed


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Performs the `+=` operation", {"+="}),
        ("Performs the unary `-` operation on `x`", {"-"}),
        ("`>>=` or `<<=`, and `[]`", {">>=", "<<=", "[]"}),
        ("Performs the += operation", set()),  # not written as code
        (" += ", {"+="}),  # unless it is the whole query
        ("a - b", set()),
        ("`add_assign` and `Vec<T>`", set()),  # code, but not an operator
        ("a `` b", set()),
    ],
)
def test_written_operators(query: str, expected: set[str]) -> None:
    assert written_operators(query) == expected


def test_doc_aliases() -> None:
    text = (
        '#[lang = "add_assign"]\n#[doc(alias = "+")]\n#[doc(alias = "+=")]\n'
        '#[doc(alias("[", "]", "[]"))]\n#[doc(hidden)]\n#[doc = "Adds."]\npub trait AddAssign {}\n'
    )
    assert doc_aliases(text) == {"+", "+=", "[", "]", "[]"}
    assert doc_aliases('#[rustc_on_unimplemented(label = "no `+=`")]\nfn f() {}\n') == frozenset()
    # A chunk of `#[doc(alias(` and no `)`: read once, not once from each (60 KB took 2 s, and
    # the time grew with the square).
    assert doc_aliases("#[doc(alias(" * 20_000) == frozenset()


def op_trait(name: str, method: str, aliases: list[str]) -> str:
    attrs = "".join(f'#[doc(alias = "{a}")]\n' for a in aliases)
    return (
        f'#[lang = "{method}"]\n{attrs}pub trait {name}<Rhs = Self> {{\n'
        f"    fn {method}(&mut self, rhs: Rhs);\n}}\n\n"
    )


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("aliases")
    (root / "arith.rs").write_text(
        op_trait("Add", "add", ["+"])
        + op_trait("Sub", "sub", ["-"])
        + op_trait("AddAssign", "add_assign", ["+", "+="])
        + op_trait("SubAssign", "sub_assign", ["-", "-="])
        + op_trait("MulAssign", "mul_assign", ["*", "*="])
    )
    (root / "counter.rs").write_text(
        "pub struct Counter { value: i64 }\n\nimpl Counter {\n"
        "    pub fn perform(&mut self, operation: &str) {\n"
        '        if operation == "-=" { self.value -= 1 } else { self.value += 1 }\n    }\n}\n'
    )
    yield from indexed(root)


@pytest.mark.parametrize(
    ("operator", "trait"), [("-=", "SubAssign"), ("+=", "AddAssign"), ("*=", "MulAssign")]
)
@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_an_operator_written_as_code_finds_the_trait_aliased_by_it(
    engine: Engine, operator: str, trait: str, mode: str
) -> None:
    hits = search(engine, SearchQuery(f"Performs the `{operator}` operation", limit=5, mode=mode)).hits  # type: ignore[arg-type]
    assert hits[0].symbol == trait


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_an_operator_alone_finds_the_trait_aliased_by_it(engine: Engine, mode: str) -> None:
    assert search(engine, SearchQuery("*=", limit=5, mode=mode)).hits[0].symbol == "MulAssign"  # type: ignore[arg-type]


def test_an_operator_not_written_as_code_or_a_semantic_query_adds_nothing(engine: Engine) -> None:
    plain = search(engine, SearchQuery("Performs the -= operation", limit=10, mode="lexical")).hits
    assert "SubAssign" not in [h.symbol for h in plain[:1]]
    semantic = search(engine, SearchQuery("Performs the `-=` operation", limit=10, mode="semantic")).hits
    assert all(h.dense_rank is not None for h in semantic)


@pytest.fixture(scope="module")
def documented(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    # Doc comments make the trait too long for one chunk: its alias is on the trait's chunk,
    # its method is a declaration chunk of its own.
    root = tmp_path_factory.mktemp("documented")
    docs = "".join(f"    /// Line {i} of the documentation of negation.\n" for i in range(6))
    (root / "neg.rs").write_text(
        '#[lang = "neg"]\n#[doc(alias = "-")]\npub trait Neg {\n    type Output;\n\n'
        + docs
        + "    fn neg(self) -> Self::Output;\n\n"
        + docs
        + "    fn neg_twice(self) -> Self::Output;\n}\n"
    )
    yield from indexed(root)


def test_a_split_traits_member_declarations_share_its_alias(documented: Engine) -> None:
    assert documented.db is not None
    kinds = {c.symbol: c.kind for c in documented.db.chunks_of_file(1)}
    assert kinds.get("Neg.neg") == "declaration"  # the fixture is split as intended
    query = SearchQuery("Performs the unary `-` operation", limit=10, mode="lexical")
    scores = {h.symbol: h.score for h in search(documented, query).hits}
    assert scores["Neg.neg"] >= tuning.NAME_BOOST and scores["Neg.neg_twice"] >= tuning.NAME_BOOST
