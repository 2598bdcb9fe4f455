"""Lua: functions as LuaLS lists them — a table's functions with the table as container, a
method (`Client:send`) apart from a function (`M.start`), functions written in a table
constructor — each a chunk with its LuaCATS comments."""

from __future__ import annotations

from kenning.languages import language_for_path
from tests.chunking_helpers import chunk_at, chunked, src, symbols_of

# In the shape of Neovim's runtime (vim/lsp/client.lua, vim/lsp.lua).
CLIENT = src(
    """
    local api = vim.api
    local M = {}

    --- @class vim.lsp.Client
    local Client = {}
    Client.__index = Client

    --- Creates a client from its config.
    --- @param config vim.lsp.ClientConfig
    --- @return vim.lsp.Client?
    function Client.create(config)
      local function validate(c)
        return c.cmd ~= nil
      end
      if not validate(config) then
        return nil
      end
      return setmetatable({ config = config }, Client)
    end

    --- Sends a request to the server.
    function Client:request(method, params, handler)
      return self.rpc.request(method, params, handler)
    end

    M.handlers = {
      hover = function(err, result, ctx)
        api.nvim_echo({ { result.contents } }, false, {})
      end,
    }

    M.start = function(config)
      return Client.create(config)
    end

    local function resolve_root(bufnr)
      return vim.fs.root(bufnr, { '.git' })
    end

    function vim.lsp.util.trim_empty_lines(lines)
      return vim.tbl_filter(function(line) return line ~= '' end, lines)
    end

    return M
    """
)


def test_lua_functions_are_symbols_of_their_tables() -> None:
    assert language_for_path("runtime/lua/vim/lsp/client.lua") == "lua"
    result = chunked(CLIENT, "lua")
    assert symbols_of(result) == {
        ("Client", "class", "vim.lsp"),  # `--- @class vim.lsp.Client`, as LuaLS lists it
        ("create", "function", "Client"),
        ("validate", "function", "Client.create"),
        ("request", "method", "Client"),
        ("hover", "function", "M.handlers"),
        ("start", "function", "M"),
        ("resolve_root", "function", None),
        ("trim_empty_lines", "function", "vim.lsp.util"),
    }


def test_lua_functions_are_chunks_with_their_comments() -> None:
    result = chunked(CLIENT, "lua")
    create = chunk_at(result, 12)
    assert (create.kind, create.symbol) == ("function", "Client.create")
    assert create.text.startswith("--- Creates a client from its config.")
    request = chunk_at(result, 23)
    assert (request.kind, request.symbol) == ("method", "Client.request")
    assert request.text.startswith("--- Sends a request to the server.")
    assert (chunk_at(result, 28).kind, chunk_at(result, 28).symbol) == ("function", "M.handlers.hover")


def test_a_lua_banner_leads_the_function_below_it() -> None:
    # LuaJIT's disassemblers: a `----` line over each function was a window of its own.
    text = src(
        """
        local function decode(op)
          return op % 256
        end

        ------------------------------------------------------------------------------

        -- Disassemble a block of code.
        local function disass_block(ctx, ofs, len)
          return ctx, ofs, len
        end
        """
    )
    block = chunk_at(chunked(text, "lua"), 5)
    assert (block.start_line, block.kind, block.symbol) == (5, "function", "disass_block")


# In the shape of Neovim's runtime (vim/treesitter/languagetree.lua, vim/lsp/buf.lua): the types
# LuaCATS comments define.
TYPES = src(
    """
    local M = {}

    ---@alias TSCallbackName
    ---| 'changedtree'
    ---| 'bytes'
    ---@alias ParserThreadState { timeout: integer? }

    ---@nodoc
    ---@class (exact) vim.treesitter.LanguageTree : vim.treesitter.Base
    ---@field private _callbacks table<TSCallbackName,function[]> Callback handlers
    ---@field private _lang string Language name
    local LanguageTree = {}

    --- Optional keyword arguments:
    --- @class vim.lsp.buf.format.Opts
    --- @inlinedoc
    --- @field timeout_ms? integer
    --- Predicate used to filter clients.
    --- @class vim.lsp.buf.format.Filter<T>
    --- @field id? integer

    --- Formats a buffer.
    --- @class vim.lsp.buf.Inline
    --- @param opts? vim.lsp.buf.format.Opts
    function M.format(opts)
      return opts
    end

    ---@enum vim.lsp.protocol.Kind
    M.Kind = {
      Text = 1,
    }

    return M
    """
)


def test_luacats_types_are_symbols() -> None:
    # Neovim declares its option tables and classes in comments; LuaLS lists each by its name.
    result = chunked(TYPES, "lua")
    assert symbols_of(result) >= {
        ("TSCallbackName", "type", None),
        ("ParserThreadState", "type", None),
        ("LanguageTree", "class", "vim.treesitter"),
        ("Opts", "class", "vim.lsp.buf.format"),
        ("Filter", "class", "vim.lsp.buf.format"),
        ("Inline", "class", "vim.lsp.buf"),
        ("Kind", "enum", "vim.lsp.protocol"),
        ("format", "function", "M"),
    }
    opts = next(s for s in result.symbols if s.name == "Opts")
    # Its description above the tag, its fields below, up to the next tag's description.
    assert (opts.start_line, opts.name_line, opts.end_line) == (14, 15, 17)


def test_luacats_types_leave_the_chunks_as_they_were() -> None:
    # A class's own chunk ranked Neovim's option classes above the functions a sentence described
    # (measured, not kept): its lines stay where any comment's would.
    result = chunked(TYPES, "lua")
    assert [(c.start_line, c.end_line, c.kind, c.symbol) for c in result.chunks] == [
        (1, 20, "window", None),
        (22, 27, "function", "M.format"),
        (29, 34, "window", None),
    ]
