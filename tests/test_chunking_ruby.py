"""Ruby: definitions and symbols as Solargraph lists them, a class's doc comment kept with it
though the grammar puts it outside the module's body, and `require` lines as boilerplate."""

from __future__ import annotations

from kenning.languages import language_for_path
from tests.chunking_helpers import chunk_at, chunked, spans, src, symbols_of

# In the shape of Rack's and the standard library's files.
LINT = src(
    """
    # frozen_string_literal: true

    require "forwardable"
    require_relative "constants"

    module Rack
      # Rack::Lint validates your application and the requests and responses it makes.
      class Lint
        REQUEST_METHODS = %w[GET POST PUT DELETE].freeze

        def initialize(app)
          @app = app
        end

        # Calls the application, then checks every header of its response.
        def call(env = nil)
          status, headers, body = @app.call(env)
          check_headers(headers)
          [status, headers, body]
        end

        def self.build(app) = new(app)

        private

        def check_headers(headers)
          headers.each { |key, value| raise LintError, key unless key.is_a?(String) }
        end
      end

      # Helpers mixed into the handlers.
      module Utils
        def escape_html(string)
          string.gsub(/[&<>]/, "&" => "&amp;", "<" => "&lt;", ">" => "&gt;")
        end
      end
    end

    def run_app(app)
      Rack::Handler.default.run(app)
    end
    """
)


def test_ruby_definitions_are_symbols_of_their_modules_and_classes() -> None:
    assert language_for_path("lib/rack/lint.rb") == "ruby"
    assert language_for_path("Rakefile") == "ruby"
    result = chunked(LINT, "ruby")
    assert symbols_of(result) == {
        ("Rack", "module", None),
        ("Lint", "class", "Rack"),
        ("REQUEST_METHODS", "constant", "Rack.Lint"),
        ("initialize", "method", "Rack.Lint"),
        ("call", "method", "Rack.Lint"),
        ("build", "method", "Rack.Lint"),
        ("check_headers", "method", "Rack.Lint"),
        ("Utils", "module", "Rack"),
        # A module is a mixin: its `def`s are methods.
        ("escape_html", "method", "Rack.Utils"),
        ("run_app", "function", None),
    }
    # The magic comment and the requires: boilerplate.
    assert spans(result)[0] == (1, 4, "imports", None)


def test_a_classs_doc_comment_inside_a_module_stays_with_the_class() -> None:
    # tree-sitter-ruby makes the comment above a body's first statement a child of the module,
    # outside its body: it is glued to the class all the same, and no part of the module's
    # signature in the headers.
    small = chunked(LINT, "ruby", max_chars=250)
    lint = chunk_at(small, 8)
    assert (lint.kind, lint.symbol) == ("class", "Rack.Lint")
    assert lint.text.lstrip().startswith("# Rack::Lint validates your application")
    call = chunk_at(small, 16)
    assert (call.kind, call.symbol) == ("method", "Rack.Lint.call")
    assert call.header.split("\n")[1:] == ["module Rack", "  class Lint"]


def test_attribute_accessors_are_properties_of_their_class() -> None:
    text = src(
        """
        class User
          attr_reader :name, :email
          attr_accessor :age
          private attr_writer :token

          def initialize(name)
            @name = name
          end
        end
        """
    )
    result = chunked(text, "ruby")  # checks each name's column too: `name`, not `:name`
    assert symbols_of(result) == {
        ("User", "class", None),
        ("name", "property", "User"),
        ("email", "property", "User"),
        ("age", "property", "User"),
        ("token", "property", "User"),
        ("initialize", "method", "User"),
    }
