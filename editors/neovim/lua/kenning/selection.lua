--- The LSP range of what the user selected, for `kenning/similar`.
---
--- Sources, in order: a command range (`:'<,'>KenningSimilar`, `:10,20KenningSimilar`), a visual
--- selection still active (a Lua mapping in `x` mode runs before `'<` and `'>` are set), or the
--- cursor alone (an empty range: the server takes the chunk around it).

local M = {}

local api = vim.api

---@alias kenning.Pos { [1]: integer, [2]: integer } 1-based line, 0-based byte column

---@param bufnr integer
---@param row integer 1-based
---@return string
local function get_line(bufnr, row)
  return api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1] or ''
end

--- An LSP position; `col` past the end of the line (as in linewise visual mode) is clamped.
---@param bufnr integer
---@param pos kenning.Pos
---@param encoding string
---@return lsp.Position
local function lsp_position(bufnr, pos, encoding)
  local line = get_line(bufnr, pos[1])
  local col = math.min(pos[2], #line)
  return { line = pos[1] - 1, character = vim.str_utfindex(line, encoding, col, false) }
end

--- The byte just past the character that starts at `pos` (visual ends are inclusive).
---@param bufnr integer
---@param pos kenning.Pos
---@return kenning.Pos
local function after_char(bufnr, pos)
  local line = get_line(bufnr, pos[1])
  if pos[2] >= #line then
    return { pos[1], #line }
  end
  return { pos[1], pos[2] + 1 + vim.str_utf_end(line, pos[2] + 1) }
end

---@param bufnr integer
---@param first kenning.Pos
---@param last kenning.Pos inclusive
---@param linewise boolean
---@param encoding string
---@return lsp.Range
function M.range(bufnr, first, last, linewise, encoding)
  if linewise then
    first, last = { first[1], 0 }, { last[1], math.huge }
  else
    last = after_char(bufnr, last)
  end
  return {
    start = lsp_position(bufnr, first, encoding),
    ['end'] = lsp_position(bufnr, last, encoding),
  }
end

---@param a kenning.Pos
---@param b kenning.Pos
---@return kenning.Pos, kenning.Pos
local function ordered(a, b)
  if a[1] < b[1] or (a[1] == b[1] and a[2] <= b[2]) then
    return a, b
  end
  return b, a
end

--- `{line, col}` of a `getpos()` result.
---@param p integer[]
---@return kenning.Pos
local function from_getpos(p)
  return { p[2], p[3] - 1 }
end

--- The range of lines `line1`–`line2` from a command; when they are the last visual selection's
--- lines and it was charwise, its exact columns.
---@param bufnr integer
---@param line1 integer
---@param line2 integer
---@param encoding string
---@return lsp.Range
function M.from_command(bufnr, line1, line2, encoding)
  local first, last = api.nvim_buf_get_mark(bufnr, '<'), api.nvim_buf_get_mark(bufnr, '>')
  local charwise = vim.fn.visualmode() == 'v' and first[1] == line1 and last[1] == line2
  if charwise then
    return M.range(bufnr, first, last, false, encoding)
  end
  return M.range(bufnr, { line1, 0 }, { line2, 0 }, true, encoding)
end

--- The active visual selection, or an empty range at the cursor outside visual mode.
---@param bufnr integer
---@param encoding string
---@return lsp.Range
function M.current(bufnr, encoding)
  local mode = api.nvim_get_mode().mode
  local cursor = from_getpos(vim.fn.getpos('.'))
  if not mode:match('^[vV\22]') then
    local pos = lsp_position(bufnr, cursor, encoding)
    return { start = pos, ['end'] = pos }
  end
  local first, last = ordered(from_getpos(vim.fn.getpos('v')), cursor)
  return M.range(bufnr, first, last, mode ~= 'v', encoding)
end

return M
