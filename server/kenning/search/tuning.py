"""The ranking's tunable constants, in one place.

Every reader spells them ``tuning.NAME``, read at call time, so ``bench.quality`` and
``bench.multilang`` can set them for a grid search; the measurements behind each value sit
beside it.
"""

from __future__ import annotations

from kenning.chunking.model import BOILERPLATE_CHUNK_KINDS

# Tuned with `python -m bench` (docstring-first-sentence queries against the docstring-free
# standard library, 27k chunks): RRF_K 20 -> 5 raised hybrid MRR@10 from 0.463 to 0.478 on 300
# queries and by 0.015-0.018 on held-out halves; the other constants were already at their best.
RRF_K = 5
DENSE_WEIGHT = 1.0
# A sentence's lexical half (BM25's rank; the name, owner, parameter and code boosts are added
# apart from it). 0.7 until session 42, re-tuned then with DENSE_GAP_SCALE on every language
# (bench.multilang descriptive, six samples, 16 points): at 0.45 and 0.2 the nine-language mean
# rose 0.655 -> 0.659 (Rust +0.008, Python +0.007, the other TypeScript +0.009 pooled; no
# language lower beyond noise: C -0.002 on 248 queries), the Go/Rust/TypeScript group up on
# five samples and level on the sixth. Chosen on either half of the queries, the other half
# rose too (+0.003 / +0.002). The standard library's 1,500 queries are level (0.486);
# identifiers use their own weight below.
LEXICAL_WEIGHT = 0.45
# Each half hands fusion this many candidates, or as many as the results asked for when that is
# more. It was 3 x the limit, at least 30: a query asked with limit 20, the editor's default,
# ranked from 60 a half and could order its first ten unlike the same query with limit 10 (an
# agent's default, and the benchmarks'). Now every limit up to 30 ranks the same candidates, so
# a shorter list is the longer one's start. 30 rather than 60 for all: bench.multilang
# descriptive at 60 a half lost a little almost everywhere (Go/Rust/TypeScript group dev 0.633
# = , seeds 8-11 -0.003, -0.001, -0.001, -0.004; Rust seed 10 13 queries down, 3 up), the
# extra candidates being ones that neither half ranks well.
CANDIDATES = 30
# The dense half scores by similarity as well as rank (fusion.dense_scores): the most similar chunk
# gets what rank 1 gets, each other exp(-(its gap to it) / DENSE_GAP_SCALE) of that, for
# DENSE_SIMILARITY_SHARE of its score; its rank's reciprocal-rank score for the rest.
# bench.multilang descriptive, the mean of nine languages, dev stripped, tune / held-out halves,
# similarity alone: ranks 0.630 / 0.639; scale 0.06 0.635 / 0.641, 0.12 0.642 / 0.646, 0.15
# 0.640 / 0.644, 0.2 0.636 / 0.632, 0.25 0.635 / 0.621. At 0.15, a share of 0.7 measures the
# same (0.641 / 0.642; seeds 8 and 9 0.629 and 0.592 against 0.630 and 0.593), 0.5 less
# (0.631 / 0.644), and keeps some order in the tail: with similarity alone a chunk 0.3 below
# the best scored under a lexical match at rank 10. Multiplying the rank's score by the
# similarity's measured below ranks alone. At 0.15 and 0.7, the mean of nine languages, dev
# stripped / documented / seed 8 / seed 9: 0.634 / 0.630 / 0.620 / 0.583 -> 0.642 / 0.633 / 0.629
# / 0.592; per language paired, 25 of 34 language-samples up (Go documented +0.027, seed 9
# +0.020, JavaScript seed 9 +0.021, C++ seed 8 +0.019), RxJS -0.016 (+16 -13, one sample of
# it), Rust documented -0.005 and seed 8 -0.004; identifiers within 0.01; the Python standard
# library (300 queries) 0.479 -> 0.481; tests/test_stdlib.py's `quote` 9th -> 7th.
# Session 42 moved it to 0.2 with LEXICAL_WEIGHT (above): at 0.15 the same weight lowered RxJS
# (-0.002) and the group's seed 11 (0.660 -> 0.651); 0.25 gained less everywhere.
DENSE_GAP_SCALE = 0.2
DENSE_SIMILARITY_SHARE = 0.7
# The name boost: NAME_BOOST x (share of the name's parts the query spells) x (share of the
# query's terms they are) ** NAME_TERMS_POWER. 1.5 and 0.75 (were 1.0 and 0.5) lift a name the
# query spells more fully over its siblings (`new_uninit_in` over `new_in`): bench.multilang
# held-out halves, descriptive / identifier: Python 0.655/0.924 -> 0.664/0.933, Go
# 0.578/0.927 -> 0.585/0.944, Rust 0.404/0.780 -> 0.404/0.795, TypeScript 0.373/0.883 ->
# 0.377/0.890; the docstring-free stdlib set (300 queries) 0.457 -> 0.459.
NAME_BOOST = 1.5 / (RRF_K + 1)
NAME_TERMS_POWER = 0.75
# Tuned with `python -m bench.multilang` (Go, Rust and TypeScript standard-library-sized
# samples, held-out halves; docs/performance.md): for queries shaped like identifiers (see
# lexical.identifier_like) the lexical half weighs 1.4 (identifier MRR@10 on held-out halves: Go
# 0.916 -> 0.924, Rust 0.748 -> 0.771, TypeScript 0.812 -> 0.872 with the owner boost below).
IDENTIFIER_LEXICAL_WEIGHT = 1.4
# Added to the name boost when a query of names names the definition's owner (type, class,
# receiver) by a term that is not in most chunks, or a sentence that says it makes something
# names a constructor's class (fusion.name_boost). Other sentences earned it from session 2 to
# 26 (Rust descriptive held-out 0.331 -> 0.356 then); by session 27 it cost the samples nothing
# was tuned on (Go/Rust/TypeScript seed 8 0.559 -> 0.569 and seed 9 0.564 -> 0.570 without it,
# identifiers unchanged; docs/performance.md).
OWNER_BOOST = 0.1
# An owner word earns that boost unless it is in more than this share of chunks: a type named
# in nearly every chunk (`Observable` in RxJS, ~45 %) tells no owner apart, but one in a
# quarter of them (`Collection` in java.util) still does. Identifier MRR@10 (bench.multilang,
# query adapter on) at 0.2 -> 0.4: Java 0.866 -> 0.916, TypeScript 0.952 -> 0.975, Rust 0.911
# -> 0.924, Python 0.973 -> 0.977, C++ 0.833 -> 0.821; descriptive Java 0.488 -> 0.504, the
# rest within 0.002. At 0.5 TypeScript descriptive falls 0.448 -> 0.436 (Observable counts).
OWNER_TERM_SHARE = 0.4
# A query of at most this many words may name a definition inside a chunk kept whole (an
# `impl` or class that fits, its members listed in its header): the name boost takes the best
# of the chunk's own name and its members'. bench.multilang identifier MRR@10, all queries:
# Rust 0.844 -> 0.884, TypeScript 0.902 -> 0.921, Python 0.952 -> 0.955, Go equal;
# descriptive unchanged. Applied to every query, Rust descriptive fell 0.436 -> 0.432 (15
# queries lower, 5 higher): a sentence's words spell members by chance. Such a query also
# counts the owner's words as spelled in the name's share of the query ("Rc new" spells all of
# `Rc.new`): identifier Rust 0.895 -> 0.909, TypeScript 0.939 -> 0.950, Python 0.959 ->
# 0.969, Go 0.953 -> 0.957; for every query it cost Go descriptive 0.637 -> 0.627.
MEMBER_NAMES_MAX_WORDS = 3
# A name part at least this long also spells a query word it begins: code abbreviates what a
# sentence spells out (`uninit` / "uninitialized", `alloc` / "allocator", `buf` / "buffer").
# Descriptive MRR@10 (tune/held-out halves, bench.multilang): Python 0.527/0.649 ->
# 0.535/0.660, Go 0.635/0.542 -> 0.651/0.554, Rust 0.415/0.343 -> 0.431/0.389; identifiers equal.
NAME_PREFIX_MIN = 3
# Added, times the share of the query's backticked code (`Box<[T], A>`, markup.code_spans) that a
# chunk holds as written, to that chunk's score: half the name boost. bench.multilang Rust
# descriptive MRR@10, stripped / documented: 0.619 / 0.515 -> 0.640 / 0.535 (8 up 1 down, 10 up
# 4 down); chosen on each half of the queries, the other half rose +0.018 / +0.012 and +0.026 /
# +0.027 (at 0.25: +0.006 / +0.005; at 1.0 the same as 0.5 on the tuning halves). No other
# language's queries hold such code; counting names alone (`"json"`, `connect()`) cost
# TypeScript five documented queries.
# The same is added once to a chunk whose signature (first line of code, enclosing `impl`) holds
# every name the query writes alone in backticks, two at least (markup.written_names): "Gets the
# `TypeId` of `self`". Rust descriptive, dev stripped / documented, seeds 8 and 9: 0.646 / 0.538
# / 0.508 / 0.499 -> 0.650 / 0.541 / 0.519 / 0.517 (+1 -1, +5 -0, +4 -1 paired); at 0.25 and 1.0
# of the name boost 0.646 / 0.541 / 0.509 / 0.508 and 0.648 / 0.541 / 0.521 / 0.513; TypeScript
# documented -0.004 at 1.0; other languages write no such pairs. One name alone: Rust dev 0.650
# -> 0.641, TypeScript documented 0.526 -> 0.518.
CODE_SPAN_BOOST = 0.5 * NAME_BOOST
# Added to a definition whose dotted name ends with the names a short query types, exactly as
# typed (case, leading underscores): "_url" means `_url`, not its public twin `url`; "parseGlob"
# not `ParseGlob`; "AtomicIntegerFieldUpdater lazySet" the outer class's method, not its nested
# `…Impl.lazySet`. Word-level matching (the name boost) cannot tell these apart. bench.multilang
# identifier MRR@10, dev stripped / documented / seeds 8 / 9, no query lower anywhere: Rust 0.957
# / 0.951 / 0.966 / 0.974 -> 0.978 / 0.974 / 0.986 / 0.983, Java 0.939 / 0.914 / 0.955 / 0.954 ->
# 0.963 / 0.968 / 0.968 / 0.981, C++ 0.921 / 0.910 / 0.949 / 0.951 -> 0.962 / 0.964 / 0.976 /
# 0.993, Go 0.980 / 0.986 / 0.978 / 0.959 -> 1.000 / 1.000 / 1.000 / 0.966, TypeScript (RxJS)
# 0.981 -> 0.997; Zod 4's sources, whose `_email` / `email` twins are everywhere, 0.756 -> 0.990.
# At 1.2 x the name boost the same but for one Zod query; at 0.4 x Zod 0.869 (the owner unchecked).
# A window of one-liners earns it too when it holds the name line of a definition so named (Go's
# go/ast `Pos`/`End` methods): Go identifiers on seed 10 0.872 -> 0.993, C++ dev 0.952 -> 0.972,
# no query lower on six samples (session 27). 1.0 x since the averaged code layers of session 32,
# which at 0.8 x put "SelectStmt Pos" second behind the `SelectStmt` struct: identifier queries
# up on four of six samples (10 queries), none down, no descriptive query moved.
EXACT_NAME_BOOST = 1.0 * NAME_BOOST
# Added to a Rust `impl From<A> for B` (or `TryFrom`, or a method inside one) when a sentence
# describes that conversion in its direction ("Converts a `Cow<'a, OsStr>` into an `OsString`":
# `A` named before "into"/"to", `B` after; "from" the other way round), not the reverse impl
# beside it, which names the same two types (sentences.converts_as_said). Rust's `From` impls are
# documented so by convention, and the owner boost and `written_names` could not tell the two
# directions apart. bench.multilang Rust descriptive, dev stripped / documented / seeds 8 / 9,
# re-fused offline: 0.659 / 0.551 / 0.525 / 0.531 -> 0.667 / 0.564 / 0.532 / 0.531 (+2 -0,
# +4 -0, +3 -1, equal); at 0.05: 0.667 / 0.559 / 0.526; at 0.2: 0.667 / 0.568 / 0.534 / 0.528
# (-1). Other languages write no such impl: unchanged.
# The same is added to a definition whose name says the conversion in the sentence's direction,
# when the sentence starts by saying it converts ("Converts radians to degrees": `to_degrees`,
# `fromPromise` for "Converts a promise to an observable"; sentences.name_converts_as_said):
# bench.multilang descriptive, six samples (session 39), 9 queries up and 4 down: C++ +0.003 to
# +0.008 on four samples (`createFromDescription`, `convertIPv4AddressToIPv4Mapped`), Rust seed 10
# +0.007 (`to_degrees`, `from_box`), seed 8 +0.001, dev -0.002 (two queries 2nd -> 3rd), no other
# language moved, identifiers unchanged. Read in every sentence with "to"/"from", it moved 72
# queries down and 17 up on four samples ("Gets a raw pointer to …" lifted every `to_*`); with
# all of the sentence after "into" as its target side, Java lost two "Translates a … into a
# BigDecimal, using …" sentences to names that the words after the comma spell.
CONVERSION_BOOST = OWNER_BOOST
# Taken from a definition a sentence names as other than its subject (sentences.other_names: "is
# like setPath but for Fragment", "The same as `reserve`, but returns on errors", "calls
# ParseAddr(s) and panics on error", "ignoring the severity passed to New", "is the
# implementation of New, without the lock"), which also gets no name or owner boost: the
# sentence spells that name, and means another. bench.multilang descriptive, paired, no query
# lower anywhere: Go dev stripped / documented / seed 8 / seed 9 0.693 / 0.705 / 0.624 / 0.607
# -> 0.697 / 0.708 / 0.630 / 0.618 (+2 / +1 / +3 / +6: `callCgoSigaction` 6 -> 1,
# `cgoCheckUsingType` 6 -> 2), Rust +1 / +1 / 0 / +1; then "passed to", "call(s) to",
# "returned by", "same … as": Go +1 / +5 / 0 / +1, Python dev +1, JavaScript seed 8 +1 (5 -> 1).
# With the boosts withheld and no penalty, seed 9 two fewer. The targets of a pasted sentence's
# inline doc links too (markup.linked_names: "… added with the {@link #add} method" documents
# `remove`): TypeScript (RxJS) 0.508 -> 0.512 on the dev set and both seeds, documented +1 (5 ->
# 4), nothing lower (Java's links name types, or are read by the phrases above).
OTHER_NAME_PENALTY = OWNER_BOOST
# Added to a definition whose signature writes a truth value's type (signatures.answers_yes_or_no)
# when a sentence describes a predicate ("reports whether port is either an empty string or …",
# "Returns `true` if …", "Checks if …": sentences.asks_whether): URL.Port (a string) ranked
# above validOptionalPort. bench.multilang descriptive, re-fused offline, all languages, four
# samples: +30 / -13 queries; Go dev stripped / documented / seed 8 / seed 9 0.697 / 0.713 /
# 0.630 / 0.618 -> 0.702 / 0.718 / 0.634 / 0.616, Rust +0.002 / +0.001 / +0.003 / +0.003, C
# +0.009 / -0.005 / +0.015 / -0.001, C++ +0.002 to +0.004, Java seed 8 -0.002; at 0.1 no better.
PREDICATE_BOOST = 0.05
# Added to a callable that takes a parameter a sentence names by a word that can only be a name
# (sentences.parameters_named, signatures.parameter_names): "scans text read from r" is `Fscan(r
# io.Reader, a ...any)`, not the `Scan` and `Sscan` beside it; "Copies `val` into freshly
# allocated space" is `new_from_enclave(val: &T)`. A third of Go's first sentences name one of
# their function's parameters so (Rust 6 %, ProseMirror and Zod 12 %, the rest 1-4 %).
# bench.multilang descriptive, six samples pooled, paired (session 41): Go +0.007 [+0.002,
# +0.012] (+41 / -13), TypeScript (RxJS) +0.005 [+0.002, +0.008], Rust +0.002 [+0.001, +0.005],
# the other TypeScript +0.003, JavaScript -0.001 [-0.004, +0.001] (+2 / -4), the rest level;
# the Go/Rust/TypeScript group up on all six. At 0.03 about half the gain; at 0.08 and 0.12
# Go's and TypeScript's gains shrink and C++ loses (-0.003 at 0.12). A digit counted as a
# name's ("IPv6") cost C++ 5 queries; a boost shared out among the candidates that take the
# same name (1/sqrt, or none past five) gained less.
PARAMETER_BOOST = 0.05
# Added to a method (or a member's declaration) of the type a sentence calls "this"
# (sentences.owners_said, fusion.owned_by): "Consumes this `RwLock`, returning the underlying
# data" is `RwLock.into_inner`, "Lay out this BigDecimal into a char[] array" a BigDecimal
# method. 93 of the 104 such sentences of the six samples name their method's owner so (Java
# 46, Rust 17, RxJS 18, C++ 12). bench.multilang descriptive, six samples pooled, paired
# (session 41): Java +0.003 [-0.001, +0.007] (+9 / -2), RxJS +0.003 [+0.001, +0.005] (+7 / -0),
# Rust +0.002 [+0.000, +0.004] (+5 / -0), C++ -0.001 [-0.003, +0.001] (+1 / -3: a sibling of
# the same class lifted with it; C++ documented 0.599 -> 0.601, above its naive windows'
# 0.6005); at 0.05 about half of each.
THIS_OWNER_BOOST = OWNER_BOOST
# A query's vector, before the graph is searched, less this times the mean of the workspace's chunk
# vectors (VectorIndex.centroid): a chunk near that mean (a short `return new Observable(…)` in
# RxJS, `combineLatest`'s helpers) is near every query and crowds the dense half. A chunk's score
# becomes its cosine less the weight times its cosine with the mean: hubness reduction.
# bench.multilang descriptive, dev stripped, tune / held-out halves, the mean of nine languages:
# 0.631 / 0.629 at 0, 0.632 / 0.636 at 0.1, 0.630 / 0.639 at 0.15, 0.630 / 0.642 at 0.2, 0.634 /
# 0.644 at 0.3, 0.634 / 0.641 at 0.4. From 0.2 up tests/test_stdlib.py's "percent-encode special
# characters in a URL component" puts `quote` 12th (8th at 0, 9th from 0.12 to 0.18), so 0.15.
# There, the mean of Go, Rust and TypeScript, dev stripped / documented / seed 8 / seed 9: 0.628
# / 0.608 / 0.560 / 0.554 -> 0.633 / 0.604 / 0.564 / 0.561 (RxJS 0.512 -> 0.526, Zod and TanStack
# 0.559 -> 0.595 on the dev set); no language lower by more than noise (Python documented 0.660
# -> 0.652, C seed 8, 32 queries, 0.768 -> 0.751); identifiers within 0.01; the Python standard
# library (300 queries, 27k chunks) 0.479 -> 0.479. CSLS's penalty (each chunk's mean cosine with
# its ten nearest chunks instead of the mean's) measured +0.004 on the dev set at its best.
CENTROID_WEIGHT = 0.15
# Chunk kinds the chunker gives import-only windows and licence/preamble comments
# (chunking/model.py): left out of the dense half and of Find Similar (unless the selection is
# one), still found lexically.
BOILERPLATE_KINDS = BOILERPLATE_CHUNK_KINDS
# A term in more than this share of chunks ranks nothing and makes bm25 score every chunk.
COMMON_TERM_SHARE = 0.2
COMMON_TERM_MIN_CHUNKS = 500  # in a small index every term is cheap, and dropping one hurts
# bm25 scores every chunk that matches any term, so the lexical half costs about half a
# microsecond per posting. Past this many postings the most common of the remaining terms are
# dropped too (the rarest always stays): a long descriptive query against 100k chunks stays
# near what it costs against 20k.
LEXICAL_POSTINGS_BUDGET = 7_500
