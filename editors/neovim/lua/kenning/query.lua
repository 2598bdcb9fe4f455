--- Turns what the user typed into `workspace/semanticSearch` params, with the inline filter syntax
--- of the VS Code search box (editors/vscode/src/query.ts):
---
---   retry upload lang:python path:"src/my dir/**" ext:ts,tsx mode:lexical
---
--- - `lang:` (`language:`), `ext:` (`extension:`), `path:` and `mode:` are filters; keys are
---   case-insensitive. Repeating a filter adds to it; for `mode:` the last one wins.
--- - `lang:` and `ext:` take comma-separated lists; `path:` takes one glob each (globs may hold
---   commas: `src/{a,b}/**`).
--- - A value may be quoted with "…" or '…' to hold spaces.
--- - Anything else — `foo:bar`, `std::vector`, an empty `lang:`, a quoted word ("lang:python") —
---   stays in the query text.

local M = {}

M.MODES = { 'hybrid', 'semantic', 'lexical' }
M.MAX_QUERY_CHARS = 1000

---@type table<string, 'languages'|'extensions'|'paths'|'mode'>
local KEYS = {
  lang = 'languages',
  language = 'languages',
  ext = 'extensions',
  extension = 'extensions',
  path = 'paths',
  mode = 'mode',
}

---@alias kenning.Mode 'hybrid'|'semantic'|'lexical'

---@class kenning.Filters
---@field paths? string[]
---@field languages? string[]
---@field extensions? string[]

---@class kenning.SearchParams
---@field query string
---@field limit? integer
---@field mode? kenning.Mode
---@field filters? kenning.Filters

---@class kenning.Token
---@field key? string the text before ':' when the token looks like `key:value`
---@field value string the value (quotes removed), or the whole word
---@field quoted boolean

--- Reads a "…" or '…' run starting at `i` (on the quote); an unclosed quote runs to the end.
---@param input string
---@param i integer
---@return string content, integer next
local function read_quoted(input, i)
  local quote = input:sub(i, i)
  local close = input:find(quote, i + 1, true)
  if not close then
    return input:sub(i + 1), #input + 1
  end
  return input:sub(i + 1, close - 1), close + 1
end

--- Reads one token starting at `i` (not on a space).
---@param input string
---@param i integer
---@return kenning.Token, integer next
local function read_token(input, i)
  if input:find('^["\']', i) then
    local content, next = read_quoted(input, i)
    return { value = content, quoted = true }, next
  end
  local key, after = input:match('^([^%s:]+):()', i)
  if key and input:find('^["\']', after) then
    local content, next = read_quoted(input, after)
    return { key = key, value = content, quoted = true }, next
  end
  local word_end = input:find('%s', i) or #input + 1
  local word = input:sub(i, word_end - 1)
  if key then
    return { key = key, value = word:sub(#key + 2), quoted = false }, word_end
  end
  return { value = word, quoted = false }, word_end
end

---@param input string
---@return kenning.Token[]
function M.tokenize(input)
  local tokens = {} ---@type kenning.Token[]
  local i = input:find('%S')
  while i do
    local token, next = read_token(input, i)
    table.insert(tokens, token)
    i = input:find('%S', next)
  end
  return tokens
end

--- The token as it was typed (quotes kept around a quoted value), for the query text.
---@param token kenning.Token
---@return string
local function token_text(token)
  if not token.key then
    return token.value
  end
  return token.quoted and ('%s:"%s"'):format(token.key, token.value) or (token.key .. ':' .. token.value)
end

---@param value string
---@return string[]
local function split_list(value)
  local items = {}
  for item in value:gmatch('[^,]+') do
    item = vim.trim(item)
    if item ~= '' then
      table.insert(items, item)
    end
  end
  return items
end

--- Applies a filter token to `params`; returns a problem to report, if any.
---@param params kenning.SearchParams
---@param field 'languages'|'extensions'|'paths'|'mode'
---@param value string
---@return string?
local function apply_filter(params, field, value)
  if field == 'mode' then
    local mode = value:lower()
    if not vim.list_contains(M.MODES, mode) then
      return ('unknown mode "%s" (use %s)'):format(value, table.concat(M.MODES, ', '))
    end
    params.mode = mode --[[@as kenning.Mode]]
    return nil
  end
  params.filters = params.filters or {}
  local list = params.filters[field] or {}
  params.filters[field] = vim.list_extend(list, field == 'paths' and { value } or split_list(value))
  return nil
end

--- Splits `input` into the query words and the inline filters; `problems` are human-readable
--- notes (a bad mode, a query too long) — the query still runs.
---@param input string
---@return kenning.SearchParams params, string[] problems
function M.parse(input)
  local params = { query = '' } ---@type kenning.SearchParams
  local words, problems = {}, {} ---@type string[], string[]
  for _, token in ipairs(M.tokenize(input)) do
    local field = token.key and KEYS[token.key:lower()]
    local value = vim.trim(token.value)
    if field and value ~= '' then
      local problem = apply_filter(params, field, value)
      if problem then
        table.insert(problems, problem)
      end
    elseif vim.trim(token_text(token)) ~= '' then
      table.insert(words, vim.trim(token_text(token)))
    end
  end
  params.query = table.concat(words, ' ')
  if vim.fn.strchars(params.query) > M.MAX_QUERY_CHARS then
    table.insert(problems, ('the query is too long; the server takes at most %d characters'):format(M.MAX_QUERY_CHARS))
  end
  return params, problems
end

--- Merges explicit options (from `require('kenning').search(text, opts)`) over the parsed text;
--- list filters are concatenated, so `opts.filters` and inline filters combine.
---@param params kenning.SearchParams
---@param opts? { limit?: integer, mode?: kenning.Mode, filters?: kenning.Filters }
---@return kenning.SearchParams
function M.merge(params, opts)
  opts = opts or {}
  params.limit = opts.limit or params.limit
  params.mode = opts.mode or params.mode
  for field, values in pairs(opts.filters or {}) do
    params.filters = params.filters or {}
    params.filters[field] = vim.list_extend(params.filters[field] or {}, values)
  end
  return params
end

return M
