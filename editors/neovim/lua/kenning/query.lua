--- Turns what the user typed into `workspace/semanticSearch` params.
---
--- Inline filters (`lang:python path:src/** ext:ts mode:lexical`) are taken out of the text and
--- become `filters` / `mode`; a value may list several items separated by commas
--- (`ext:ts,tsx`). Every other word, `std::vector` and `a:b` included, stays in the query.

local M = {}

--- Filter keys as typed → field of `SemanticSearchParams.filters`.
---@type table<string, string>
local FILTER_KEYS = {
  lang = 'languages',
  language = 'languages',
  path = 'paths',
  ext = 'extensions',
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

---@param filters kenning.Filters
---@param field string
---@param value string
local function add_filter(filters, field, value)
  filters[field] = filters[field] or {}
  for item in value:gmatch('[^,]+') do
    table.insert(filters[field], item)
  end
end

--- Applies one `key:value` word to `params`; false when the word is not a filter.
---@param params kenning.SearchParams
---@param word string
---@return boolean
local function apply_word(params, word)
  local key, value = word:match('^(%a+):(.+)$')
  if not key then
    return false
  end
  key = key:lower()
  if key == 'mode' then
    params.mode = value --[[@as kenning.Mode]]
    return true
  end
  local field = FILTER_KEYS[key]
  if not field then
    return false
  end
  params.filters = params.filters or {}
  add_filter(params.filters, field, value)
  return true
end

--- Splits `text` into the query words and the inline filters.
---@param text string
---@return kenning.SearchParams
function M.parse(text)
  ---@type kenning.SearchParams
  local params = { query = '' }
  local words = {} ---@type string[]
  for word in text:gmatch('%S+') do
    if not apply_word(params, word) then
      table.insert(words, word)
    end
  end
  params.query = table.concat(words, ' ')
  return params
end

--- Merges explicit options (from `require('kenning').search(query, opts)`) over the parsed text;
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
