"""Chunking and symbols per tree-sitter language: JavaScript, TypeScript/TSX, Go, Rust, Java, C, C++."""

from __future__ import annotations

import pytest

from kenning.chunking import DEFAULT_MAX_CHARS, chunk_source
from kenning.chunking.code import CodeChunker
from kenning.chunking.grammars import GRAMMARS, parser_for
from kenning.chunking.lines import LineIndex
from kenning.chunking.ts_repairs import repair as repair_typescript
from tests.chunking_helpers import (
    GLIBC_STRLEN,
    check_invariants,
    chunk_at,
    chunked,
    spans,
    src,
    symbol,
    symbols_of,
)

# ---- JavaScript / TypeScript ---------------------------------------------------------------

JAVASCRIPT = src(
    """
    import { x } from "y";

    /** Adds. */
    export function add(a, b) {
      return a + b;
    }

    export default class Widget extends Base {
      static count = 0;
      constructor(el) {
        super(el);
      }
      render() {
        return this.el;
      }
    }

    const handler = async (event) => {
      return event;
    };

    exports.legacy = function () {
      return 1;
    };
    """
)


def test_javascript() -> None:
    result = chunked(JAVASCRIPT, "javascript")
    assert symbols_of(result) == {
        ("add", "function", None),
        ("Widget", "class", None),
        ("count", "field", "Widget"),
        ("constructor", "constructor", "Widget"),
        ("render", "method", "Widget"),
        ("handler", "function", None),
        ("legacy", "function", None),
    }
    assert spans(result) == [
        (1, 1, "imports", None),
        (3, 6, "function", "add"),  # the JSDoc comment belongs to it
        (8, 16, "class", "Widget"),
        (18, 20, "function", "handler"),
        (22, 24, "function", "legacy"),
    ]


def test_javascript_object_literal_functions() -> None:
    text = src(
        """
        module.exports = {
          parse(input) {
            return input.trim();
          },
          format: function (value) {
            return String(value);
          },
        };
        """
    )
    result = chunked(text, "javascript", max_chars=80)
    assert symbols_of(result) == {("parse", "method", None), ("format", "method", None)}
    # `module.exports = {` leads into the first function; `};` closes the last one.
    assert spans(result) == [(1, 4, "method", "parse"), (5, 8, "method", "format")]


# Flow-typed JavaScript, in the shape of React Native's `Libraries/Alert/Alert.js`: the
# JavaScript grammar reads the annotations as errors and recovers into `if` "methods".
FLOW = src(
    """
    /**
     * @flow strict-local
     */

    import type {PressEvent} from '../Types/CoreEventTypes';
    import Platform from '../Utilities/Platform';

    export type AlertType = 'default' | 'plain-text' | 'secure-text';

    export type Buttons = Array<{
      text?: string,
      onPress?: ?(event?: PressEvent) => mixed,
      ...
    }>;

    type Options = {|
      +cancelable?: ?boolean,
    |};

    class Alert {
      static alert(
        title: ?string,
        message?: ?string,
        buttons?: Buttons,
        options?: Options,
      ): void {
        if (Platform.OS === 'ios') {
          Alert.prompt(title, message, buttons);
        } else if (Platform.OS === 'android') {
          showDialog(title || '');
        }
      }

      static prompt(title: ?string, message?: ?string, buttons?: ?Buttons): void {
        if (Platform.OS === 'ios') {
          promptIOS(title, message, buttons);
        }
      }
    }

    function showDialog(title: string): void {
      return;
    }

    module.exports = Alert;
    """
)


def test_flow_typed_javascript_is_read_with_the_tsx_grammar() -> None:
    result = chunked(FLOW, "javascript")
    names = {(name, kind, container) for name, kind, container in symbols_of(result) if kind != "property"}
    assert names == {
        ("AlertType", "type", None),
        ("Buttons", "type", None),
        ("Options", "type", None),
        ("Alert", "class", None),
        ("alert", "method", "Alert"),
        ("prompt", "method", "Alert"),
        ("showDialog", "function", None),
    }
    assert spans(result) == [
        (1, 8, "window", None),  # the imports and the one-line `AlertType`
        (10, 14, "type", "Buttons"),
        (16, 18, "type", "Options"),
        (20, 39, "class", "Alert"),
        (41, 43, "function", "showDialog"),
        (45, 45, "window", None),
    ]


def test_javascript_keeps_its_grammar_where_tsx_reads_it_no_better() -> None:
    # `as` is a keyword to TypeScript only; the unfinished expression is an error to both.
    text = "let as = 1;\nfunction add(a, b) {\n  return a + b +;\n}\n"
    chunker = CodeChunker(GRAMMARS["javascript"], text, LineIndex(text), 1_500, fallback=GRAMMARS["tsx"])
    assert chunker.grammar.name == "javascript"
    assert ("add", "function", None) in symbols_of(chunk_source("a.js", text, "javascript"))


TYPESCRIPT = src(
    """
    export interface Shape {
      area(): number;
      name: string;
    }

    export type Point = {
      x: number;
      y: number;
    };

    enum Color {
      Red,
      Green,
    }

    namespace Geometry {
      export function distance(a: Point, b: Point): number {
        return Math.hypot(a.x - b.x, a.y - b.y);
      }
    }

    abstract class Base<T> implements Shape {
      private readonly id: number = 1;
      abstract area(): number;
      @memo()
      get name(): string {
        return "base";
      }
    }
    """
)


@pytest.mark.parametrize("language", ["typescript", "javascript"])
def test_a_module_constant_object_names_its_methods(language: str) -> None:
    # RxJS's providers: `export const animationFrameProvider = { schedule(callback) {…}, … }`
    result = chunked(
        src(
            """
            export const timerProvider = {
                schedule(callback) {
                    const id = setTimeout(callback);
                    return () => clearTimeout(id);
                },
                cancel: function (id) {
                    clearTimeout(id);
                },
            };
            let state = { reset() { return 0; } };
            """
        ),
        language,
    )
    assert symbols_of(result) == {
        ("timerProvider", "constant", None),
        ("schedule", "method", "timerProvider"),
        ("cancel", "method", "timerProvider"),
        ("reset", "method", None),  # a `let` may be reassigned: no container of its methods
    }
    schedule = chunk_at(result, 2)
    assert (schedule.symbol, schedule.header) == ("timerProvider.schedule", "timer provider schedule")


@pytest.mark.parametrize("language", ["typescript", "javascript"])
def test_a_class_field_holding_a_function_is_a_method(language: str) -> None:
    # TanStack Form's FieldApi binds its methods as fields: `setValue = (updater, options) => {…}`
    result = chunked(
        src(
            """
            class FieldApi {
                value = 0
                setValue = (updater, options) => {
                    this.value = updater(this.value)
                    this.validate("change", options)
                }
                static create = function (options) {
                    return new FieldApi(options)
                }
                validate(cause, options) {
                    return cause
                }
            }
            """
        ),
        language,
        max_chars=150,
    )
    assert symbols_of(result) == {
        ("FieldApi", "class", None),
        ("value", "field", "FieldApi"),
        ("setValue", "method", "FieldApi"),
        ("create", "method", "FieldApi"),
        ("validate", "method", "FieldApi"),
    }
    set_value = chunk_at(result, 3)
    assert (set_value.start_line, set_value.kind, set_value.symbol) == (3, "method", "FieldApi.setValue")
    assert set_value.header.startswith("field api set value")


@pytest.mark.parametrize("language", ["typescript", "javascript"])
def test_a_function_assigned_to_a_property_is_its_owners(language: str) -> None:
    result = chunked(
        src(
            """
            function Emitter() {
                this.events = {};
            }
            Emitter.prototype.on = function (name, fn) {
                return this;
            };
            Emitter.create = function () {
                return new Emitter();
            };
            editHandlers.keydown = (view, event) => {
                return view;
            };
            exports.helper = function () {
                return 1;
            };
            function mixin(target, options = {}) {
                target.emit = function (name) {
                    return name;
                };
                editHandlers.keyup = () => options;
            }
            function* steps(plan) {
                plan.next = function () {};
            }
            """
        ),
        language,
    )
    assert symbols_of(result) == {
        ("Emitter", "function", None),
        ("on", "method", "Emitter"),  # as tsserver reads a prototype's method
        ("create", "method", "Emitter"),
        ("keydown", "function", "editHandlers"),  # ProseMirror's table of handlers
        ("helper", "function", None),  # `exports` is nobody a reader would name
        ("mixin", "function", None),
        ("emit", "function", "mixin"),  # set on a parameter: what the function builds
        ("keyup", "function", "mixin.editHandlers"),
        ("steps", "function", None),
        ("next", "function", "steps"),
    }
    assert chunk_at(result, 5).symbol == "Emitter.on"


@pytest.mark.parametrize("language", ["typescript", "javascript"])
def test_a_module_const_made_by_a_call_is_a_definition(language: str) -> None:
    result = chunked(
        src(
            """
            const ts = require("typescript");
            export const Button = forwardRef((props, ref) => {
                const label = props.label;
                return render(label, ref);
            });
            export const ZodString = $constructor("ZodString", (inst, def) => {
                inst.min = (n) => inst.check(minLength(n));
            });
            const retries = Number(process.env.RETRIES);
            export const asyncScheduler = new AsyncScheduler(AsyncAction);
            const removedFormatters = new Set([
                "checkstyle",
            ]);
            """
        ),
        language,
    )
    # React's components and zod's types were no symbols (not UPPER_CASE, not a function value)
    assert symbols_of(result) == {
        ("Button", "constant", None),
        ("ZodString", "constant", None),
        ("min", "function", "ZodString"),  # zod's methods, set on the instance it builds
        ("retries", "constant", None),
        ("asyncScheduler", "constant", None),  # made by `new`: a symbol, never a chunk
        ("removedFormatters", "constant", None),
    }
    assert [(c.start_line, c.kind, c.symbol) for c in result.chunks] == [
        (1, "window", None),  # a `require` is an import, not a definition
        (2, "constant", "Button"),
        (6, "constant", "ZodString"),
        (9, "window", None),  # `new Set([…])` is data: no chunk of its own
    ]


@pytest.mark.parametrize("language", ["typescript", "javascript"])
def test_an_exported_module_const_is_a_symbol_whatever_its_case(language: str) -> None:
    result = chunked(
        src(
            """
            export const version = "7.8.1";
            export const asap = asapScheduler;
            export let counter = 0;
            const internal = 2;
            export const handler = () => internal;
            """
        ),
        language,
    )
    # What a module exports is its API, as tsserver lists it; a `let` is no constant, and what
    # the module keeps to itself stays out unless UPPER_CASE (or a function, object, call …).
    assert symbols_of(result) == {
        ("version", "constant", None),
        ("asap", "constant", None),
        ("handler", "function", None),
    }
    assert [c.kind for c in result.chunks] == ["window"]


def test_a_typescript_namespace_lists_its_exported_consts() -> None:
    result = chunked(
        src('export namespace ts {\n    export const version = "5.0";\n    const hidden = 1;\n}\n'),
        "typescript",
    )
    assert symbols_of(result) == {("ts", "namespace", None), ("version", "constant", "ts")}


def test_ambient_constants_and_variables_are_symbols() -> None:
    # TanStack Router's `declare const lanePhase: unique symbol` and a `.d.ts`'s globals, as
    # tsserver lists them: no symbol before.
    text = src(
        """
        declare const lanePhase: unique symbol
        export declare const GLOBAL_SEROVAL: '$R'
        declare var process: NodeProcess, onerror: ErrorHandler;
        declare let counter: number;
        declare function greet(name: string): void;
        """
    )
    assert symbols_of(chunked(text, "typescript")) == {
        ("lanePhase", "constant", None),
        ("GLOBAL_SEROVAL", "constant", None),
        ("process", "variable", None),
        ("onerror", "variable", None),
        ("counter", "variable", None),
        ("greet", "function", None),
    }


@pytest.mark.parametrize("language", ["javascript", "typescript", "tsx"])
def test_an_anonymous_default_export_is_named_default(language: str) -> None:
    # As tsserver lists it; before, its lines were a window with no name and no symbol.
    function = chunked(
        src(
            """
            /** Parses the options. */
            export default function (options) {
              const parsed = parse(options)
              return parsed
            }
            """
        ),
        language,
    )
    assert spans(function) == [(1, 5, "function", "default")]
    assert (symbol(function, "default").name_line, symbol(function, "default").name_col) == (2, 7)
    klass = chunked(
        src(
            """
            export default class {
              run() {
                return 1
              }
            }
            """
        ),
        language,
    )
    assert symbols_of(klass) == {("default", "class", None), ("run", "method", "default")}
    assert klass.chunks[0].header == "default: run"
    # A named default export keeps its name; a default export of a value is no definition.
    named = chunked("export default function parse(options) {\n  return options\n}\n", language)
    assert symbols_of(named) == {("parse", "function", None)}
    assert symbols_of(chunked("export default parse\n", language)) == set()


@pytest.mark.parametrize("language", ["typescript", "tsx"])
def test_typescript(language: str) -> None:
    result = chunked(TYPESCRIPT, language)
    assert symbols_of(result) == {
        ("Shape", "interface", None),
        ("area", "method", "Shape"),
        ("name", "property", "Shape"),
        ("Point", "type", None),
        ("x", "property", "Point"),
        ("y", "property", "Point"),
        ("Color", "enum", None),
        ("Red", "enum_member", "Color"),
        ("Green", "enum_member", "Color"),
        ("Geometry", "namespace", None),
        ("distance", "function", "Geometry"),
        ("Base", "class", None),
        ("id", "field", "Base"),
        ("area", "method", "Base"),
        ("name", "method", "Base"),
    }
    assert [(c.start_line, c.kind, c.symbol) for c in result.chunks] == [
        (1, "interface", "Shape"),
        (6, "type", "Point"),
        (11, "enum", "Color"),
        (16, "namespace", "Geometry"),
        (22, "class", "Base"),
    ]


def test_tsx_parses_jsx() -> None:
    text = src(
        """
        export function App(props: Props) {
          return <div className="app">{props.children}</div>;
        }
        """
    )
    result = chunked(text, "tsx")
    assert spans(result) == [(1, 3, "function", "App")]


# Effect 4's shapes: variance annotations (TypeScript 4.7) and a "dual" API, a type literal of
# generic call signatures one per line. tree-sitter-typescript 0.23 reads both as errors, and
# here its recovery swallowed `dual` and `memoize`: symbols named `switch`, `case` and `return`.
TYPESCRIPT_EFFECT = src(
    """
    export interface Cache<in out Key, out A = never> {
      get(key: Key): A
    }

    export const dual: {
      <DataLast extends (...args: Array<any>) => any, DataFirst extends (...args: any) => any>(
        arity: number
      ): DataLast
      /** Data-first. */
      <DataLast extends (...args: Array<any>) => any, DataFirst extends (...args: any) => any>(
        isDataFirst: (args: IArguments) => boolean
      ): DataLast
    } = function(arity, body) {
      switch (arity) {
        case 0:
          throw new RangeError(`Invalid arity ${arity}`)
        default:
          return function() {
            return body
          }
      }
    }

    export function memoize<A extends object, O>(f: (a: A) => O): (a: A) => O {
      const cache = new WeakMap<object, O>()
      return (a) => cache.get(a) ?? f(a)
    }

    export class Ref<in out A> {
      modify(f: (a: A) => A): void {
        this.value = f(this.value)
      }
      get(): A {
        return this.value
      }
    }
    """
)


@pytest.mark.parametrize("language", ["typescript", "tsx"])
def test_typescript_variance_and_generic_call_signatures_are_read(language: str) -> None:
    result = chunked(TYPESCRIPT_EFFECT, language)
    assert symbols_of(result) == {
        ("Cache", "interface", None),
        ("get", "method", "Cache"),
        ("dual", "function", None),
        ("memoize", "function", None),
        ("Ref", "class", None),
        ("modify", "method", "Ref"),
        ("get", "method", "Ref"),
    }
    assert spans(result) == [
        (1, 3, "interface", "Cache"),
        (5, 22, "function", "dual"),
        (24, 27, "function", "memoize"),
        (29, 36, "class", "Ref"),
    ]
    # Names and signatures are read from the file as written, not from what the parser saw.
    split = chunked(TYPESCRIPT_EFFECT, language, max_chars=120)
    method = next(c for c in split.chunks if c.symbol == "Ref.get")
    assert "class Ref<in out A>" in method.header


def test_an_escaped_backtick_in_a_template_literal_type_does_not_end_the_file() -> None:
    # Effect's Schema.ts (19,744 lines) parsed as one error node after such a type: no symbol.
    text = src(
        r"""
        type MissingSelf<Usage extends string> =
          `Missing \`Self\` generic - use \`class Self extends ${Usage}<Self>(...)\``

        export function makeClass(identifier: string): string {
          return `\\${identifier}`
        }
        """
    )
    result = chunked(text, "typescript")
    assert symbols_of(result) == {("MissingSelf", "type", None), ("makeClass", "function", None)}
    assert [c.kind for c in result.chunks] == ["type", "function"]


def test_a_typescript_repair_that_adds_errors_is_not_kept() -> None:
    # `a⏎  <b, c>(d)` is a comparison, not a call signature: a `;` before it would be an error.
    # The file has another error (`let as`), so the repair runs and must give the tree back.
    parser = parser_for(GRAMMARS["typescript"])
    text = b"const ok = a\n  <b, c>(d)\nlet as = 1\n"
    tree = parser.parse(text)
    assert tree.root_node.has_error
    assert repair_typescript(parser, text, tree) is tree


def test_a_typescript_repair_scans_comment_runs_in_linear_time() -> None:
    # A run of `/` after a comma once read as any number of `//` comments: exponential time.
    parser = parser_for(GRAMMARS["typescript"])
    text = b"f(a, " + b"/" * 400 + b"\n) <in T>\n" + b"// x\n" * 2000 + b"  <A>(a: A)\n"
    tree = repair_typescript(parser, text, parser.parse(text))
    assert tree.root_node.end_byte == len(text)


# ---- Go -----------------------------------------------------------------------------------

GO = src(
    """
    package server

    import "net/http"

    // Server serves.
    type Server struct {
        Addr    string
        handler http.Handler
    }

    type Handler interface {
        Serve(w http.ResponseWriter) error
    }

    const DefaultPort = 8080

    // Start starts the server.
    func (s *Server) Start() error {
        return nil
    }

    func New[T any](addr string) *Server {
        return &Server{Addr: addr}
    }
    """
)


def test_go() -> None:
    result = chunked(GO, "go")
    assert symbols_of(result) == {
        ("Server", "struct", None),
        ("Addr", "field", "Server"),
        ("handler", "field", "Server"),
        ("Handler", "interface", None),
        ("Serve", "method", "Handler"),
        ("DefaultPort", "constant", None),
        ("Start", "method", "Server"),  # container = receiver type, pointer stripped
        ("New", "function", None),
    }
    assert spans(result) == [
        (1, 3, "imports", None),
        (5, 9, "struct", "Server"),
        (11, 13, "interface", "Handler"),
        (15, 15, "window", None),
        (17, 20, "method", "Server.Start"),
        (22, 24, "function", "New"),
    ]


def test_go_package_variables_are_symbols_grouped_or_not() -> None:
    # os/error.go declares its errors in a `var ( … )` group: each is a symbol, as gopls lists them
    result = chunked(
        src(
            """
            package os

            var ErrProcessDone = errors.New("os: process already finished")

            var (
                ErrInvalid = fs.ErrInvalid // "invalid argument"
                stdin, stdout = 0, 1
            )

            func f() {
                var local = 1
            }
            """
        ),
        "go",
    )
    assert {s for s in symbols_of(result) if s[1] == "variable"} == {
        ("ErrProcessDone", "variable", None),
        ("ErrInvalid", "variable", None),
        ("stdin", "variable", None),
        ("stdout", "variable", None),
    }


def test_go_embedded_fields_are_named_by_their_type() -> None:
    result = chunked(
        src(
            """
            package os

            type File struct {
                *file
                sync.Mutex
                list.List[int]
                name, path string
            }
            """
        ),
        "go",
    )
    assert {s for s in symbols_of(result) if s[1] == "field"} == {
        ("file", "field", "File"),
        ("Mutex", "field", "File"),
        ("List", "field", "File"),
        ("name", "field", "File"),
        ("path", "field", "File"),
    }


# ---- Rust ---------------------------------------------------------------------------------

RUST = src(
    """
    use std::fmt;

    /// A point.
    #[derive(Debug, Clone)]
    pub struct Point<T> {
        pub x: T,
        y: T,
    }

    pub trait Shape {
        fn area(&self) -> f64;
    }

    impl<T: Copy> Point<T> {
        pub fn new(x: T, y: T) -> Self {
            Point { x, y }
        }
    }

    impl fmt::Display for Point<i32> {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "({}, {})", self.x, self.y)
        }
    }

    mod geometry {
        pub fn origin() -> (i32, i32) {
            (0, 0)
        }
    }

    macro_rules! square {
        ($x:expr) => { $x * $x };
    }

    const LIMIT: u32 = 10;
    """
)


def test_rust() -> None:
    result = chunked(RUST, "rust")
    assert symbols_of(result) == {
        ("Point", "struct", None),
        ("x", "field", "Point"),
        ("y", "field", "Point"),
        ("Shape", "trait", None),
        ("area", "method", "Shape"),
        ("new", "method", "Point"),  # impl Point<T> → container Point
        ("fmt", "method", "Point"),  # impl Display for Point<i32> → container Point
        ("geometry", "module", None),
        ("origin", "function", "geometry"),
        ("square", "macro", None),
        ("LIMIT", "constant", None),
    }
    assert spans(result) == [
        (1, 1, "imports", None),
        (3, 8, "struct", "Point"),  # doc comment and attribute belong to it
        (10, 12, "trait", "Shape"),
        (14, 18, "impl", "Point"),
        (20, 24, "impl", "Point"),
        (26, 30, "module", "geometry"),
        (32, 34, "macro", "square"),
        (36, 36, "window", None),
    ]


def test_a_rust_traits_associated_type_is_its_symbol() -> None:
    result = chunked(
        src(
            """
            pub trait Iterator {
                type Item;
                fn next(&mut self) -> Option<Self::Item>;
            }
            impl Iterator for Counter {
                type Item = u32;
                fn next(&mut self) -> Option<u32> { None }
            }
            """
        ),
        "rust",
    )
    # As rust-analyzer lists them: the trait's `type Item;` and the impl's `type Item = u32;`.
    assert {(s.name, s.kind, s.container, s.start_line) for s in result.symbols if s.name == "Item"} == {
        ("Item", "type", "Iterator", 2),
        ("Item", "type", "Counter", 6),
    }
    assert [(c.start_line, c.kind) for c in result.chunks][:1] == [(1, "trait")]


def test_rust_big_impl_is_split_per_method_with_impl_header() -> None:
    result = chunked(RUST, "rust", max_chars=90)
    fmt_chunk = chunk_at(result, 21)
    assert (fmt_chunk.kind, fmt_chunk.symbol) == ("method", "Point.fmt")
    assert fmt_chunk.header == "point format\nimpl fmt::Display for Point<i32>"


RUST_ITEM_MACROS = src(
    """
    use std::io;

    cfg_rt! {
        /// Spawns a new asynchronous task.
        pub fn spawn<F>(future: F) -> JoinHandle<F::Output> {
            let id = task::Id::next();
            spawn_inner(future, id)
        }
    }

    impl Runtime {
        cfg_metrics! {
            pub fn metrics(&self) -> RuntimeMetrics {
                self.handle.metrics()
            }
        }
    }

    cfg_if::cfg_if! {
        if #[cfg(unix)] {
            mod unix;
        } else {
            fn other() -> u32 {
                1
            }
        }
    }

    impl_from! { u8, u16 }

    fn main() {
        tokio::select! {
            fn inner() {}
        }
    }
    """
)


def test_rust_items_inside_a_macro_invocation_are_definitions() -> None:
    # tokio's `cfg_rt! { … }`, in an impl too, and cfg_if's branches: the items are read where
    # they stand. A macro whose body is not items, or that is in a function body, is left alone.
    result = chunked(RUST_ITEM_MACROS, "rust")
    assert symbols_of(result) == {
        ("spawn", "function", None),
        ("metrics", "method", "Runtime"),
        ("other", "function", None),
        ("main", "function", None),
    }
    spawn = next(c for c in result.chunks if c.symbol == "spawn")
    assert (spawn.kind, spawn.end_line) == ("function", 9)
    runtime = next(c for c in result.chunks if c.symbol == "Runtime")
    assert runtime.header.splitlines()[0] == "runtime: metrics"
    assert symbol(result, "other").name_line == 23
    # Nested invocations are opened too; the line and column of a name do not move.
    nested = chunked("cfg_net! {\n    cfg_unix! {\n        pub fn bind() {}\n    }\n}\n", "rust")
    assert [(s.name, s.name_line, s.name_col) for s in nested.symbols] == [("bind", 3, 15)]


# ---- Java ---------------------------------------------------------------------------------

JAVA = src(
    """
    package com.example;

    /** A repository. */
    @Repository
    public class UserRepository implements Repo<User> {
        private static final int LIMIT = 10;
        private final Map<String, User> users = new HashMap<>();

        public UserRepository() {
            super();
        }

        @Override
        public User find(String id) {
            return users.get(id);
        }

        interface Listener {
            void changed(User user);
        }

        enum State { OPEN, CLOSED }
    }
    """
)


def test_java() -> None:
    result = chunked(JAVA, "java")
    assert symbols_of(result) == {
        ("UserRepository", "class", None),
        ("LIMIT", "field", "UserRepository"),
        ("users", "field", "UserRepository"),
        ("UserRepository", "constructor", "UserRepository"),
        ("find", "method", "UserRepository"),
        ("Listener", "interface", "UserRepository"),
        ("changed", "method", "UserRepository.Listener"),
        ("State", "enum", "UserRepository"),
        ("OPEN", "enum_member", "UserRepository.State"),
        ("CLOSED", "enum_member", "UserRepository.State"),
    }
    assert spans(result)[0] == (1, 1, "imports", None)
    small = chunked(JAVA, "java", max_chars=120)
    find = chunk_at(small, 14)
    assert (find.start_line, find.kind, find.symbol) == (13, "method", "UserRepository.find")
    assert find.header.split("\n") == [
        "user repository find",
        "@Repository public class UserRepository implements Repo<User>",
    ]


# ---- C / C++ ------------------------------------------------------------------------------

C = src(
    """
    #include <stdio.h>

    #define BUFSIZE 512
    #define MAX(a, b) ((a) > (b) ? (a) : (b))

    /* A point. */
    struct point {
        int x;
        int y;
    };

    typedef struct {
        int w, h;
    } size_t2;

    enum color { RED, GREEN };

    typedef int (*callback)(void *);

    static int *lookup(const char *key, int n)
    {
        return NULL;
    }
    """
)


def test_c() -> None:
    result = chunked(C, "c")
    assert symbols_of(result) == {
        ("BUFSIZE", "macro", None),
        ("MAX", "macro", None),
        ("point", "struct", None),
        ("x", "field", "point"),
        ("y", "field", "point"),
        ("size_t2", "type", None),
        ("w", "field", "size_t2"),  # an unnamed struct's fields are its typedef's
        ("h", "field", "size_t2"),
        ("color", "enum", None),
        ("RED", "enum_member", "color"),
        ("GREEN", "enum_member", "color"),
        ("callback", "type", None),
        ("lookup", "function", None),
    }
    assert spans(result) == [
        (1, 4, "window", None),
        (6, 10, "struct", "point"),
        (12, 14, "struct", "size_t2"),  # typedef struct {…} name: one chunk, named by typedef
        (16, 18, "window", None),
        (20, 23, "function", "lookup"),
    ]


CPP = src(
    """
    namespace net::http {

    template <typename T>
    class Client : public Base {
     public:
      Client();
      ~Client() {}
      int send(const T& request) const;
     private:
      int fd_;
    };

    }  // namespace net::http

    int net::http::Client::send(const T& request) const {
      return fd_;
    }

    Client::Client() : fd_(-1) {
    }

    namespace {
    int helper() {
      return 1;
    }
    }
    """
)


def test_cpp() -> None:
    result = chunked(CPP, "cpp")
    assert symbols_of(result) == {
        ("net::http", "namespace", None),
        ("Client", "class", "net.http"),
        ("Client", "constructor", "net.http.Client"),
        ("~Client", "method", "net.http.Client"),
        ("send", "method", "net.http.Client"),
        ("fd_", "field", "net.http.Client"),
        ("send", "method", "net.http.Client"),  # out-of-line definition, same container
        ("Client", "constructor", "Client"),
        ("helper", "function", None),
    }
    out_of_line = [s for s in result.symbols if s.name == "send" and s.start_line == 15]
    assert len(out_of_line) == 1
    assert spans(result)[-3:] == [
        (15, 17, "method", "net.http.Client.send"),
        (19, 20, "constructor", "Client.Client"),
        (22, 26, "namespace", None),
    ]


def test_c_header_is_read_by_whichever_grammar_leaves_less_in_errors() -> None:
    # C code naming a parameter `new` is an error to C++; C reads all of it but the macro loop.
    # Neither grammar reads it whole, so the one with less of the file in error nodes is kept.
    text = src(
        """
        struct list_node {
          struct list_node *next;
        };

        static inline struct list_node *
        list_insert (struct list_node *head, struct list_node *new)
        {
          new->next = head->next;
          head->next = new;
          return new;
        }

        #define LIST_FOR_EACH(pos, head) for (pos = (head)->next; pos; pos = pos->next)

        static inline int
        list_count (const struct list_node *head)
        {
          int n = 0;
          const struct list_node *pos;
          LIST_FOR_EACH (pos, head) n++;
          return n;
        }
        """
    )
    cpp, c = GRAMMARS["cpp"], GRAMMARS["c"]
    for grammar in (cpp, c):
        assert parser_for(grammar).parse(text.encode()).root_node.has_error
    chunker = CodeChunker(cpp, text, LineIndex(text), DEFAULT_MAX_CHARS, fallback=c)
    assert chunker.grammar.name == "c"
    assert ("list_insert", "function", None) in symbols_of(chunk_source("include/list.h", text, "c"))


def test_c_header_that_is_cpp_falls_back_to_the_cpp_grammar() -> None:
    text = "class Widget {\n public:\n  void draw();\n};\n"
    result = chunk_source("include/widget.h", text, "c")
    check_invariants(text, result, DEFAULT_MAX_CHARS)
    assert ("Widget", "class", None) in symbols_of(result)
    assert ("draw", "method", "Widget") in symbols_of(result)


# ---- C / C++ macros tree-sitter cannot read (real shapes: glibc 2.36, JUCE 7) --------------

GLIBC = (
    src(
        """
    #include <string.h>

    __libc_tsd_define (, const uint16_t *, CTYPE_B)

    /* Return the length of the null-terminated string STR.  */
    """
    )
    + GLIBC_STRLEN
    + "\n"
    + src(
        """
    void __attribute__ ((noreturn)) attribute_hidden
    __stack_chk_fail_local (void)
    {
      __chk_fail ();
    }

    FLOAT
    M_DECL_FUNC (__cabs) (CFLOAT z)
    {
      return z;
    }
    """
    )
)


def test_c_glibc_attribute_and_alias_macros() -> None:
    result = chunked(GLIBC, "c")
    functions = {(s.name, s.start_line, s.end_line) for s in result.symbols if s.kind == "function"}
    assert functions == {
        ("__strlen", 6, 11),  # `attribute_hidden` between the return type and the name
        ("__stack_chk_fail_local", 15, 19),  # not glued to the alias lines above it
        ("M_DECL_FUNC", 21, 25),  # a return type alone on its line is not taken for a macro
    }
    # its comment above and the alias lines right below it belong to its chunk
    assert spans(result)[1:] == [
        (5, 13, "function", "__strlen"),
        (15, 19, "function", "__stack_chk_fail_local"),
        (21, 25, "function", "M_DECL_FUNC"),
    ]


JUCE = src(
    """
    namespace juce
    {

    /** A text string. */
    class JUCE_API  String  final
    {
    public:
        /** Creates an empty string. */
        String() noexcept;

        /** Appends another string at the end of this one. */
        String& append (const String& other, int maxCharsToTake);

        int length() const noexcept
        {
            return 0;
        }

    private:
        JUCE_DECLARE_NON_COPYABLE_WITH_LEAK_DETECTOR (String)
    };

    String& String::trimEnd()
    {
        return *this;
    }

    } // namespace juce
    """
)


def test_cpp_juce_api_class_and_class_macros() -> None:
    result = chunked(JUCE, "cpp")
    assert symbols_of(result) == {
        ("juce", "namespace", None),
        ("String", "class", "juce"),  # `class JUCE_API String`: a class, not a function
        ("String", "constructor", "juce.String"),
        ("append", "method", "juce.String"),  # returns a reference
        ("length", "method", "juce.String"),
        ("trimEnd", "method", "juce.String"),  # `String& String::trimEnd()` out of line
    }
    # a method chunk of a split class names its class
    small = chunked(JUCE, "cpp", max_chars=160)
    length = chunk_at(small, 15)
    assert (length.kind, length.symbol) == ("method", "juce.String.length")
    assert "class String final" in length.header
    trim = chunk_at(small, 23)
    assert (trim.start_line, trim.symbol) == (23, "juce.String.trimEnd")


# JUCE's juce_AudioParameterBool.h, cut down: conversion operators have no name node in the
# tree (`operator_cast`), so they were no symbols and their chunk was named after the class.
JUCE_CONVERSIONS = src(
    """
    namespace juce
    {
    class JUCE_API AudioParameterBool : public RangedAudioParameter
    {
    public:
        /** Returns the parameter's current boolean value. */
        bool get() const noexcept          { return value >= 0.5f; }

        /** Returns the parameter's current boolean value. */
        operator bool() const noexcept     { return get(); }

        /** Changes the parameter's current value to a new boolean. */
        AudioParameterBool& operator= (bool newValue);

        operator const char*() const;
        explicit operator std::function<void (int)>() const;

    private:
        std::atomic<float> value;
    };

    AudioParameterBool::operator const char*() const  { return get() ? "on" : "off"; }
    } // namespace juce
    """
)


def test_cpp_conversion_operators_are_named_by_their_target_type() -> None:
    result = chunked(JUCE_CONVERSIONS, "cpp")
    owner = "juce.AudioParameterBool"
    assert {s for s in symbols_of(result) if s[0].startswith("operator")} == {
        ("operator bool", "method", owner),
        ("operator=", "method", owner),
        ("operator const char*", "method", owner),  # declared in the class and defined outside
        ("operator std::function<void (int)>", "method", owner),  # not cut at the inner `(int)`
    }
    defined = [s for s in result.symbols if s.name == "operator const char*"]
    assert sorted(s.start_line for s in defined) == [15, 22]
    assert (defined[0].name_line, defined[0].name_col) == (15, 4)  # where `operator` is written
    small = chunked(JUCE_CONVERSIONS, "cpp", max_chars=160)
    assert chunk_at(small, 10).symbol == f"{owner}.operator bool"


MEMBER_TEMPLATES = src(
    """
    namespace juce
    {
    class JUCE_API ValueTree
    {
    public:
        template <typename ElementComparator>
        void sort (ElementComparator& comparator, UndoManager* undoManager, bool retainOrder);

        template <typename Type> static Type* create();
        template <typename Type> Type& reference();
        template <typename Type> operator Type() const;

        int getNumChildren() const noexcept;
    };

    template <typename ElementComparator>
    void ValueTree::sort (ElementComparator& comparator, UndoManager* undoManager, bool retainOrder)
    {
        sortChildren (comparator, undoManager, retainOrder);
    }
    } // namespace juce
    """
)


def test_cpp_member_template_declarations_are_symbols_like_other_member_declarations() -> None:
    result = chunked(MEMBER_TEMPLATES, "cpp")
    owner = "juce.ValueTree"
    assert {s for s in symbols_of(result) if s[2] == owner} == {
        ("sort", "method", owner),  # declared in the class, and defined below it
        ("create", "method", owner),
        ("reference", "method", owner),
        ("operator Type", "method", owner),
        ("getNumChildren", "method", owner),
    }
    declared = min((s for s in result.symbols if s.name == "sort"), key=lambda s: s.start_line)
    assert (declared.start_line, declared.end_line, declared.name_line) == (6, 7, 7)  # with its `template`
    # the class-body window lists them as it lists the plain declarations
    window = chunk_at(chunked(MEMBER_TEMPLATES, "cpp", max_chars=300), 10)
    assert "declares" in window.header and "create" in window.header and "get num children" in window.header


def test_enum_members_are_symbols_of_their_enum_and_never_chunks() -> None:
    java = chunked(
        src(
            """
            enum Planet {
                MERCURY(3.303e+23),
                EARTH(5.976e+24) {
                    double mass() { return 1.0; }
                };
                private final double mass;
                Planet(double mass) { this.mass = mass; }
            }
            """
        ),
        "java",
    )
    members = {s for s in symbols_of(java) if s[1] == "enum_member"}
    assert members == {("MERCURY", "enum_member", "Planet"), ("EARTH", "enum_member", "Planet")}
    cpp = chunked(src("namespace audio { enum class Mode : int { Fast, Slow = 4 }; }\n"), "cpp")
    assert {s for s in symbols_of(cpp) if s[1] == "enum_member"} == {
        ("Fast", "enum_member", "audio.Mode"),
        ("Slow", "enum_member", "audio.Mode"),
    }
    # a Rust struct variant's fields belong to the variant, as rust-analyzer lists them
    rust = chunked(src("pub enum Event {\n    Key { code: u32 },\n    Quit,\n}\n"), "rust")
    assert symbols_of(rust) == {
        ("Event", "enum", None),
        ("Key", "enum_member", "Event"),
        ("code", "field", "Event.Key"),
        ("Quit", "enum_member", "Event"),
    }
    assert all(c.kind != "enum_member" for c in [*java.chunks, *cpp.chunks, *rust.chunks])


def test_java_record_components_are_fields_of_their_record() -> None:
    result = chunked(
        src(
            """
            public record Range(int lo, int hi) {
                public Range {
                    if (lo > hi) throw new IllegalArgumentException();
                }
                int length() { return hi - lo; }
            }
            """
        ),
        "java",
    )
    assert symbols_of(result) == {
        ("Range", "class", None),
        ("lo", "field", "Range"),
        ("hi", "field", "Range"),
        ("Range", "constructor", "Range"),
        ("length", "method", "Range"),
    }


def test_c_file_scope_variables_are_symbols_and_prototypes_are_not() -> None:
    c = chunked(
        src(
            """
            static const char *names[] = {"a", "b"};
            int count = 0, *last;
            extern int errno_value;
            int add (int a, int b);
            char *dup (const char *s);
            struct point { int x; };
            int main (void) { int local = 1; return local; }
            """
        ),
        "c",
    )
    assert {s for s in symbols_of(c) if s[1] == "variable"} == {
        ("names", "variable", None),
        ("count", "variable", None),
        ("last", "variable", None),
        ("errno_value", "variable", None),
    }
    # in C++ also in a namespace, and a static member defined outside its class
    cpp = chunked(
        src(
            """
            namespace io {
                static const char* const separator = "/";
                const int Key::spaceKey = ' ';
                void flush();
                class Stream;
            }
            """
        ),
        "cpp",
    )
    assert {s for s in symbols_of(cpp) if s[1] == "variable"} == {
        ("separator", "variable", "io"),
        ("spaceKey", "variable", "io.Key"),
    }


def test_c_typedef_of_an_unnamed_struct_holds_its_fields() -> None:
    result = chunked(
        src(
            """
            typedef struct {
                int x;
                int y;
            } point_t;
            typedef enum { RED, GREEN } color_t;
            """
        ),
        "c",
    )
    assert symbols_of(result) == {
        ("point_t", "type", None),
        ("x", "field", "point_t"),  # as clangd lists them; they had no container
        ("y", "field", "point_t"),
        ("color_t", "type", None),
        ("RED", "enum_member", "color_t"),
        ("GREEN", "enum_member", "color_t"),
    }
    first = result.chunks[0]
    assert (first.start_line, first.kind, first.symbol) == (1, "struct", "point_t")


def test_c_header_with_juce_api_is_read_as_cpp() -> None:
    result = chunk_source("juce_core/text/juce_String.h", JUCE, "c")
    check_invariants(JUCE, result, DEFAULT_MAX_CHARS)
    assert ("String", "class", "juce") in symbols_of(result)
    assert ("append", "method", "juce.String") in symbols_of(result)


# JUCE 7's juce_InterprocessConnection.h, abridged: a documented class body of one-line members,
# prototypes, inline definitions and pure virtual callbacks, with `//====` rulers.
JUCE_CONNECTION = src(
    """
    namespace juce
    {

    class JUCE_API  InterprocessConnection
    {
    public:
        //==============================================================================
        /** Tries to connect this object to a socket. */
        bool connectToSocket (const String& hostName, int portNumber, int timeOutMillisecs);

        /** Disconnects and closes any currently-open sockets or pipes. */
        void disconnect (int timeoutMs = -1);

        /** True if a socket or pipe is currently active. */
        bool isConnected() const;

        /** Returns the socket that this connection is using (or nullptr if it uses a pipe). */
        StreamingSocket* getSocket() const noexcept                 { return socket.get(); }

        /** Returns the pipe that this connection is using (or nullptr if it uses a socket). */
        NamedPipe* getPipe() const noexcept                         { return pipe.get(); }

        /** Returns the name of the machine at the other end of this connection. */
        String getConnectedHostName() const;

        //==============================================================================
        /** Called when the connection is first connected. */
        virtual void connectionMade() = 0;

        /** Called when the connection is broken. */
        virtual void connectionLost() = 0;

        /** Called when a message arrives. */
        virtual void messageReceived (const MemoryBlock& message) = 0;

    private:
        std::unique_ptr<StreamingSocket> socket;
        std::unique_ptr<NamedPipe> pipe;
    };

    } // namespace juce
    """
)
CONNECTION_MEMBERS = {
    "connectToSocket": "connect to socket",
    "disconnect": "disconnect",
    "isConnected": "is connected",
    "getSocket": "get socket",
    "getPipe": "get pipe",
    "getConnectedHostName": "get connected host name",
    "connectionMade": "connection made",
    "connectionLost": "connection lost",
    "messageReceived": "message received",
}


def _name_lists(header: str, owner_words: str) -> tuple[set[str], set[str]]:
    """The defined and the declared member names on a header's name line."""
    defined, _, declared = header.splitlines()[0].removeprefix(owner_words).partition("; declares ")
    return set(defined.removeprefix(": ").split(", ")) - {""}, set(declared.split(", ")) - {""}


def test_cpp_class_body_windows_name_the_functions_they_declare() -> None:
    result = chunked(JUCE_CONNECTION, "cpp")
    # a documented inline definition is a chunk of its own, as before
    assert [c.symbol for c in result.chunks if c.kind == "method"] == [
        "juce.InterprocessConnection.getSocket",
        "juce.InterprocessConnection.getPipe",
    ]
    windows = [c for c in result.chunks if c.symbol == "juce.InterprocessConnection"]
    declared: set[str] = set()
    for window in windows:
        defined_names, declared_names = _name_lists(window.header, "juce interprocess connection")
        assert not defined_names
        assert declared_names == {
            words
            for name, words in CONNECTION_MEMBERS.items()
            if f"{name} (" in window.text or f"{name}()" in window.text
        }
        declared |= declared_names
    assert declared == set(CONNECTION_MEMBERS.values()) - {"get socket", "get pipe"}
    line = JUCE_CONNECTION.split("\n").index(
        "    virtual void messageReceived (const MemoryBlock& message) = 0;"
    )
    callback = chunk_at(result, line + 1)
    assert callback.header.startswith("juce interprocess connection; declares ")
    assert "message received" in callback.header and "class InterprocessConnection" in callback.header


def test_cpp_undocumented_class_body_windows_hold_four_one_line_members_at_most() -> None:
    # The same header without its doc comments (blank lines where they were, as the
    # benchmark's copy has them): every member is a one-liner in a window of the body.
    text = "\n".join("" if line.lstrip().startswith("/**") else line for line in JUCE_CONNECTION.split("\n"))
    result = chunked(text, "cpp")
    check_invariants(text, result, DEFAULT_MAX_CHARS)
    windows = [c for c in result.chunks if c.symbol == "juce.InterprocessConnection"]
    listed: set[str] = set()
    for window in windows:
        held = [
            name for name in CONNECTION_MEMBERS if f"{name} (" in window.text or f"{name}()" in window.text
        ]
        assert len(held) <= 4, window.text
        defined_names, declared_names = _name_lists(window.header, "juce interprocess connection")
        # inline definitions are members; prototypes and pure virtual callbacks are declared
        inline = {"getSocket", "getPipe"}
        assert defined_names == {CONNECTION_MEMBERS[n] for n in held if n in inline}
        assert declared_names == {CONNECTION_MEMBERS[n] for n in held if n not in inline}
        listed |= defined_names | declared_names
    assert listed == set(CONNECTION_MEMBERS.values())
    # fits the budget in two windows, cut into three by the member count
    assert len(windows) == 3


# OpenJDK 17's java.util.zip.InflaterInputStream, doc comments removed (as an undocumented
# class would be): overloaded constructors and methods.
JAVA_OVERLOADS = src(
    """
    public class InflaterInputStream extends FilterInputStream {
        protected Inflater inf;
        protected byte[] buf;

        public InflaterInputStream(InputStream in, Inflater inf, int size) {
            super(in);
            if (in == null || inf == null) {
                throw new NullPointerException();
            } else if (size <= 0) {
                throw new IllegalArgumentException("buffer size <= 0");
            }
            this.inf = inf;
            buf = new byte[size];
        }

        public InflaterInputStream(InputStream in, Inflater inf) {
            this(in, inf, 512);
        }

        boolean usesDefaultInflater = false;

        public InflaterInputStream(InputStream in) {
            this(in, in != null ? new Inflater() : null);
            usesDefaultInflater = true;
        }

        public int read() throws IOException {
            ensureOpen();
            return read(singleByteBuf, 0, 1) == -1 ? -1 : Byte.toUnsignedInt(singleByteBuf[0]);
        }

        public int read(byte[] b, int off, int len) throws IOException {
            ensureOpen();
            if (b == null) {
                throw new NullPointerException();
            }
            return inflate(b, off, len);
        }
    }
    """
)


def test_java_overloads_next_to_each_other_are_one_chunk_when_they_fit() -> None:
    lines = JAVA_OVERLOADS.split("\n")

    def line_of(text: str) -> int:
        return next(n for n, line in enumerate(lines, 1) if text in line)

    result = chunked(JAVA_OVERLOADS, "java")
    check_invariants(JAVA_OVERLOADS, result, DEFAULT_MAX_CHARS)
    two = chunk_at(result, line_of("this(in, inf, 512)"))
    assert (two.kind, two.symbol) == ("constructor", "InflaterInputStream.InflaterInputStream")
    assert two.start_line == line_of("Inflater inf, int size)")  # the one it delegates to
    # a field between overloads keeps them apart
    assert chunk_at(result, line_of("public InflaterInputStream(InputStream in) {")) is not two
    read = chunk_at(result, line_of("public int read() throws"))
    assert read.symbol == "InflaterInputStream.read"
    assert read.start_line < line_of("public int read(byte[]") < read.end_line
    # overloads that do not fit the budget together stay chunks of their own
    small = chunked(JAVA_OVERLOADS, "java", max_chars=300)
    assert chunk_at(small, line_of("public int read() throws")).end_line < line_of("public int read(byte[]")


def test_cpp_typedef_struct_windows_name_their_declarations_too() -> None:
    # `typedef struct` is two definitions with one span (the struct and the typedef): the
    # members belong to the one kept.
    text = src(
        """
        typedef struct Point
        {
            int x;
            int y;
            int length() const;
            void moveBy (int dx, int dy);
            bool isOrigin() const;
        } Point;
        """
    )
    result = chunked(text, "cpp", max_chars=60)
    check_invariants(text, result, 60)
    headers = [c.header.splitlines()[0] for c in result.chunks if c.start_line > 1]
    assert headers == ["point; declares length, move by", "point; declares is origin"]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        (
            "typescript",
            """
            export abstract class Shape {
              abstract area(): number

              abstract scale(by: number): Shape

              describe(): string {
                return `a shape of area ${this.area()}`
              }
            }
            """,
            "shape: describe; declares area, scale",
        ),
        (
            "cpp",
            """
            class Counter
            {
            public:
                void increment();
                int value() const { return count; }
            private:
                int count = 0;
            };
            """,
            "counter; declares increment",
        ),
    ],
)
def test_a_container_kept_whole_lists_the_members_it_only_declares(
    lang: str, text: str, expected: str
) -> None:
    # As a window of a longer body does: search lifts such a class above the methods that
    # implement its abstract members (search.fusion.implementations).
    source = src(text)
    result = chunked(source, lang)
    check_invariants(source, result, DEFAULT_MAX_CHARS)
    [whole] = [c for c in result.chunks if c.symbol in ("Shape", "Counter")]
    assert whole.header.splitlines()[0] == expected


def test_an_ifdef_leads_the_function_below_it() -> None:
    # glibc's `#ifdef DONT_NEED_AIO_MISC_COND` between two functions was a result of its own.
    c_text = src(
        """
        int aio_wait(int n)
        {
          return n;
        }

        #ifdef DONT_NEED_AIO_MISC_COND
        static int
        wait_for(int n)
        {
          return n;
        }
        #endif
        """
    )
    assert spans(chunked(c_text, "c")) == [(1, 4, "function", "aio_wait"), (6, 12, "function", "wait_for")]


# ESLint's rules (9.17.0, lib/rules/arrow-parens.js, shortened): a banner above `module.exports =
# {…}`, which is longer than a chunk and so is windowed; `create` is the one definition in it.
_ESLINT_RULE = src(
    """
    "use strict";

    const astUtils = require("./utils/ast-utils");

    function hasBlockBody(node) {
        return node.body.type === "BlockStatement";
    }

    //------------------------------------------------------------------------------
    // Rule Definition
    //------------------------------------------------------------------------------

    /** @type {import('../shared/types').Rule} */
    module.exports = {
        meta: {
            deprecated: true,
            replacedBy: [],
            type: "layout",

            docs: {
                description: "Require parentheses around arrow function arguments",
                recommended: false,
                url: "https://eslint.org/docs/latest/rules/arrow-parens"
            },

            fixable: "code",

            schema: [
                {
                    enum: ["always", "as-needed"]
                },
                {
                    type: "object",
                    properties: {
                        requireForBlockBody: {
                            type: "boolean",
                            default: false
                        }
                    },
                    additionalProperties: false
                }
            ],

            messages: {
                unexpectedParens: "Unexpected parentheses around single function argument.",
                expectedParens: "Expected parentheses around arrow function argument.",

                unexpectedParensInline: "Unexpected parentheses around single function argument.",
                expectedParensBlock: "Expected parentheses around arrow function argument having a body."
            }
        },

        create(context) {
            return { ArrowFunctionExpression: hasBlockBody };
        }
    };
    """
)


def test_a_banner_leads_the_window_of_what_it_heads() -> None:
    # The `// Rule Definition` banner was a window of its own (65 such results in ESLint's lib/):
    # a cut right below it made the most even windows. It now leads the first window of the
    # `module.exports = {…}` it heads.
    result = chunked(_ESLINT_RULE, "javascript")
    banner = _ESLINT_RULE.split("\n").index("// Rule Definition") + 1
    exports = _ESLINT_RULE.split("\n").index("module.exports = {") + 1
    (holding,) = [c for c in result.chunks if c.start_line <= banner <= c.end_line]
    assert holding.start_line == banner - 1 and holding.end_line > exports
    assert not any(
        all(line.lstrip().startswith(("//", "/*", "*")) for line in c.text.split("\n") if line.strip())
        for c in result.chunks
    )


def test_a_run_of_comments_is_cut_where_one_ends() -> None:
    # Only a heading over code leads what follows: a run of one-line `@typedef` imports above a
    # long `@typedef` comment (ESLint's cli-engine.js) stays apart from it, and the tail of a
    # long comment (` * @property …`) is no heading.
    imports = "\n".join(f'/** @typedef {{import("../shared/types").T{n}}} T{n} */' for n in range(4))
    properties = "\n".join(f" * @property {{string}} [option{n}] What option {n} is for." for n in range(24))
    typedef = f"/**\n * The options.\n * @typedef {{Object}} Options\n{properties}\n */"
    text = f"function f(a) {{\n    return a + 1;\n}}\n\n{imports}\n\n{typedef}\nconst x = 1;\n"
    result = chunked(text, "javascript")
    assert [(c.start_line, c.end_line) for c in result.chunks][:3] == [(1, 3), (5, 8), (10, 24)]
