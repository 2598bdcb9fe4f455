"""Fusing the two halves: weighted reciprocal rank fusion plus a boost for query words that
name the chunk's definition (or an operator the query writes that the chunk declares as its
alias, ``search.aliases``) and one for code the query writes that the chunk holds
(`Box<[T], A>`); for a sentence, a trait's or interface's member declaration (or an abstract
class's) directly above its best-ranked implementation; then hits, without duplicate texts,
overlapping spans or a second piece of one function cut into pieces (a piece of the doc comment
above a function is answered by the function itself).
"""

from __future__ import annotations

import functools
import logging
import math
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence

from kenning.chunking.header import listed_members
from kenning.chunking.model import (
    CALLABLE_KINDS,
    CONSTRUCTOR_KIND,
    DECLARATION_KIND,
    SIGNATURE_KINDS,
    STRETCH_KINDS,
    TYPE_KINDS,
)
from kenning.engine import Engine
from kenning.lexical import (
    FUNCTION_WORDS,
    identifier_like,
    name_parts,
    name_words,
    query_terms,
    with_compound_parts,
)
from kenning.search import tuning
from kenning.search.bm25 import rare_terms
from kenning.search.markup import code_spans, linked_names, written_names
from kenning.search.preview import preview
from kenning.search.sentences import (
    asks_whether,
    conversion_in_names,
    conversion_sides,
    converts_as_said,
    name_converts_as_said,
    other_names,
    owners_said,
    parameters_named,
)
from kenning.search.signatures import (
    answers_yes_or_no,
    documents,
    enclosing_signatures,
    parameter_names,
    signature_words,
)
from kenning.search.types import Hit, SearchQuery
from kenning.store.rows import ChunkRow
from kenning.workspace import stored_path_is_plain

log = logging.getLogger("kenning.search")


def spans_written(spans: Sequence[str], text: str) -> float:
    """The share of ``spans`` (written without spaces, ``markup.code_spans``) that ``text``
    holds, its spaces ignored."""
    flat = "".join(text.split())
    return sum(1 for span in spans if span in flat) / len(spans)


def is_boilerplate(row: ChunkRow) -> bool:
    return row.kind in tuning.BOILERPLATE_KINDS


def spelled(part: str, terms: set[str]) -> bool:
    if part in terms:
        return True
    return len(part) >= tuning.NAME_PREFIX_MIN and any(term.startswith(part) for term in terms)


@functools.lru_cache(maxsize=65_536)
def leaf_parts(symbol: str) -> frozenset[str]:
    """The words of a dotted name's last part: ``next``, ``back`` for ``iter.Filter.next_back``."""
    return frozenset(name_words(symbol.rsplit(".", 1)[-1]))


def leaf_of(row: ChunkRow) -> str:
    """The last part of the chunk's dotted name (``eval`` of ``CapacitorBridge.eval``)."""
    return (row.symbol or "").rsplit(".", 1)[-1]


def leaf_words(symbol: str) -> str:
    """A dotted name's last part in words, as a header lists members: ``as bytes`` (its
    compounds whole, as ``chunking.header`` writes them: ``getpid``)."""
    return " ".join(name_parts(symbol.rsplit(".", 1)[-1]))


def owned_by(row: ChunkRow, owners: frozenset[str]) -> bool:
    """Whether the chunk is a method (or a member declaration) of a type named one of ``owners``
    as written: ``RwLock.into_inner`` and ``juce.OSCMessage.size`` are their owners'."""
    if not row.symbol or row.kind not in SIGNATURE_KINDS:
        return False
    parts = row.symbol.rsplit(".", 2)
    return len(parts) > 1 and parts[-2] in owners


def owner_parts(symbol: str) -> frozenset[str]:
    """The words of a definition's owner's name: ``filter`` for ``iter.Filter.next_back``."""
    owner = symbol.rpartition(".")[0]
    return leaf_parts(owner) if owner else frozenset()


def name_boost(
    terms: set[str],
    symbol: str | None,
    owner_terms: set[str] | None = None,
    *,
    named: bool = False,
    creating: bool = False,
) -> float:
    """Query words that spell the definition's name; ``owner_terms`` (default ``terms``): the
    words that may name its owner; ``named``: the query is names, not a sentence (the owner's
    words count as spelled); ``creating``: the definition is a constructor and the sentence
    says it makes something (``CREATION_WORDS``). Naming the owner earns ``OWNER_BOOST`` in
    either case, not otherwise."""
    if not symbol or not terms:
        return 0.0
    owner = symbol.rpartition(".")[0]
    parts = leaf_parts(symbol)
    if not parts:
        return 0.0
    spelt_parts = {part for part in parts if spelled(part, terms)}
    common = len(spelt_parts)
    # A sentence's "to" does not name `send_to`: a name with a word of its own is spelled by it.
    own_words = parts - FUNCTION_WORDS
    if own_words and not own_words & spelt_parts:
        return 0.0
    # Half the name at least: "marker" alone must not lift `bom_marker_fn` over the chunk that
    # holds the exact identifier the user typed.
    if common * 2 < len(parts):
        return 0.0
    # A name the query spells more fully (more of its parts, a larger share of the query) wins
    # over its siblings: `new_uninit_in` over `new_in` for "new box, uninitialized, in …".
    owned = False
    spelt = common
    if owner and tuning.OWNER_BOOST and (named or creating):
        # `Filter next_back`: the owner's name tells same-named methods of sibling types apart.
        # A sentence names an owner only when it says it makes one ("Creates a new `Money`
        # instance": the constructor's class); a type it names otherwise is as often what a
        # method takes or returns, and "Creates an empty `HashSet`" lifted `HashSet.is_empty`
        # over the `impl` holding `HashSet.new` (docs/performance.md, session 27).
        owners = owner_parts(symbol)
        owned = bool(owners) and owners <= (terms if owner_terms is None else owner_terms)
        if owned and named:
            # The owner's words are spelled too, so `Rc.new` spells all of "Rc new" and
            # outranks `Rc.new_uninit` by more.
            spelt += len(owners & terms - parts)
    spelt_share = (min(spelt, len(terms)) / len(terms)) ** tuning.NAME_TERMS_POWER
    boost: float = tuning.NAME_BOOST * (common / len(parts)) * spelt_share
    if owned:
        boost += tuning.OWNER_BOOST
    return boost


# A name whose punctuation is part of it: a C++ destructor (`~Buffer`) or operator (`operator<`,
# `operator->`), written without spaces. Its words are its class's or any operator's.
_PUNCTUATED = re.compile(r"~[A-Za-z_]\w*|operator[^\w\s]+")


def punctuated_names(text: str) -> frozenset[str]:
    """The destructors and operators a query writes (``~Buffer``, ``IPAddress::operator<``)."""
    names = (word.strip("`").rsplit("::", 1)[-1] for word in text.split())
    return frozenset(name for name in names if _PUNCTUATED.fullmatch(name))


def punctuation_fits(row: ChunkRow, written: frozenset[str]) -> bool:
    """Whether a query that writes the destructors and operators ``written`` may name the
    row's definition by its words: a destructor or operator only when it is one written, and
    another definition by the same words only when its text holds one written (`~Buffer` does
    not name the constructor `Buffer`, `operator<` not `operator>`; the class declaring
    `~Buffer` it does). A destructor is named only by writing it: its words are its class's,
    and "Buffer" means the class or its constructor."""
    if not row.symbol:
        return True
    leaf = "".join(row.symbol.rsplit(".", 1)[-1].split())
    if _PUNCTUATED.fullmatch(leaf):
        return leaf in written or (not written and not leaf.startswith("~"))
    if not written:
        return True
    alike = [name for name in written if name_words(name) == name_words(leaf)]
    if not alike:
        return True
    text = "".join(row.text.split())
    return any(name in text for name in alike)


def typed_names(text: str) -> tuple[str, ...]:
    """The names a short query types, in order, as code spells them: each word without its
    backticks or a call's ``()``, split at ``::`` and ``.`` (``Vec::push`` → ``Vec``, ``push``)."""
    names: list[str] = []
    for word in text.split():
        word = word.strip("`")
        if word.endswith("()") and word != "operator()":
            word = word[:-2]
        names.extend(part for part in re.split(r"::|\.", word) if part)
    return tuple(names)


def names_exactly(symbol: str | None, typed: tuple[str, ...]) -> bool:
    """Whether the definition's dotted name ends with the names ``typed``, exactly as typed
    (``AddrPort.Addr`` for "AddrPort Addr", not the type `Addr`; `_url` for "_url", not `url`)."""
    if not symbol or not typed:
        return False
    return tuple(symbol.split(".")[-len(typed) :]) == typed


def exact_definitions(
    engine: Engine, conn: sqlite3.Connection, rows: Iterable[ChunkRow], typed: tuple[str, ...]
) -> set[int]:
    """The ids of ``rows`` that define a name typed exactly (``names_exactly``); of a definition
    cut into pieces (a long doc comment above it, in documented code), only the piece that holds
    its name line: "pairwise" means `function pairwise`, not the top of its 40-line comment. A
    window of one-liners counts when it holds the name line of a definition so named: Go's
    go/ast keeps twenty `func (s *SelectStmt) Pos() token.Pos { return s.Select }` in one
    window, and "SelectStmt Pos" means that line, not the `SelectStmt` struct."""
    named: list[ChunkRow] = []
    windows: list[ChunkRow] = []
    for row in rows:
        if names_exactly(row.symbol, typed):
            named.append(row)
        elif row.kind in STRETCH_KINDS:
            windows.append(row)
    if not named and not windows:
        return set()
    assert engine.db is not None
    defined = engine.db.name_lines({row.file_id for row in (*named, *windows)}, typed[-1], conn)
    pieces: dict[tuple[int, str | None], list[ChunkRow]] = {}
    for row in named:
        pieces.setdefault((row.file_id, row.symbol), []).append(row)
    found: set[int] = set()
    for (file_id, _), parts in pieces.items():
        lines = [line for line, _ in defined.get(file_id, ())]
        holding = [p for p in parts if any(p.start_line <= n <= p.end_line for n in lines)]
        found.update(p.id for p in holding or parts)
    for row in windows:
        for line, container in defined.get(row.file_id, ()):
            qualified = f"{container}.{typed[-1]}" if container else typed[-1]
            if row.start_line <= line <= row.end_line and names_exactly(qualified, typed):
                found.add(row.id)
                break
    return found


def piece_of(row: ChunkRow, definitions: Sequence[tuple[str, int, int, int]]) -> tuple[int, int] | None:
    """The span of the definition ``row`` is a piece of, when it holds nothing else: of the
    definitions named as ``row`` is, the one whose lines it overlaps most (the shortest of
    those: a Java constructor's pieces lie in its class, named as it is), and None when no
    definition is so named or another definition's name line lies in ``row`` (a piece of a
    class body or of a function with nested ones stands for those, too). A piece that overlaps
    none is a doc comment longer than a chunk, cut above its definition (RxJS documents an
    operator in 40 lines): it is the nearest so named below it, nothing defined between."""
    leaf = leaf_of(row)
    best, most = None, (0, 0)
    for name, start, end, _ in definitions:
        overlap = (min(end, row.end_line) - max(start, row.start_line) + 1, start - end)
        if name == leaf and overlap[0] > 0 and overlap > most:
            best, most = (start, end), overlap
    if best is None:
        below = [(start, end) for name, start, end, _ in definitions if name == leaf and start > row.end_line]
        if not below:
            return None
        best = min(below)
        if any(row.end_line < line < best[0] for _, _, _, line in definitions):
            return None
    for _, start, end, line in definitions:
        if row.start_line <= line <= row.end_line and (start, end) != best:
            return None
    return best


# Languages whose declared functions (prototypes in a header) are defined elsewhere: there the
# definition is what a name means. Elsewhere a method without a body (Java's `native` and
# `abstract` ones) is all there is of it, and a name finds it among its class's declarations.
# bench.multilang identifier MRR@10: Java 0.919 -> 0.930 (3 queries up, none down); counting
# C++'s too cost it 0.866 -> 0.833 (12 down).
DEFINED_ELSEWHERE = frozenset({"c", "cpp", "objective-c"})  # an `@interface`'s, in the `.m`


def members(row: ChunkRow) -> list[str]:
    """The names a definition kept whole lists after its own on its header's first line
    (``filter: next back, try rfold``, see ``chunking.header``), in words."""
    return listed_members(row.symbol, row.header)


def owner_words(rows: Iterable[ChunkRow], terms: set[str], *, inside: bool) -> set[str]:
    """The ``terms`` that spell the whole owner of a row's definition (with ``inside``, of a
    member of a definition kept whole too), as ``chunk_boost`` would look for them."""
    words: set[str] = set()
    for row in rows:
        if not row.symbol:
            continue
        owners = [owner_parts(row.symbol)]
        if inside and members(row):
            owners.append(leaf_parts(row.symbol))  # the owner of its members
        for parts in owners:
            if parts and parts <= terms:
                words |= parts
    return words


# Words with which a sentence says it means a constructor ("Creates the caret component",
# "Constructs a parameter instance"): there the class's name is the owner's too.
CREATION_WORDS = frozenset(
    {"constructs", "construct", "constructor", "creates", "create", "instance", "new"}
    | {"initializes", "initialises", "initialize", "initialise"}
)


# Words with which a sentence says it means a type itself ("where is the uint128 struct
# defined"), not one of its members.
TYPE_WORDS = frozenset(
    {"type", "types", "struct", "structs", "structure", "class", "classes", "enum", "interface", "trait"}
    | {"union", "record", "defined", "definition", "declared", "declaration"}
)


def sentence_names(row: ChunkRow, terms: set[str]) -> bool:
    """Whether a sentence with the words ``terms`` that spells the row's name means the row's
    definition. Not a stretch of a namespace named after the class of its one-liners
    (``STRETCH_KINDS``); a type's own chunk only when the sentence says it means a type
    (``TYPE_WORDS``) or the chunk lists the members it holds: "returns the two uint64 of the
    uint128" is about a method of `uint128`, which the owner boost finds, not the `struct
    uint128` it names. Likewise a constructor named after its class (Java's and C++'s
    `BigDecimal.BigDecimal`) only when the sentence says it makes one (``CREATION_WORDS``):
    "Converts this BigDecimal to an int" means `intValue`."""
    if row.kind in STRETCH_KINDS:
        return False
    if row.kind == CONSTRUCTOR_KIND and row.symbol and not makes_one(row, terms):
        owner, _, leaf = row.symbol.rpartition(".")
        if leaf == owner.rsplit(".", 1)[-1]:
            return False
    if row.kind in TYPE_KINDS and row.symbol and not terms & TYPE_WORDS:
        return bool(members(row) or listed_members(row.symbol, row.header, declared=True))
    return True


def is_constructor(row: ChunkRow) -> bool:
    """Whether the row defines a constructor: the chunker's kind, or Python's ``__init__`` (a
    method to the chunker)."""
    return row.kind == CONSTRUCTOR_KIND or (row.symbol or "").endswith(".__init__")


def makes_one(row: ChunkRow, terms: set[str]) -> bool:
    """Whether the row defines a constructor and a sentence with the words ``terms`` says it
    makes something (``CREATION_WORDS``)."""
    return is_constructor(row) and not terms.isdisjoint(CREATION_WORDS)


def named_after_class(symbol: str | None) -> str | None:
    """A JavaScript or TypeScript constructor's name (or Python's ``__init__``) read as Java's
    and C++'s are written, after its class (``FieldApi.constructor`` → ``FieldApi.FieldApi``):
    a sentence that says it makes a `FieldApi` ("Initializes a new `FieldApi` instance") then
    spells it as it spells theirs."""
    if symbol is None:
        return None
    owner, _, leaf = symbol.rpartition(".")
    if leaf not in ("constructor", "__init__") or not owner:
        return symbol
    return f"{owner}.{owner.rsplit('.', 1)[-1]}"


def chunk_boost(
    terms: set[str],
    row: ChunkRow,
    owner_terms: set[str] | None = None,
    *,
    inside: bool = True,
    written: frozenset[str] = frozenset(),
) -> float:
    """The name boost of the chunk's definition, or with ``inside`` (a query short enough to be
    names) of a definition inside it when that is spelled better: "Filter next_back" finds
    `impl Filter` kept whole with `next_back` in it, and a Java class window the `native`
    method it declares (``DEFINED_ELSEWHERE``). A sentence lifts only a definition it can
    mean by its name (``sentence_names``), or by a member it lists (below). ``written``: the
    destructors and operators the query writes (``punctuation_fits``)."""
    own = punctuation_fits(row, written) if inside else sentence_names(row, terms)
    creating = makes_one(row, terms)
    symbol = named_after_class(row.symbol) if creating and not inside else row.symbol
    boost = name_boost(terms, symbol, owner_terms, named=inside, creating=creating) if own else 0.0
    if inside and row.symbol:
        names = members(row)
        if row.language not in DEFINED_ELSEWHERE:
            names += listed_members(row.symbol, row.header, declared=True)
        for member in names:
            boost = max(boost, name_boost(terms, f"{row.symbol}.{member}", owner_terms, named=True))
    elif row.symbol:
        # A sentence also means a chunk by what it lists: the helpers a function kept whole
        # holds (an ESLint rule's `create` and its `isElseKeywordToken`), the one-liners of a
        # class's window, and what a window only declares (a C++ prototype in its class, a Java
        # or TypeScript abstract or interface method), which is documented where it is
        # declared ("Returns true if the video is currently playing": the header's `; declares
        # play, stop, is playing, …`, not the `.cpp` window). A defined member named by one word
        # (`new`, `fmt`, `next`) is spelled by chance, as every `impl` listing `new` is by
        # "Creates a new …": not counted. bench.multilang descriptive, six samples pooled, paired
        # (session 39): the declared members alone, C++ +0.011 [+0.006, +0.017] (documented
        # 0.584 -> 0.601, its naive windows' 0.6005), RxJS +0.003 on five samples, Java ±0.003;
        # the defined ones of two words or more on top, JavaScript +0.019 [+0.012, +0.026] (+42
        # / -12), C++ +0.013 [+0.008, +0.018] (documented 0.599), RxJS +0.005, Python +0.002,
        # Rust -0.001 [-0.004, +0.001] (+5 / -15), the rest level; every defined member, Rust
        # -0.002 (+12 / -31) and ProseMirror's -0.002. Identifier queries do not take this path.
        spelled_apart = [name for name in members(row) if len(set(name.split()) - FUNCTION_WORDS) > 1]
        for member in spelled_apart + listed_members(row.symbol, row.header, declared=True):
            boost = max(boost, name_boost(terms, f"{row.symbol}.{member}", owner_terms))
    return boost


# Where a class line names the classes it extends or implements (TypeScript's and Java's
# `extends`/`implements`, C++'s single `:`), not the class it defines.
_BASE_CLAUSE = re.compile(r"\bextends\b|\bimplements\b|(?<!:):(?!:)")


def names_as_base(signatures: str, base: str) -> bool:
    """Whether one of the enclosing ``signatures`` extends or implements ``base``
    (``class AttrStep extends Step``; not ``class Step``, nor a nested class's outer ``class
    ValueTree``)."""
    named = re.compile(rf"(?<![\w$]){re.escape(base)}(?![\w$])")
    for line in signatures.split("\n"):
        clause = _BASE_CLAUSE.search(line)
        if clause and named.search(line, clause.end()):
            return True
    return False


def says_itself(implementation: Sequence[ChunkRow], declaration: ChunkRow, name: str) -> bool:
    """Whether an implementation (its pieces among the candidates: a long one is cut) carries
    its own doc comment where its declaration carries none (Capacitor's `CapacitorBridge.eval`
    under `/** Eval JS in the web view */`, its protocol's `func eval(js: String)` bare): then
    it is where a sentence about it was written."""
    return any(documents(piece, name) for piece in implementation) and not documents(declaration, name)


def implementations(rows: Iterable[ChunkRow]) -> dict[int, list[int]]:
    """Among ``rows``, each trait or interface member declaration's implementations: the
    methods of its name whose enclosing signature names its trait (``fn tell(&self) ->
    io::Result<u64>;`` in ``trait FileExt`` ← ``fn tell`` in ``impl FileExt for File``), and
    the definitions kept whole that list it as their member and name the trait (``impl
    OsStrExt for OsStr`` with ``as_bytes`` in it). A class kept whole, or a window of its body,
    that only declares a member (an abstract method, a Java interface's or a C++ pure virtual
    one, listed after ``; declares``) has as implementations the methods of that name in the
    classes that extend or implement it (``abstract map(…)`` in ``Step`` ← ``map`` in ``class
    AttrStep extends Step``). An implementation documented where its declaration is not
    (``says_itself``) is none: the sentence is its own."""
    # A member's name in words -> the rows defining it, each with the name of the type it is
    # defined in: a method's owner, or the definition kept whole that lists it.
    by_leaf: dict[str, list[tuple[ChunkRow, str]]] = {}
    declarations: list[ChunkRow] = []
    declaring: list[tuple[ChunkRow, list[str]]] = []  # a class (or its window), the names it declares
    pieces: dict[tuple[int, str], list[ChunkRow]] = {}  # a definition's pieces, by file and name
    for row in rows:
        if not row.symbol:
            continue
        pieces.setdefault((row.file_id, row.symbol), []).append(row)
        owner, _, leaf = row.symbol.rpartition(".")
        if owner and row.kind == DECLARATION_KIND:
            declarations.append(row)
        elif owner and row.kind in CALLABLE_KINDS:
            by_leaf.setdefault(leaf_words(row.symbol), []).append((row, owner.rsplit(".", 1)[-1]))
        else:
            for member in members(row):
                by_leaf.setdefault(member, []).append((row, leaf))
            declared = listed_members(row.symbol, row.header, declared=True)
            if declared and row.kind != DECLARATION_KIND:
                declaring.append((row, declared))
    found: dict[int, list[int]] = {}
    for declaration in declarations:
        assert declaration.symbol is not None
        owner, _, leaf = declaration.symbol.rpartition(".")
        trait = owner.rsplit(".", 1)[-1]
        named = re.compile(rf"(?<![\w$]){re.escape(trait)}(?![\w$])")
        for row, defined_in in by_leaf.get(leaf_words(declaration.symbol), ()):
            if defined_in == trait:  # the trait's own default body
                continue
            # The enclosing signatures, or the text above the method's name (an `impl` kept
            # whole: its own opening line).
            above = row.text.find(leaf)
            implements = named.search(enclosing_signatures(row)) or (
                above > 0 and named.search(row.text[:above])
            )
            if implements and not says_itself(pieces[row.file_id, row.symbol or ""], declaration, leaf):
                found.setdefault(declaration.id, []).append(row.id)
    for row, declared in declaring:
        assert row.symbol is not None
        base = row.symbol.rsplit(".", 1)[-1]
        for member in declared:
            for method, defined_in in by_leaf.get(member, ()):
                if (
                    method.kind in CALLABLE_KINDS
                    and defined_in != base
                    and names_as_base(enclosing_signatures(method), base)
                    and not says_itself(pieces[method.file_id, method.symbol or ""], row, leaf_of(method))
                ):
                    found.setdefault(row.id, []).append(method.id)
    return found


def dense_scores(dense: Sequence[tuple[int, float]]) -> dict[int, float]:
    """Each dense candidate's share of the fused score, ``dense`` best first: ``DENSE_WEIGHT /
    (RRF_K + 1)`` (what reciprocal rank fusion gives rank 1) times ``exp(-(its gap to the most
    similar) / DENSE_GAP_SCALE)``, for ``DENSE_SIMILARITY_SHARE`` of it, and its rank's
    reciprocal-rank score for the rest. Ranks alone scored a chunk 0.01 below the best as far
    behind it as one 0.2 below; the rank's share keeps the semantic neighbours of a clear best
    above words matched by chance."""
    if not dense:
        return {}
    best = max(sim for _, sim in dense)
    top = tuning.DENSE_WEIGHT / (tuning.RRF_K + 1)
    share = tuning.DENSE_SIMILARITY_SHARE
    return {
        cid: share * top * math.exp((sim - best) / tuning.DENSE_GAP_SCALE)
        + (1 - share) * tuning.DENSE_WEIGHT / (tuning.RRF_K + rank)
        for rank, (cid, sim) in enumerate(dense, 1)
    }


def fuse(
    engine: Engine,
    conn: sqlite3.Connection,
    query: SearchQuery,
    text: str,
    dense: Sequence[tuple[int, float]],
    lexical: Sequence[int],
    *,
    keep_boilerplate: bool = False,
    total: int | None = None,
    aliased: Mapping[int, float] | None = None,
) -> list[Hit]:
    """The hits, best first. ``total``: the highest chunk id, read once per query by the caller
    (read here when not given and needed). ``aliased``: chunks that declare operators the
    query writes as their aliases, with the share of the name boost each earns
    (``search.aliases``): candidates, with that boost."""
    assert engine.db is not None
    aliased = aliased or {}
    ids = list(dict.fromkeys([*(cid for cid, _ in dense), *lexical, *aliased]))
    rows = engine.db.chunks_by_id(ids, conn)
    if not keep_boilerplate:
        # Import blocks and licence headers stay lexically findable, but their vectors sit
        # close to many descriptive queries while saying nothing about what the code does.
        dense = [(cid, sim) for cid, sim in dense if cid in rows and not is_boilerplate(rows[cid])]
        ids = list(dict.fromkeys([*(cid for cid, _ in dense), *lexical, *aliased]))
    dense_rank = {cid: i + 1 for i, (cid, _) in enumerate(dense)}
    dense_sim = dict(dense)
    dense_score = dense_scores(dense)
    lexical_rank = {cid: i + 1 for i, cid in enumerate(lexical)}
    terms = query_terms(text)
    # Names are matched by their words, compounds split (lexical.name_words): so are the query's.
    term_set = with_compound_parts(terms)
    # A typed identifier (`parseHttpHeader`, `Filter next_back`) is what BM25 over split
    # identifiers finds best; a sentence is where the dense half leads.
    lexical_weight = tuning.IDENTIFIER_LEXICAL_WEIGHT if identifier_like(text) else tuning.LEXICAL_WEIGHT
    # A name typed with its owner ("Filter next_back") may be a member of a definition kept
    # whole; a sentence's words spell members by chance.
    inside = len(text.split()) <= tuning.MEMBER_NAMES_MAX_WORDS
    written = punctuated_names(text) if inside else frozenset()
    owner_terms: set[str] = set()
    # Only a query of names, or a sentence that says it makes something, names an owner
    # (name_boost).
    if tuning.OWNER_BOOST and terms and (inside or not term_set.isdisjoint(CREATION_WORDS)):
        # Counting a common word is the costly part, and only the words that spell a
        # candidate's whole owner can change a boost.
        named = owner_words(rows.values(), term_set, inside=inside)
        if named:
            if total is None:
                total = engine.db.max_chunk_id(conn)
            owner_terms = rare_terms(engine, conn, [t for t in terms if t in named], total)
    written_code = code_spans(text)
    names_written = written_names(text)
    # A query of names may type one exactly (`_url`, not its twin `url`): see EXACT_NAME_BOOST.
    typed = typed_names(text) if inside else ()
    # "Converts a `Cow<'a, OsStr>` into an `OsString`": see CONVERSION_BOOST.
    sides = conversion_sides(text) if not inside and tuning.CONVERSION_BOOST else None
    named_sides = conversion_in_names(text) if sides is not None else None
    # "is like setPath but for Fragment" is not `setPath`, nor a doc link's target what the
    # sentence documents: see OTHER_NAME_PENALTY.
    others = other_names(text) | linked_names(query.text) if not inside else frozenset()
    exact = exact_definitions(engine, conn, rows.values(), typed) if typed else set()
    # "reports whether …": a definition that answers yes or no (see PREDICATE_BOOST).
    predicate = not inside and tuning.PREDICATE_BOOST > 0 and asks_whether(text)
    # "scans text read from r": the definitions that take an `r` (see PARAMETER_BOOST).
    named_parameters = parameters_named(text) if not inside and tuning.PARAMETER_BOOST else frozenset()
    # "Consumes this `RwLock`": the methods of `RwLock` (see THIS_OWNER_BOOST).
    this_owners = owners_said(text) if not inside and tuning.THIS_OWNER_BOOST else frozenset()
    scored: list[tuple[float, ChunkRow]] = []
    for cid in ids:
        row = rows.get(cid)
        if row is None:  # deleted since the candidate lists were made
            continue
        if query.mode == "semantic":
            score = dense_sim[cid]
        else:
            score = dense_score.get(cid, 0.0)
            if cid in lexical_rank:
                score += lexical_weight / (tuning.RRF_K + lexical_rank[cid])
            if others and any(names_exactly(row.symbol, name) for name in others):
                score -= tuning.OTHER_NAME_PENALTY
            else:
                score += chunk_boost(term_set, row, owner_terms, inside=inside, written=written)
            score += tuning.NAME_BOOST * aliased.get(cid, 0.0)
            if row.id in exact:
                score += tuning.EXACT_NAME_BOOST
            if written_code:  # `Box<[T], A>`: the code the query writes, as the chunk writes it
                score += tuning.CODE_SPAN_BOOST * spans_written(written_code, row.text)
            if names_written and names_written <= signature_words(row):
                # "Gets the `TypeId` of `self`": `fn type_id(&self) -> TypeId` relates both.
                score += tuning.CODE_SPAN_BOOST
            if named_parameters and not named_parameters.isdisjoint(parameter_names(row)):
                score += tuning.PARAMETER_BOOST
            if this_owners and owned_by(row, this_owners):
                score += tuning.THIS_OWNER_BOOST
            if predicate and answers_yes_or_no(row):
                score += tuning.PREDICATE_BOOST
            if sides is not None and (
                converts_as_said(row, sides)
                or (named_sides is not None and name_converts_as_said(row.symbol, named_sides))
            ):
                score += tuning.CONVERSION_BOOST
        scored.append((score, row))
    if not inside and scored:
        # A sentence says what an operation does, and a trait's declaration (or an abstract
        # class's) is where that is said (its doc comment, in documented code); an
        # implementation is often a thin wrapper (`self.as_inner().tell()`) the model places as
        # near. The declaration ranks directly above its best-ranked implementation among the
        # candidates.
        found = implementations(row for _, row in scored)
        if found:
            best = {row.id: score for score, row in scored}
            for declaration, implementing in found.items():
                best[declaration] = max(best[declaration], max(best[i] for i in implementing) + 1e-9)
            scored = [(best[row.id], row) for _, row in scored]
    scored.sort(key=lambda sr: (-sr[0], sr[1].path, sr[1].start_line))
    chosen: list[tuple[float, ChunkRow]] = []
    seen_text: set[int] = set()
    spans: dict[str, list[tuple[int, int]]] = {}
    # A function longer than a chunk is cut into pieces, each named as the function: the
    # best-ranked piece stands for it, and the others leave their places to other definitions
    # (seven pieces of Go's `pp.doPrintf` filled a page of results for "formats according to a
    # format specifier and writes to standard output"); they come last, and only when the
    # candidates run out before the limit. Same-named definitions stay apart: a piece belongs
    # to the definition of its name whose lines it overlaps most (the symbols table), so
    # overloads and a Rust method in two `impl` blocks are each found; and a piece that holds
    # other definitions (nested functions) is theirs. A class body's pieces stay: each holds
    # other members (C++ declarations the symbols table does not list among them).
    taken: dict[tuple[int, str], list[tuple[int, int] | None]] = {}  # each shown one's piece_of
    defined: dict[int, list[tuple[str, int, int, int]]] = {}
    later: list[tuple[float, ChunkRow]] = []
    candidates: dict[tuple[int, str], list[ChunkRow]] = {}  # the pieces among the candidates
    for _, row in scored:
        if row.symbol and row.kind in CALLABLE_KINDS:
            candidates.setdefault((row.file_id, row.symbol), []).append(row)

    def overlaps_shown(row: ChunkRow) -> bool:
        return any(s <= row.end_line and row.start_line <= e for s, e in spans.get(row.path, []))

    for score, row in scored:
        if not stored_path_is_plain(row.path):
            log.warning("a stored chunk names the path %r, which kenning never writes; left out", row.path)
            continue
        if hash(row.text) in seen_text or overlaps_shown(row):
            continue
        if row.symbol and row.kind in CALLABLE_KINDS:
            same_name = (row.file_id, row.symbol)
            whole = None  # with one candidate of its name, nothing is compared with it
            if len(candidates[same_name]) > 1:  # rare: read the file's definitions only then
                if row.file_id not in defined:
                    defined[row.file_id] = engine.db.definitions(row.file_id, conn)
                in_file = defined[row.file_id]
                whole = piece_of(row, in_file)
                shown_before = taken.get(same_name)
                if shown_before is not None:
                    if whole is not None and whole in shown_before:
                        later.append((score, row))
                        continue
                elif whole is not None and row.end_line < whole[0]:
                    # A piece of the doc comment above the function: the result is the function
                    # (the piece holding its name line) when that is a candidate, in this place.
                    line = next(n for _, s, e, n in in_file if (s, e) == whole)
                    pieces = candidates[same_name]
                    body = next((p for p in pieces if p.start_line <= line <= p.end_line), None)
                    if body is not None and hash(body.text) not in seen_text and not overlaps_shown(body):
                        later.append((score, row))
                        row, whole = body, piece_of(body, in_file)
            taken.setdefault(same_name, []).append(whole)
        seen_text.add(hash(row.text))
        spans.setdefault(row.path, []).append((row.start_line, row.end_line))
        chosen.append((score, row))
        if len(chosen) == query.limit:
            break
    for score, row in later:
        if len(chosen) == query.limit:
            break
        if hash(row.text) not in seen_text and not overlaps_shown(row):
            seen_text.add(hash(row.text))
            spans.setdefault(row.path, []).append((row.start_line, row.end_line))
            chosen.append((score, row))
    return [
        Hit(
            chunk_id=row.id,
            path=row.path,
            start_line=row.start_line,
            end_line=row.end_line,
            score=round(score, 6),
            preview=preview(row.text, terms),
            symbol=row.symbol,
            kind=row.kind,
            language=row.language,
            dense_rank=dense_rank.get(row.id),
            lexical_rank=lexical_rank.get(row.id),
            last_line=row.text.rsplit("\n", 1)[-1],
        )
        for score, row in chosen
    ]
