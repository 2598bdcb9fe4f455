"""Swift: definitions and symbols as sourcekit-lsp lists them; an extension's members are its
type's, and an `#if` between a `switch`'s cases is no parse error."""

from __future__ import annotations

from kenning.chunking.directives import blank_inactive_branches
from kenning.chunking.grammars import GRAMMARS, parser_for
from kenning.languages import language_for_path
from tests.chunking_helpers import chunk_at, chunked, spans, src, symbols_of

# In the shape of Expo's and Capacitor's iOS sources (expo-modules-core, @capacitor/ios).
CONTEXT = src(
    """
    // Copyright 2022-present 650 Industries. All rights reserved.

    import Foundation
    import UIKit

    /// Something that receives the app's lifecycle events.
    public protocol LifecycleListener: AnyObject {
      func onAppForeground()
      var identifier: String { get }
    }

    public enum AppState: String {
      case foreground, background
      case inactive
    }

    /// The app context is an interface to a single app.
    public final class AppContext: NSObject {
      public let config: Config
      private var listeners: [LifecycleListener] = []

      public var isForeground: Bool {
        return state == .foreground
      }

      public init(config: Config) {
        self.config = config
      }

      /// Handles the app's lifecycle notifications and tells the listeners.
      @objc
      private func handleNotification(_ notification: Notification) {
        switch notification.name {
        #if os(iOS)
        case UIApplication.willEnterForegroundNotification:
          listeners.forEach { $0.onAppForeground() }
        #elseif os(macOS)
        case NSApplication.willUnhideNotification:
          listeners.forEach { $0.onAppForeground() }
        #endif
        default:
          return
        }
      }

      subscript(index: Int) -> LifecycleListener {
        listeners[index]
      }
    }

    struct Config {
      var scheme: String
    }

    extension AppContext: Codable {
      func encode(to encoder: Encoder) throws {}
    }

    typealias Callback = (Result<Any, Error>) -> Void

    func makeContext() -> AppContext { AppContext(config: Config(scheme: "app")) }

    let defaultScheme = "app"
    """
)


def test_swift_definitions_are_symbols_of_their_types() -> None:
    assert language_for_path("ios/Core/AppContext.swift") == "swift"
    result = chunked(CONTEXT, "swift")
    assert symbols_of(result) == {
        ("LifecycleListener", "interface", None),
        ("onAppForeground", "method", "LifecycleListener"),
        ("identifier", "property", "LifecycleListener"),
        ("AppState", "enum", None),
        ("foreground", "enum_member", "AppState"),
        ("background", "enum_member", "AppState"),
        ("inactive", "enum_member", "AppState"),
        ("AppContext", "class", None),
        ("config", "property", "AppContext"),
        ("listeners", "property", "AppContext"),
        ("isForeground", "property", "AppContext"),
        ("init", "constructor", "AppContext"),
        ("handleNotification", "method", "AppContext"),
        ("subscript", "method", "AppContext"),
        ("Config", "struct", None),
        ("scheme", "property", "Config"),
        # An extension is no symbol; its members are the extended type's.
        ("encode", "method", "AppContext"),
        ("Callback", "type", None),
        ("makeContext", "function", None),
        ("defaultScheme", "variable", None),
    }
    assert spans(result)[0] == (1, 4, "imports", None)


def test_a_conditional_between_switch_cases_is_no_parse_error() -> None:
    # Without the blanking, the grammar loses the class from the `#if` on.
    parser = parser_for(GRAMMARS["swift"])
    assert parser.parse(CONTEXT.encode()).root_node.has_error
    assert not parser.parse(blank_inactive_branches(CONTEXT.encode())).root_node.has_error
    assert blank_inactive_branches(b"#if os(iOS)\na\n#elseif os(macOS)\nb\n#endif\n") == (
        b"           \na\n                 \n \n      \n"
    )
    result = chunked(CONTEXT, "swift")
    # The members after the conditional keep their class: one error swallowed them before.
    assert ("subscript", "method", "AppContext") in symbols_of(result)
    assert spans(result)[-3:] == [
        (51, 53, "struct", "Config"),
        (55, 57, "impl", "AppContext"),
        (59, 63, "window", None),
    ]
    small = chunked(CONTEXT, "swift", max_chars=700)
    handle = chunk_at(small, 38)
    assert (handle.kind, handle.symbol) == ("method", "AppContext.handleNotification")
    assert handle.text.lstrip().startswith("/// Handles the app's lifecycle")
    assert "#elseif os(macOS)" in handle.text  # the chunk is the file as written
    encode = chunk_at(small, 56)
    assert (encode.kind, encode.symbol) == ("impl", "AppContext")


def test_operator_functions_deinit_associated_types_and_macros_are_symbols() -> None:
    # In the shape of Expo's Either.swift: `static func ==` had no name (tree-sitter gives the
    # operator no identifier), and its extension's header listed an empty member.
    text = src(
        """
        final class FileDownloader {
            deinit {
                session.invalidateAndCancel()
            }
        }

        extension Either: Equatable {
            public static func == (lhs: Either, rhs: Either) -> Bool {
                return lhs.value == rhs.value
            }
            prefix static func -(value: Either) -> Either { value }
            public static func ?? <T>(value: Either, fallback: T) -> T { fallback }
        }

        public protocol CapacitorExtension {
            associatedtype CapacitorType
        }

        @attached(member, names: named(decode))
        public macro Union() = #externalMacro(module: "ExpoModulesMacros", type: "UnionMacro")
        """
    )
    result = chunked(text, "swift")
    assert symbols_of(result) == {
        ("FileDownloader", "class", None),
        ("deinit", "method", "FileDownloader"),
        ("==", "method", "Either"),
        ("-", "method", "Either"),
        ("??", "method", "Either"),
        ("CapacitorExtension", "interface", None),
        ("CapacitorType", "type", "CapacitorExtension"),
        ("Union", "function", None),
    }
    extension = chunk_at(result, 8)
    assert extension.header.split("\n")[0] == "either"


def test_a_heading_leads_the_first_chunk_of_an_extension_too_big_for_one() -> None:
    # expo-modules-core's SharedObject.swift: the `// MARK:` above an extension too big for one
    # chunk was a chunk of its own, one comment line as a result.
    body = "".join(f"    let step{i} = try lookup({i})\n" for i in range(12))
    text = src(
        """
        extension SharedObject: EventEmitter {
          public func emit(event: String) {
            send(event)
          }
        }

        // MARK: - Recovering the native object from JS

        extension SharedObject {
          public static func native(from jsObject: JavaScriptObject) throws -> SharedObject {
        """
    )
    text += body + "    return found\n  }\n\n  public static func release(_ object: SharedObject) {\n"
    text += body + "  }\n}\n"
    result = chunked(text, "swift", max_chars=700)
    assert spans(result)[:3] == [
        (1, 5, "impl", "SharedObject"),
        (7, 24, "method", "SharedObject.native"),
        (26, 40, "method", "SharedObject.release"),
    ]
    assert chunk_at(result, 7).text.startswith("// MARK: - Recovering the native object from JS\n\nextension")
    # A conditional's opening above it, too (Expo's `#if os(iOS)` over `extension SceneGeometry`).
    conditional = text.replace("// MARK: - Recovering the native object from JS\n\n", "#if os(iOS)\n")
    conditional += "#endif\n"
    assert spans(chunked(conditional, "swift", max_chars=700))[1] == (7, 23, "method", "SharedObject.native")


def test_comments_after_the_last_definition_close_the_chunk_above() -> None:
    # expo-updates ends files with the `// swiftlint:enable …` directives its top opened: alone
    # they were a result of their own, lint switches and nothing else.
    text = src(
        """
        // swiftlint:disable force_unwrapping

        public final class AppLoader {
          func finish() {
            run()
          }
        }

        // swiftlint:enable closure_body_length
        // swiftlint:enable force_unwrapping
        """
    )
    assert spans(chunked(text, "swift")) == [(1, 10, "class", "AppLoader")]


def test_a_conditional_opening_leads_the_definition_below_it() -> None:
    # Expo's `#if os(iOS) || os(tvOS)` above a class that exists only there was a result of its
    # own, one directive line.
    text = src(
        """
        public final class HostingView {
          func reactViewController() -> UIViewController? {
            return nil
          }
        }

        #if os(iOS) || os(tvOS)
        private final class AppearanceTrackingHostingController {
          private(set) var isAppearing = false
        }
        #endif
        """
    )
    assert spans(chunked(text, "swift")) == [
        (1, 5, "class", "HostingView"),
        (7, 11, "class", "AppearanceTrackingHostingController"),
    ]
