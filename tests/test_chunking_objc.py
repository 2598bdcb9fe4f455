"""Objective-C: classes, categories and protocols as clangd lists them, methods named by their
selectors, properties, Apple's `NS_ENUM`s and React Native's exported methods read as what they
expand to; `.h` headers that declare `@interface`s read as Objective-C, `.mm` as Objective-C or
C++, whichever reads more of the file."""

from __future__ import annotations

from pathlib import Path

from kenning.chunking import ChunkedFile, chunk_source
from kenning.chunking.objc_macros import blank_cxx_bodies, repair_objc
from kenning.config import Config
from kenning.engine import Engine
from kenning.indexer import update
from kenning.languages import language_for_path, language_of
from kenning.search import SearchQuery, search
from tests.chunking_helpers import check_invariants, chunk_at, src, symbol, symbols_of

# In the shape of React Native's React/Modules/RCTUIManager.h and Capacitor's headers.
HEADER = src(
    """
    #import <UIKit/UIKit.h>
    #import <React/RCTBridgeModule.h>

    NS_ASSUME_NONNULL_BEGIN

    typedef NS_ENUM(NSInteger, RCTLayoutDirection) {
      RCTLayoutDirectionLeftToRight,
      RCTLayoutDirectionRightToLeft,
    };

    /**
     * The manager of every native view React creates.
     */
    @interface RCTUIManager : NSObject <RCTBridgeModule>

    @property (nonatomic, copy, nullable) NSString *moduleName;
    @property (nonatomic, readonly) NSInteger rootTag, nextTag;

    - (instancetype)initWithBridge:(RCTBridge *)bridge NS_DESIGNATED_INITIALIZER;
    - (void)setSize:(CGSize)size forView:(UIView *)view;
    + (void)reset;

    @end

    @interface RCTUIManager (Private)
    - (void)flushBlocks;
    @end

    @protocol RCTComponentViewDelegate <NSObject>
    @required
    - (void)didMountView:(UIView *)view;
    @optional
    - (void)didUnmountView;
    @end

    NS_ASSUME_NONNULL_END
    """
)

# In the shape of React Native's RCTScrollViewManager.m and RCTViewComponentView.mm.
IMPLEMENTATION = src(
    """
    #import "RCTScrollViewManager.h"

    @implementation RCTConvert (UIScrollView)

    RCT_ENUM_CONVERTER(
        UIScrollViewKeyboardDismissMode,
        (@{
          @"none" : @(UIScrollViewKeyboardDismissModeNone),
          @"on-drag" : @(UIScrollViewKeyboardDismissModeOnDrag),
        }),
        UIScrollViewKeyboardDismissModeNone,
        integerValue)

    @end

    static NSString *const RCTScrollEventName = @"scroll";

    @implementation RCTScrollViewManager

    RCT_EXPORT_MODULE()

    #ifdef RCT_DYNAMIC_FRAMEWORKS
    + (void)load
    {
      [RCTComponentViewFactory registerComponentViewClass:self];
    }
    #endif

    // Creates the native scroll view for a React component.
    - (UIView *)view
    {
      return [[RCTScrollView alloc] initWithEventDispatcher:self.bridge.eventDispatcher];
    }

    RCT_EXPORT_VIEW_PROPERTY(bounces, BOOL)
    RCT_EXPORT_VIEW_PROPERTY(scrollEnabled, BOOL)

    RCT_EXPORT_METHOD(scrollTo : (nonnull NSNumber *)reactTag offsetX : (CGFloat)x animated : (BOOL)animated)
    {
      [self.bridge.uiManager addUIBlock:^(RCTUIManager *uiManager, NSDictionary *viewRegistry) {
        [viewRegistry[reactTag] scrollToOffset:CGPointMake(x, 0) animated:animated];
      }];
    }

    RCT_REMAP_METHOD(flashIndicators, flashIndicatorsOfView : (nonnull NSNumber *)reactTag)
    {
      [self flash:reactTag];
    }

    @end
    """
)

OBJCXX = src(
    """
    #import "RCTViewComponentView.h"

    #import <react/renderer/components/view/ViewProps.h>

    using namespace facebook::react;

    @implementation RCTViewComponentView {
      UIColor *_backgroundColor;
    }

    - (void)updateProps:(const Props::Shared &)props oldProps:(const Props::Shared &)oldProps
    {
      const auto &newViewProps = static_cast<const ViewProps &>(*props);
      self.opaque = newViewProps.opacity >= 1.0;
    }

    - (void)prepareForRecycle
    {
      _backgroundColor = nil;
    }

    @end
    """
)


# In the shape of React Native's RCTViewComponentView.mm: C++ in instance variables and a body.
OBJCXX_BODIES = src(
    """
    #import "RCTViewComponentView.h"

    using namespace facebook::react;

    @implementation RCTViewComponentView {
      SharedViewProps _props;
      std::unordered_map<std::string, int> _eventCounts;
    }

    - (NSArray<UIAccessibilityCustomAction *> *)accessibilityCustomActions
    {
      const auto &accessibilityActions = _props->accessibilityActions;
      NSMutableArray *customActions = [NSMutableArray array];
      for (const auto &accessibilityAction : accessibilityActions) {
        if (accessibilityAction.label.has_value()) {
          [customActions addObject:RCTNSStringFromString(accessibilityAction.label.value())];
        }
      }
      return customActions;
    }

    - (BOOL)didActivateAccessibilityCustomAction:(UIAccessibilityCustomAction *)action
    {
      // "auto" in a comment, `::` in a string: "a::b" is no C++
      return YES;
    }

    - (void)focus
    {
      [self becomeFirstResponder];
    }

    @end
    """
)


def _chunked(path: str, text: str) -> ChunkedFile:
    result = chunk_source(path, text, language_of(path, text))
    check_invariants(text, result, 1500)
    return result


def test_paths() -> None:
    assert language_for_path("React/Views/RCTView.m") == "objective-c"
    assert language_for_path("React/Fabric/RCTViewComponentView.mm") == "objective-c"
    # `.h` is C by its name, Objective-C when it declares a class or protocol
    assert language_for_path("React/Modules/RCTUIManager.h") == "c"
    assert language_of("React/Modules/RCTUIManager.h", HEADER) == "objective-c"
    assert language_of("juce_Button.h", "class Button {};\n/*\n   @interface Example\n*/\n") == "c"


def test_a_header_declares_classes_categories_protocols_and_enums() -> None:
    result = _chunked("React/Modules/RCTUIManager.h", HEADER)
    assert symbols_of(result) == {
        ("RCTLayoutDirection", "enum", None),
        ("RCTLayoutDirectionLeftToRight", "enum_member", "RCTLayoutDirection"),
        ("RCTLayoutDirectionRightToLeft", "enum_member", "RCTLayoutDirection"),
        ("RCTUIManager", "class", None),
        ("moduleName", "property", "RCTUIManager"),
        ("rootTag", "property", "RCTUIManager"),
        ("nextTag", "property", "RCTUIManager"),
        # selectors, as Xcode and clangd name methods; the attribute macro is no part of one
        ("initWithBridge:", "method", "RCTUIManager"),
        ("setSize:forView:", "method", "RCTUIManager"),
        ("reset", "method", "RCTUIManager"),
        ("flushBlocks", "method", "RCTUIManager"),  # a category's members are the class's
        ("RCTComponentViewDelegate", "interface", None),
        ("didMountView:", "method", "RCTComponentViewDelegate"),
        ("didUnmountView", "method", "RCTComponentViewDelegate"),
    }
    # the editor's selection starts at the selector's first part
    size = symbol(result, "setSize:forView:", "RCTUIManager")
    assert HEADER.splitlines()[size.name_line - 1][size.name_col :].startswith("setSize:(CGSize)")
    manager = chunk_at(result, 14)
    assert (manager.kind, manager.symbol) == ("class", "RCTUIManager")
    assert manager.text.startswith("/**\n * The manager of every native view")
    assert "declares init with bridge" in manager.header
    # a protocol's methods are what a conforming class implements: each a chunk of its own
    mount = chunk_at(result, 32)
    assert (mount.kind, mount.symbol) == ("declaration", "RCTComponentViewDelegate.didMountView:")


def test_an_implementation_s_methods_are_the_class_s_chunks() -> None:
    result = _chunked("React/Views/ScrollView/RCTScrollViewManager.m", IMPLEMENTATION)
    assert symbols_of(result) == {
        ("RCTScrollEventName", "variable", None),
        ("load", "method", "RCTScrollViewManager"),  # inside `#ifdef`: the rest is read too
        ("view", "method", "RCTScrollViewManager"),
        # React Native's exported methods, named as the methods they expand to
        ("scrollTo:offsetX:animated:", "method", "RCTScrollViewManager"),
        ("flashIndicatorsOfView:", "method", "RCTScrollViewManager"),
    }
    # the converter's `@{ … }` argument is no body: the macro is blanked, the category read
    converter = chunk_at(result, 5)
    assert (converter.start_line, converter.kind, converter.symbol) == (3, "impl", "RCTConvert")
    view = chunk_at(result, 31)
    assert (view.kind, view.symbol) == ("method", "RCTScrollViewManager.view")
    assert view.text.startswith("// Creates the native scroll view for a React component.\n- (UIView *)view")
    scroll = chunk_at(result, 39)
    assert (scroll.kind, scroll.symbol) == ("method", "RCTScrollViewManager.scrollTo:offsetX:animated:")
    assert scroll.text.startswith("RCT_EXPORT_METHOD(scrollTo")  # the text as written
    assert "@implementation RCTScrollViewManager" in scroll.header  # its class, for the model


def test_objective_c_plus_plus_is_read_past_its_cxx() -> None:
    result = _chunked("React/Fabric/RCTViewComponentView.mm", OBJCXX)
    assert symbols_of(result) == {
        ("updateProps:oldProps:", "method", "RCTViewComponentView"),
        ("prepareForRecycle", "method", "RCTViewComponentView"),
    }
    implementation = chunk_at(result, 11)  # small enough to be one chunk
    assert (implementation.kind, implementation.symbol) == ("impl", "RCTViewComponentView")
    assert "update props old props, prepare for recycle" in implementation.header


def test_objective_c_plus_plus_bodies_that_hold_cxx_are_read_as_extents() -> None:
    # `const auto &x : xs` made the rest of the `@implementation` one error: two windows and a
    # function named after the class
    result = _chunked("React/Fabric/RCTViewComponentView.mm", OBJCXX_BODIES)
    assert symbols_of(result) == {
        ("accessibilityCustomActions", "method", "RCTViewComponentView"),
        ("didActivateAccessibilityCustomAction:", "method", "RCTViewComponentView"),
        ("focus", "method", "RCTViewComponentView"),
    }
    implementation = chunk_at(result, 12)
    assert (implementation.kind, implementation.symbol) == ("impl", "RCTViewComponentView")
    assert "const auto &accessibilityActions" in implementation.text  # the text as written
    source = OBJCXX_BODIES.encode()
    blanked = blank_cxx_bodies(source)
    assert len(blanked) == len(source) and blanked.count(b"\n") == source.count(b"\n")
    assert b"accessibilityActions" not in blanked and b"std::" not in blanked
    assert b'"a::b" is no C++' in blanked  # a body whose C++ is only in comments and strings stays


def test_a_c_or_cxx_header_is_read_as_before() -> None:
    header = src(
        """
        #pragma once

        namespace juce {
        class Button {
        public:
          void setText(const char* text);
        };
        }
        """
    )
    result = _chunked("juce_Button.h", header)
    assert ("Button", "class", "juce") in symbols_of(result)
    assert ("setText", "method", "juce.Button") in symbols_of(result)


def test_repairs_keep_every_offset() -> None:
    for text in (HEADER, IMPLEMENTATION, OBJCXX):
        before = text.encode()
        after = repair_objc(before)
        assert len(after) == len(before)
        assert [i for i, c in enumerate(before) if c == 0x0A] == [i for i, c in enumerate(after) if c == 0x0A]
    enum = b"typedef NS_OPTIONS(NSUInteger, RCTEdges) {"
    assert repair_objc(enum).split() == [b"typedef", b"enum", b"RCTEdges", b"{"]
    assert repair_objc(enum).index(b"RCTEdges") == enum.index(b"RCTEdges")
    exported = b"RCT_EXPORT_METHOD(show:(NSString *)m)\n{"
    assert repair_objc(exported) == b"-(id)             show:(NSString *)m \n{"


def test_an_objective_c_header_is_indexed_and_filtered_as_objective_c(tmp_path: Path) -> None:
    root = tmp_path / "ios"
    (root / "React").mkdir(parents=True)
    (root / "React" / "RCTUIManager.h").write_text(HEADER)
    (root / "React" / "RCTScrollViewManager.m").write_text(IMPLEMENTATION)
    (root / "React" / "juce_Button.h").write_text("class Button {\npublic:\n  void setSize();\n};\n")
    with Engine(root, Config()).open() as engine:
        update(engine, embed=False)
        query = SearchQuery("setSize", limit=10, mode="lexical", languages=("objective-c",))
        assert {h.path for h in search(engine, query).hits} == {"React/RCTUIManager.h"}
        query = SearchQuery("setSize", limit=10, mode="lexical", languages=("c",))
        assert {h.path for h in search(engine, query).hits} == {"React/juce_Button.h"}
