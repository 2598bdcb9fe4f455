--- kenning for Neovim: semantic search, "find similar code" and the index status, over the
--- kenning language server's custom requests (docs/protocol.md).
---
--- ```lua
--- require('kenning').setup()                       -- vim.lsp.config + vim.lsp.enable
--- require('kenning').search('retry failed uploads lang:python')
--- require('kenning').search('parseHttpHeader', { qf = true })
--- vim.keymap.set('x', '<leader>ks', require('kenning').similar)
--- ```

local query = require('kenning.query')
local results = require('kenning.results')
local selection = require('kenning.selection')

local M = {}

M.name = 'kenning'

M.methods = {
  semantic_search = 'workspace/semanticSearch',
  similar = 'kenning/similar',
  index_status = 'kenning/indexStatus',
  cmd_status = 'kenning.status',
  cmd_reindex = 'kenning.reindex',
}

---@class kenning.IndexStatus
---@field folder string the workspace folder's URI
---@field state 'scanning'|'embedding'|'ready'|'error'
---@field files integer
---@field chunks integer
---@field embedded integer
---@field pending integer
---@field skipped integer
---@field message? string
---@field embeddingEndpoint? string the host that receives code for embedding, if not local
---@field origin? kenning.VectorOrigin where the vectors came from (once the index is open)
---@field sharedCache? kenning.SharedCacheInfo the user-level embedding cache (once open)

---@class kenning.VectorOrigin
---@field computed integer
---@field store integer
---@field sharedCache integer
---@field pack integer

---@class kenning.SharedCacheInfo
---@field enabled boolean
---@field bytes integer
---@field maxBytes integer

--- One folder in the answer of the `kenning.status` command.
---@class kenning.IndexStatusReport : kenning.IndexStatus
---@field reindexJobs integer how many indexing jobs the folder has run

--- The last `kenning/indexStatus` of each folder, by client id and folder URI.
---@type table<integer, table<string, kenning.IndexStatus>>
M.index_status = {}

---@param msg string
---@param level? integer
local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = M.name })
end

--- Configures and enables the server: `opts` (any `vim.lsp.Config` field — `cmd`, `init_options`,
--- `root_markers`, …) is merged over `lsp/kenning.lua`.
---@param opts? vim.lsp.Config
function M.setup(opts)
  if opts and next(opts) then
    vim.lsp.config(M.name, opts)
  end
  vim.lsp.enable(M.name)
end

--- The kenning client of `bufnr`, else any running kenning client (a search from a scratch buffer
--- still searches the project); reports an error when there is none.
---@param bufnr integer
---@return vim.lsp.Client?
function M.get_client(bufnr)
  local client = vim.lsp.get_clients({ name = M.name, bufnr = bufnr })[1] or vim.lsp.get_clients({ name = M.name })[1]
  if not client then
    notify(
      'kenning: no language server is running; open a file in a project with'
        .. " vim.lsp.enable('kenning') set up (see :checkhealth kenning)",
      vim.log.levels.ERROR
    )
  end
  return client
end

--- Sends a request; `on_result` gets the result, an error is reported instead.
---@param client vim.lsp.Client
---@param method string
---@param params table
---@param bufnr integer
---@param on_result fun(result: any)
local function request(client, method, params, bufnr, on_result)
  client:request(method, params, function(err, result)
    if err then
      notify(('kenning: %s failed: %s'):format(method, err.message), vim.log.levels.ERROR)
    elseif result ~= nil then
      on_result(result)
    end
  end, bufnr)
end

---@class kenning.SearchOpts
---@field qf? boolean results to the quickfix list instead of `vim.ui.select`
---@field limit? integer 1–200 (default: the server's `maxResults`)
---@field mode? kenning.Mode
---@field filters? kenning.Filters combined with the inline ones

--- Searches the workspace by description. `text` may hold inline filters
--- (`lang:python path:src/** ext:ts mode:lexical`, see kenning.query). Without `text`, asks for it.
---@param text? string
---@param opts? kenning.SearchOpts
function M.search(text, opts)
  opts = opts or {}
  if not text or vim.trim(text) == '' then
    vim.ui.input({ prompt = 'kenning search: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        M.search(input, opts)
      end
    end)
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.get_client(bufnr)
  if not client then
    return
  end
  local parsed, problems = query.parse(text)
  for _, problem in ipairs(problems) do
    notify('kenning: ' .. problem, vim.log.levels.WARN)
  end
  local params = query.merge(parsed, opts)
  request(client, M.methods.semantic_search, params, bufnr, function(result)
    local title = 'kenning: ' .. text
    results.show(result, { title = title, qf = opts.qf, encoding = client.offset_encoding })
  end)
end

---@class kenning.SimilarOpts
---@field line1? integer first line of a command range (1-based)
---@field line2? integer last line of a command range
---@field qf? boolean
---@field limit? integer

--- "Find code like this": the command range, else the visual selection, else the code around
--- the cursor.
---@param opts? kenning.SimilarOpts
function M.similar(opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.get_client(bufnr)
  if not client then
    return
  end
  local encoding = client.offset_encoding
  local range = opts.line1 and selection.from_command(bufnr, opts.line1, opts.line2, encoding)
    or selection.current(bufnr, encoding)
  if vim.api.nvim_get_mode().mode:match('^[vV\22]') then
    vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'nx', false)
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, range = range, limit = opts.limit }
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':~:.')
  local title = ('kenning: like %s:%d'):format(name, range.start.line + 1)
  request(client, M.methods.similar, params, bufnr, function(result)
    results.show(result, { title = title, qf = opts.qf, encoding = encoding })
  end)
end

--- One line per folder: `name: state — 12 files, 340 chunks (300 embedded, 40 pending), 2 skipped`.
---@param status kenning.IndexStatus
---@return string
function M.format_status(status)
  local name = vim.fs.basename(vim.uri_to_fname(status.folder))
  local line = ('%s: %s — %d files, %d chunks (%d embedded, %d pending), %d skipped'):format(
    name,
    status.state,
    status.files,
    status.chunks,
    status.embedded,
    status.pending,
    status.skipped
  )
  if status.embeddingEndpoint and status.embeddingEndpoint ~= vim.NIL then
    line = line .. ' — code embedded at ' .. status.embeddingEndpoint
  end
  if status.message and status.message ~= vim.NIL then
    line = line .. ' — ' .. status.message
  end
  return line
end

--- Runs a `workspace/executeCommand` on the current buffer's kenning client.
---@param command string
---@param arguments? any[]
---@param on_result fun(result: any, client: vim.lsp.Client)
local function exec(command, arguments, on_result)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.get_client(bufnr)
  if not client then
    return
  end
  local cmd = { title = command, command = command, arguments = arguments }
  client:exec_cmd(cmd, { bufnr = bufnr }, function(err, result)
    if err then
      notify(('kenning: %s failed: %s'):format(command, err.message), vim.log.levels.ERROR)
    else
      on_result(result, client)
    end
  end)
end

--- Notifies the index state of every folder (`kenning.status`).
function M.status()
  exec(M.methods.cmd_status, nil, function(statuses)
    if type(statuses) ~= 'table' or #statuses == 0 then
      notify('kenning: no workspace folder is indexed')
      return
    end
    local lines = vim.tbl_map(M.format_status, statuses)
    notify('kenning: ' .. table.concat(lines, '\n'))
  end)
end

--- Starts a full rescan of every folder in the background (`kenning.reindex`).
function M.reindex()
  exec(M.methods.cmd_reindex, nil, function()
    notify('kenning: re-indexing in the background')
  end)
end

--- Handler of `kenning/indexStatus` (installed by `lsp/kenning.lua`): remembers the state and
--- fires `User KenningIndexStatus` with `data = { client_id, status }` for statuslines.
---@param result kenning.IndexStatus
---@param ctx lsp.HandlerContext
function M.on_index_status(_, result, ctx)
  local by_folder = M.index_status[ctx.client_id] or {}
  M.index_status[ctx.client_id] = by_folder
  local previous = by_folder[result.folder]
  by_folder[result.folder] = result
  if result.state == 'error' and (not previous or previous.state ~= 'error') then
    notify('kenning: indexing failed: ' .. M.format_status(result), vim.log.levels.WARN)
  end
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'KenningIndexStatus',
    modeline = false,
    data = { client_id = ctx.client_id, status = result },
  })
end

return M
