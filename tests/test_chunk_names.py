"""What the embedding model reads first for a chunk: its definition's name in plain words
(``fromFetch`` → ``from fetch``), on real tree-sitter output."""

from __future__ import annotations

import textwrap

from kenning.chunking import chunk_source
from kenning.chunking.header import listed_members, name_line, names_line
from kenning.indexer import embed_input
from kenning.lexical import written_out


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def test_every_definition_chunk_leads_its_model_input_with_its_name_in_words() -> None:
    text = src(
        """
        import { Observable } from './Observable';

        export function fromFetch<T>(input: string): Observable<T> {
          return new Observable<T>((subscriber) => {
            subscriber.complete();
          });
        }

        const x = 1;
        """
    )
    chunks = chunk_source("fetch.ts", text, "typescript").chunks
    fn = next(c for c in chunks if c.symbol == "fromFetch")
    assert fn.header.splitlines()[0] == "from fetch"
    assert embed_input("fetch.ts", fn.header, fn.text).startswith("fetch.ts\nfrom fetch\nexport function")
    # Lines outside any definition get no name line.
    assert all(c.header == "" for c in chunks if c.symbol is None)


def test_a_split_members_name_words_come_before_its_owners_signature() -> None:
    body = "\n".join(f"        let v{i} = self.inner.get({i});" for i in range(40))
    text = (
        "impl<T> Box<T> {\n"
        "    pub fn new_zeroed_slice(len: usize) -> Self {\n" + body + "\n        todo!()\n    }\n\n"
        "    pub fn into_raw(b: Self) -> *mut T {\n" + body + "\n        todo!()\n    }\n"
        "}\n"
    )
    chunks = chunk_source("boxed.rs", text, "rust").chunks
    member = next(c for c in chunks if c.symbol == "Box.into_raw")
    assert member.header.splitlines() == ["box into raw", "impl<T> Box<T>"]


def test_a_container_kept_whole_names_its_members_after_its_own_name() -> None:
    text = src(
        """
        impl<T: ?Sized + PartialOrd> PartialOrd for Rc<T> {
            fn partial_cmp(&self, other: &Rc<T>) -> Option<Ordering> {
                (**self).partial_cmp(&**other)
            }

            fn lt(&self, other: &Rc<T>) -> bool {
                **self < **other
            }
        }

        impl<T> From<T> for Rc<T> {
            fn from(t: T) -> Self {
                Rc::new(t)
            }
        }
        """
    )
    chunks = chunk_source("rc.rs", text, "rust").chunks
    assert [c.header.splitlines() for c in chunks] == [["rc: partial cmp, lt"], ["rc: from"]]
    ts = src(
        """
        export class Action<T> extends Subscription {
          constructor(scheduler: Scheduler) {
            super();
          }
          public scheduleNow(state?: T, delay: number = 0): Subscription {
            return this;
          }
        }
        """
    )
    (chunk,) = chunk_source("Action.ts", ts, "typescript").chunks
    assert chunk.header == "action: constructor, schedule now"


def test_a_members_own_chunk_and_a_container_without_members_get_no_member_list() -> None:
    text = src(
        """
        pub struct Rc<T> {
            ptr: NonNull<RcBox<T>>,
            phantom: PhantomData<RcBox<T>>,
        }
        """
    )
    (chunk,) = chunk_source("rc.rs", text, "rust").chunks
    assert chunk.header == "rc"


def test_a_window_of_a_long_function_names_the_helpers_defined_in_it() -> None:
    filler = "\n".join(f"  const step{i} = request.headers[{i}];" for i in range(30))
    text = (
        "export function fromAjax(config: AjaxConfig): Observable<AjaxResponse> {\n"
        f"{filler}\n\n"
        "  const createResponse = (direction: string, event: ProgressEvent) => {\n"
        "    return new AjaxResponse(event, xhr, request, direction);\n"
        "  };\n\n"
        "  function addErrorEvent(type: string, error: Error) {\n"
        "    xhr.addEventListener(type, () => destination.error(error));\n"
        "  }\n\n"
        f"{filler}\n"
        "}\n"
    )
    chunks = chunk_source("ajax.ts", text, "typescript").chunks
    assert len(chunks) > 2 and all(c.symbol == "fromAjax" for c in chunks)

    def name_line(snippet: str) -> str:
        return next(c for c in chunks if snippet in c.text).header.splitlines()[0]

    assert name_line("function addErrorEvent(") == "from ajax: add error event"
    assert name_line("const createResponse =") == "from ajax: create response"
    # A window that defines nothing keeps the bare name.
    assert name_line("const step0 =") == "from ajax"


def test_the_name_line_lists_defined_members_for_the_name_boost_and_declared_ones_after() -> None:
    line = name_line("juce.InterprocessConnection", ("getSocket",), 120, ("isConnected", "messageReceived"))
    assert line == "juce interprocess connection: get socket; declares is connected, message received"
    # search's name boost reads the two lists back apart: in C++ a prototype is not the
    # definition, in Java a `native` method is
    assert listed_members("juce.InterprocessConnection", line) == ["get socket"]
    declared = ["is connected", "message received"]
    assert listed_members("juce.InterprocessConnection", line, declared=True) == declared
    declared_only = name_line("juce.InterprocessConnection", (), 120, ("messageReceived",))
    assert declared_only == "juce interprocess connection; declares message received"
    assert listed_members("juce.InterprocessConnection", declared_only) == []
    assert listed_members("juce.InterprocessConnection", declared_only, declared=True) == ["message received"]
    assert listed_members("A", name_line("A", ("getSocket",), 40), declared=True) == []
    # a list cut inside the declared names keeps every defined one, and drops the cut one
    long = name_line("A", ("getSocket",), 40, tuple(f"callback{i}" for i in range(20)))
    assert long.endswith("…") and listed_members("A", long) == ["get socket"]
    assert listed_members("A", long, declared=True) == ["callback 0"]
    cut = name_line("A", tuple(f"member{i}" for i in range(20)), 40)
    # the name before "…" may be cut: dropped
    assert cut.endswith("…") and listed_members("A", cut) == [f"member {i}" for i in range(3)]
    # An operator has no words to list (Swift's extension of `==` read `either: `).
    assert name_line("Either", ("==",), 40) == "either"
    assert name_line("Either", ("==", "get"), 40, ("<",)) == "either: get"
    assert names_line(("==", "A.len"), 40) == "a len"


def test_rulers_are_shortened_in_the_model_input() -> None:
    ruler = "    //" + "=" * 78
    text = f"{ruler}\n    bool isConnected() const;\n    int x = a-- - b; // ---- ok\n    /" + "*" * 40
    model_input = embed_input("juce_InterprocessConnection.h", "", text)
    assert model_input.split("\n")[1:] == [
        "    //===",
        "    bool isConnected() const;",
        "    int x = a-- - b; // ---- ok",
        "    /***",
    ]


def in_juce_namespace(long_definition: str, after: str) -> str:
    """A JUCE ``.cpp``: ``namespace juce`` (too long to be one chunk) holding ``long_definition``
    with a 60-line body, then ``after``."""
    body = "".join(f"    step{i} (value, {i});\n" for i in range(60))
    return f"namespace juce\n{{\n\n{long_definition}\n{{\n{body}}}\n\n{after}\n}} // namespace juce\n"


def test_one_liners_of_a_class_defined_out_of_line_are_named_after_that_class() -> None:
    # JUCE's .cpp files: one-line definitions of one class inside `namespace juce`.
    text = in_juce_namespace(
        "AudioParameterFloat::~AudioParameterFloat()",
        "float AudioParameterFloat::getValue() const          { return convertTo0to1 (value); }\n"
        "void AudioParameterFloat::setValue (float newValue)  { value = convertFrom0to1 (newValue); }\n"
        "float AudioParameterFloat::getDefaultValue() const   { return convertTo0to1 (defaultValue); }\n",
    )
    chunks = chunk_source("juce_AudioParameterFloat.cpp", text, "cpp").chunks
    window = next(c for c in chunks if "getValue" in c.text)
    assert window.symbol == "juce.AudioParameterFloat"
    assert (
        window.header.splitlines()[0] == "juce audio parameter float: get value, set value, get default value"
    )
    assert listed_members(window.symbol, window.header) == ["get value", "set value", "get default value"]


def test_a_one_liner_kept_with_the_chunk_above_it_is_named_with_its_members() -> None:
    # JUCE's juce_ParameterAttachments.cpp: a one-liner after a destructor is a crumb that joins
    # the destructor's chunk; its name must be somewhere a typed name can find it.
    text = in_juce_namespace(
        "SliderAttachment::SliderAttachment()",
        "SliderAttachment::~SliderAttachment()\n{\n    slider.removeListener (this);\n}\n\n"
        "void SliderAttachment::sendInitialUpdate() { attachment.sendInitialUpdate(); }\n",
    )
    chunks = chunk_source("juce_ParameterAttachments.cpp", text, "cpp").chunks
    kept = next(c for c in chunks if "sendInitialUpdate" in c.text)
    assert kept.symbol == "juce.SliderAttachment.~SliderAttachment" and "removeListener" in kept.text
    assert listed_members(kept.symbol, kept.header) == ["send initial update"]


def test_top_level_one_liners_of_one_receiver_are_named_after_it() -> None:
    text = src(
        """
        package url

        type Error struct {
            Op  string
            URL string
            Err error
        }

        func (e *Error) Unwrap() error { return e.Err }
        func (e *Error) Error() string { return fmt.Sprintf("%s %q: %s", e.Op, e.URL, e.Err) }

        func ishex(c byte) bool {
            switch {
            case '0' <= c && c <= '9':
                return true
            }
            return false
        }

        func (a A) Len() int { return 1 }
        func (b B) Len() int { return 2 }
        """
    )
    chunks = chunk_source("url.go", text, "go").chunks
    window = next(c for c in chunks if "Unwrap" in c.text)
    assert window.symbol == "Error" and window.kind == "window"
    assert window.header.splitlines()[0] == "error: unwrap, error"
    # One-liners of two receivers in one window: no one name fits it, so it leads with theirs.
    mixed = next(c for c in chunks if "func (a A)" in c.text)
    assert "func (b B)" in mixed.text and mixed.symbol is None and mixed.header == "a len, b len"


def test_a_window_of_free_one_liners_leads_with_their_names() -> None:
    text = src(
        """
        package netip

        var (
            z0    = (*intern.Value)(nil)
            z4    = new(intern.Value)
            z6noz = new(intern.Value)
        )

        func IPv6Unspecified() Addr { return Addr{z: z6noz} }

        func IPv4Unspecified() Addr { return AddrFrom4([4]byte{}) }
        """
    )
    chunks = chunk_source("netip.go", text, "go").chunks
    window = next(c for c in chunks if "IPv4Unspecified" in c.text)
    assert window.kind == "window" and window.symbol is None
    assert window.header == "i pv 6 unspecified, i pv 4 unspecified"
    assert embed_input("netip.go", window.header, window.text).startswith(
        "netip.go\ni pv 6 unspecified, i pv 4 unspecified\npackage netip"
    )
    # A window with no definition in it has no header.
    plain = chunk_source("vars.go", "package x\n\nvar a = 1\n", "go").chunks
    assert [c.header for c in plain] == [""]


def test_a_one_line_function_held_by_a_const_or_a_field_is_defined_not_declared() -> None:
    # `const clamp = (…) => …` has its body in its value: it is named with the one-line
    # function declarations beside it, not left out of the window's names.
    text = src(
        """
        import { Count } from "./Count"

        const clampCount = (n: number, length: number): number => Math.min(n, length)

        export function isThing(a: unknown): boolean { return a !== undefined }
        """
    )
    window = chunk_source("array.ts", text, "typescript").chunks[0]
    assert window.kind == "window" and window.header == "clamp count, is thing"
    # A class field holding a one-line arrow function is defined in the class's text, as a
    # one-line method is: neither is listed after `; declares` with the abstract method.
    text = src(
        """
        abstract class Store {
          private items: string[] = []
          setValue = (value: string): void => { this.items.push(value) }
          getSize(): number { return this.items.length }
          abstract load(): void
        }
        """
    )
    store = chunk_source("store.ts", text, "typescript").chunks[0]
    assert store.header == "store; declares load"


def test_a_functions_window_keeps_its_name_when_its_one_liners_belong_to_an_object() -> None:
    # The one-liners of an object literal inside a constructor are the constructor's helpers:
    # its chunk is named after it, with them as members, not after the object.
    text = src(
        """
        class SafeSubscriber<T> extends Subscriber<T> {
          BODY
          constructor(observerOrNext?: Partial<Observer<T>> | null) {
            super();
            let partialObserver: Partial<Observer<T>>;
            const context = {
              unsubscribe: () => this.unsubscribe(),
            };
            partialObserver = {
              next: observerOrNext.next && bind(observerOrNext.next, context),
            };
            this.destination = new ConsumerObserver(partialObserver);
            TAIL
          }
        }
        """
    )
    # A long constructor: its windows are the constructor's, the one with `context` too.
    text = text.replace("BODY", "").replace("TAIL", "this.count += 1;\n" * 60)
    chunks = chunk_source("Subscriber.ts", text, "typescript").chunks
    owner = next(c for c in chunks if "const context" in c.text)
    assert owner.symbol is not None and not owner.symbol.endswith("context")
    assert "unsubscribe" in owner.header.splitlines()[0]
    assert "declares" not in owner.header


def test_a_window_of_a_top_level_table_leads_with_its_name() -> None:
    # A variable of many lines is no chunk of its own: each window of it (the later ones do not
    # show the name) leads with the name in words. One-line constants are not listed.
    rows = "\n".join(f'    "k{i}": "value number {i} of the replacement table",' for i in range(40))
    text = (
        "package html\n\nconst maxDepth = 3\n\nvar replacementTable = map[string]string{\n" + rows + "\n}\n"
    )
    chunks = chunk_source("escape.go", text, "go").chunks
    windows = [c for c in chunks if "value number" in c.text]
    assert len(windows) >= 2
    assert all(c.kind == "window" and c.symbol is None for c in windows)
    assert [c.header for c in windows] == ["replacement table"] * len(windows)
    assert embed_input("escape.go", windows[-1].header, windows[-1].text).startswith(
        "escape.go\nreplacement table\n"
    )
    short = chunk_source("limits.go", "package html\n\nconst maxDepth = 3\nconst maxWidth = 80\n", "go")
    assert [c.header for c in short.chunks] == [""]


def test_a_window_of_a_documented_top_level_constant_leads_with_its_name() -> None:
    # Effect documents its API on one-line aliases of the internal module: the documentation
    # and the line are a window, named after the constant; an undocumented one-liner is not.
    doc = "\n".join(f" * Line {i} of what the defaults are and when to replace them." for i in range(12))
    text = (
        "export function check(value: unknown): boolean {\n  return value !== undefined\n}\n\n"
        f"/**\n * Replaces the defaults used by checks.\n{doc}\n */\n"
        "export const configureGlobal = Internal.configureGlobal\n\n"
        "export const plain = Internal.plain\n"
    )
    chunks = chunk_source("Arbitrary.ts", text, "typescript").chunks
    # The documentation is longer than a window: each window of it is named, as of a table.
    windows = [c for c in chunks if "defaults" in c.text or "configureGlobal" in c.text]
    assert len(windows) == 2
    assert [(c.kind, c.symbol, c.header) for c in windows] == [("window", None, "configure global")] * 2
    bare = chunk_source("Plain.ts", "export const plain = Internal.plain\n", "typescript")
    assert [c.header for c in bare.chunks] == [""]
    # A C preprocessor line is no comment.
    c_file = chunk_source("state.c", "#include <stdio.h>\nint counter;\n", "c")
    assert [c.header for c in c_file.chunks] == [""]


def test_a_names_abbreviations_are_written_out_and_its_members_still_read_back() -> None:
    text = src(
        """
        pub fn st_ino(meta: &Metadata) -> u64 {
            meta.raw().ino
        }

        impl Buf {
            pub fn len(&self) -> usize {
                self.inner.len()
            }

            pub fn as_ptr(&self) -> *const u8 {
                self.inner.as_ptr()
            }
        }
        """
    )
    chunks = chunk_source("fs.rs", text, "rust").chunks
    heads = {c.symbol: c.header.splitlines()[0] for c in chunks if c.symbol}
    # The model reads "st ino" where a description says "inode".
    assert heads["st_ino"] == "st inode"
    # A container's own name is written out; its members, which the name boost reads back
    # against the candidates' names, stay as the code spells them.
    assert heads["Buf"] == "buffer: len, as ptr"
    assert listed_members("Buf", "buffer: len, as ptr") == ["len", "as ptr"]
    # One reading each: `str` is not `String`.
    assert written_out("OsStr.to_str") == "os str to str"
    go = chunk_source(
        "print.go",
        "package fmt\n\nfunc Sprintf(format string, a ...any) string {\n\treturn format\n}\n",
        "go",
    )
    assert (
        next(c for c in go.chunks if c.symbol == "Sprintf").header.splitlines()[0] == "string print formatted"
    )
