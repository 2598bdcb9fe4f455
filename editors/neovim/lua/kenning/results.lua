--- Shows kenning's search hits: a `vim.ui.select` picker (telescope, fzf-lua, snacks and mini.pick
--- take it over when installed) or the quickfix list, and jumps to the chosen hit.

local M = {}

---@class kenning.HitSymbol
---@field name string
---@field kind string
---@field containerName? string

---@class kenning.HitMatch
---@field denseRank integer|vim.NIL 1-based rank in the dense half, null when absent
---@field lexicalRank integer|vim.NIL

---@class kenning.Hit
---@field uri string
---@field range lsp.Range
---@field score number
---@field preview string
---@field symbol? kenning.HitSymbol
---@field language string
---@field match kenning.HitMatch

---@class kenning.IndexSummary
---@field state 'scanning'|'embedding'|'ready'|'error'
---@field files integer
---@field chunks integer
---@field embedded integer
---@field pending integer
---@field lexicalOnly? boolean

---@class kenning.SearchResult
---@field results kenning.Hit[]
---@field index kenning.IndexSummary

---@class kenning.ShowOpts
---@field title string shown as the picker prompt / quickfix title
---@field qf? boolean the quickfix list instead of the picker
---@field encoding string the client's position encoding

---@param text? string
---@return string
local function first_line(text)
  return vim.trim((text or ''):match('^[^\n]*'))
end

--- The hit's file, relative to the current directory (or `~`) when it is inside it.
---@param hit kenning.Hit
---@return string
function M.path(hit)
  return vim.fn.fnamemodify(vim.uri_to_fname(hit.uri), ':~:.')
end

---@param hit kenning.Hit
---@return string? `Container.name`, or nil when the hit is outside any definition
function M.symbol_name(hit)
  local symbol = hit.symbol
  if not symbol then
    return nil
  end
  if symbol.containerName and symbol.containerName ~= '' then
    return symbol.containerName .. '.' .. symbol.name
  end
  return symbol.name
end

--- `symbol — path:line  preview`, the line 1-based; without a symbol, `path:line  preview`.
---@param hit kenning.Hit
---@return string
function M.format(hit)
  local where = ('%s:%d  %s'):format(M.path(hit), hit.range.start.line + 1, first_line(hit.preview))
  local symbol = M.symbol_name(hit)
  return symbol and ('%s — %s'):format(symbol, where) or where
end

---@param hit kenning.Hit
---@return vim.quickfix.entry
function M.to_qf_item(hit)
  local symbol = M.symbol_name(hit)
  local preview = first_line(hit.preview)
  return {
    filename = vim.uri_to_fname(hit.uri),
    lnum = hit.range.start.line + 1,
    end_lnum = hit.range['end'].line + 1,
    col = 1,
    text = symbol and ('%s — %s'):format(symbol, preview) or preview,
    user_data = hit,
  }
end

--- Opens the hit's file in the current window, cursor on its first line, centred.
---@param hit kenning.Hit
---@param encoding string
function M.jump(hit, encoding)
  vim.lsp.util.show_document({ uri = hit.uri, range = hit.range }, encoding, { focus = true })
  vim.cmd('normal! zz')
end

---@param hits kenning.Hit[]
---@param title string
function M.to_quickfix(hits, title)
  vim.fn.setqflist({}, ' ', { title = title, items = vim.tbl_map(M.to_qf_item, hits) })
  vim.cmd('botright copen')
end

---@param hits kenning.Hit[]
---@param title string
---@param encoding string
function M.pick(hits, title, encoding)
  vim.ui.select(hits, { prompt = title, kind = 'kenning', format_item = M.format }, function(hit)
    if hit then
      M.jump(hit, encoding)
    end
  end)
end

--- Why there is nothing to show, with the index state when it is not ready yet.
---@param index? kenning.IndexSummary
---@param title string
---@return string
local function empty_message(index, title)
  local msg = ('%s: no results'):format(title)
  if index and index.state ~= 'ready' then
    msg = ('%s (the index is %s: %d files so far)'):format(msg, index.state, index.files)
  end
  return msg
end

---@param response kenning.SearchResult
---@param opts kenning.ShowOpts
function M.show(response, opts)
  local hits = response.results or {}
  if #hits == 0 then
    vim.notify(empty_message(response.index, opts.title), vim.log.levels.INFO)
    return
  end
  if opts.qf then
    M.to_quickfix(hits, opts.title)
  else
    M.pick(hits, opts.title, opts.encoding)
  end
end

return M
