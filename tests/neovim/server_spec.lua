-- The plugin against the real kenning server on a fixture workspace: attach, index progress and
-- readiness, :KenningSearch! into the quickfix list (with inline filters and an invalid one),
-- workspace/symbol, the vim.ui.select picker jumping to a hit, :KenningSimilar, :KenningStatus,
-- and a clean stop.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')
H.load_plugin()

local ws = vim.fs.normalize(H.env('KENNING_TEST_WORKSPACE'))
local cmd = vim.json.decode(H.env('KENNING_TEST_CMD'))
local READY_MS = tonumber(os.getenv('KENNING_TEST_READY_MS')) or 120000

local statuses = {} ---@type kenning.IndexStatus[]
local progress = {} ---@type table[] `$/progress` values, in order
local notes = H.capture_notify()

H.abort = function()
  for _, note in ipairs(notes) do
    if note.msg:find('quit with exit code', 1, true) then
      return 'the server exited (its stderr is in lsp.log)'
    end
  end
end
H.context = function()
  return { statuses = statuses, progress = progress, notes = notes, clients = #vim.lsp.get_clients() }
end

vim.api.nvim_create_autocmd('User', {
  pattern = 'KenningIndexStatus',
  callback = function(args)
    table.insert(statuses, args.data.status)
  end,
})
vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(args)
    table.insert(progress, args.data.params.value)
  end,
})

---@param path string
---@param suffix string
---@return boolean
local function ends_with(path, suffix)
  return vim.endswith(vim.fs.normalize(path), '/' .. suffix)
end

--- Runs an Ex command that fills the quickfix list and waits for the list it makes.
---@param ex string
---@param title string
---@return vim.quickfix.entry[]
local function quickfix_search(ex, title)
  vim.fn.setqflist({}, 'r', { title = 'pending', items = {} })
  local before = #notes
  vim.cmd(ex)
  H.wait_for(ex .. ' to fill the quickfix list', function()
    return #notes > before or vim.fn.getqflist({ title = 0 }).title == title
  end, 30000)
  H.check(#notes == before, ex .. ': a notification instead of results', notes[#notes])
  local items = vim.fn.getqflist()
  H.check(#items > 0, ex .. ': empty quickfix list')
  return items
end

---@param item vim.quickfix.entry
---@return string
local function qf_file(item)
  return vim.api.nvim_buf_get_name(item.bufnr)
end

-- Start: the config from lsp/kenning.lua, with the test's interpreter as the command.
vim.lsp.config('kenning', { cmd = cmd })
vim.lsp.enable('kenning')
vim.cmd.cd(ws)
vim.cmd.edit('uploads.py')

H.step('started')
H.wait_for('the kenning client to attach', function()
  return #vim.lsp.get_clients({ name = 'kenning', bufnr = 0 }) == 1
end, 30000)
local client = vim.lsp.get_clients({ name = 'kenning', bufnr = 0 })[1]
H.eq(client.root_dir, ws, 'root_dir (the .git folder)')

H.step('attached')
H.wait_for('kenning/indexStatus "ready"', function()
  local last = statuses[#statuses]
  return last and last.state == 'ready' and last.files >= 5
end, READY_MS)
H.eq(statuses[#statuses].folder, vim.uri_from_fname(ws), 'status folder')

H.step('ready')
-- Standard LSP progress: what vim.lsp.status() and fidget-style plugins show.
H.wait_for('the indexing progress to end', function()
  return progress[#progress] and progress[#progress].kind == 'end'
end, 10000)
H.check(progress[1].kind == 'begin' and progress[1].title:find('^kenning: indexing '), 'progress begin', progress[1])

H.step('progress checked')
-- :KenningSearch! → quickfix list, best first.
local items = quickfix_search('KenningSearch! parseHttpHeader', 'kenning: parseHttpHeader')
H.check(ends_with(qf_file(items[1]), 'web/headers.js'), 'headers.js is not first', vim.tbl_map(qf_file, items))
local hit = items[1].user_data ---@type kenning.Hit
H.eq(
  { items[1].lnum, items[1].end_lnum },
  { hit.range.start.line + 1, hit.range['end'].line + 1 },
  'qf lines (1-based)'
)
H.check(items[1].lnum <= 2 and items[1].text:find('^parseHttpHeader — '), 'first item', items[1])
H.check(vim.fn.getqflist({ winid = 0 }).winid ~= 0, 'the quickfix window is not open')

-- Inline filters reach the server: only Python files, then only files under web/.
items = quickfix_search('KenningSearch! retry failed uploads lang:python', 'kenning: retry failed uploads lang:python')
for _, item in ipairs(items) do
  H.check(vim.endswith(qf_file(item), '.py'), 'lang:python let another file through', qf_file(item))
end
H.check(ends_with(qf_file(items[1]), 'uploads.py'), 'uploads.py is not first', vim.tbl_map(qf_file, items))
items = quickfix_search('KenningSearch! header path:web/** mode:lexical', 'kenning: header path:web/** mode:lexical')
for _, item in ipairs(items) do
  H.check(qf_file(item):find(ws .. '/web/', 1, true), 'path:web/** let another file through', qf_file(item))
end

-- A filter the server rejects is reported, not swallowed.
local before = #notes
vim.cmd('KenningSearch! upload lang:klingon')
H.wait_for('the error for lang:klingon', function()
  return #notes > before
end, 30000)
H.check(
  notes[#notes].level == vim.log.levels.ERROR and notes[#notes].msg:find('klingon', 1, true),
  'error note',
  notes[#notes]
)

H.step('quickfix searches done')
-- Back to the file window: the quickfix buffer has no client.
vim.cmd.cclose()
H.eq(vim.api.nvim_buf_get_name(0), ws .. '/uploads.py', 'current buffer')

-- workspace/symbol: fuzzy camel humps.
local responses, err = vim.lsp.buf_request_sync(0, 'workspace/symbol', { query = 'urp' }, 10000)
local symbols = responses and responses[client.id] and responses[client.id].result
H.check(symbols and #symbols > 0, 'no workspace/symbol result', responses or err)
H.eq(symbols[1].name, 'UploadRetryPolicy', 'first symbol for "urp"')
H.check(ends_with(vim.uri_to_fname(symbols[1].location.uri), 'uploads.py'), 'symbol location', symbols[1])

H.step('workspace/symbol done')
-- The picker: vim.ui.select gets formatted items; choosing the first jumps to it.
---@type { items: kenning.Hit[], opts: table }?
local picked
vim.ui.select = function(choices, opts, on_choice)
  picked = { items = choices, opts = opts }
  on_choice(choices[1], 1)
end
vim.cmd.edit('geometry.py')
vim.cmd('KenningSearch parseHttpHeader')
H.wait_for('vim.ui.select', function()
  return picked ~= nil
end, 30000)
---@cast picked -nil
local first = picked.items[1]
H.eq(picked.opts.prompt, 'kenning: parseHttpHeader', 'picker prompt')
local label = picked.opts.format_item(first)
H.check(
  label:find(('^parseHttpHeader — web/headers%%.js:%d  %%S'):format(first.range.start.line + 1)),
  'label',
  label
)
H.check(
  ends_with(vim.api.nvim_buf_get_name(0), 'web/headers.js'),
  'did not jump to headers.js',
  vim.api.nvim_buf_get_name(0)
)
H.eq(vim.api.nvim_win_get_cursor(0), { first.range.start.line + 1, 0 }, 'cursor after the jump')
H.check(first.range.start.line <= 1, 'the hit does not start at parseHttpHeader', first.range)

H.step('picker done')
-- :'<,'>KenningSimilar on UploadRetryPolicy.backoff: similar code, not the selection itself.
vim.cmd.edit('uploads.py')
local backoff = vim.fn.search('def backoff', 'w')
H.check(backoff > 0, 'def backoff not found')
vim.cmd(('normal! %dGVj\27'):format(backoff))
picked = nil
vim.cmd("'<,'>KenningSimilar")
H.wait_for(':KenningSimilar results', function()
  return picked ~= nil
end, 30000)
---@cast picked -nil
H.eq(picked.opts.prompt, ('kenning: like uploads.py:%d'):format(backoff), 'similar prompt')
for _, hit in ipairs(picked.items) do
  local same = ends_with(vim.uri_to_fname(hit.uri), 'uploads.py') and hit.range.start.line == backoff - 1
  H.check(not same, 'the selection itself came back', hit)
end

H.step('similar done')
-- :KenningStatus → a notification per folder.
before = #notes
vim.cmd('KenningStatus')
H.wait_for(':KenningStatus', function()
  return #notes > before
end, 10000)
local summary = notes[#notes].msg
H.check(summary:find('ws: ready — %d+ files, %d+ chunks %(%d+ embedded, 0 pending%)'), 'status summary', summary)

-- Nothing else complained (a rejected init_option would show up here as a warning).
for _, note in ipairs(notes) do
  local expected = note.msg:find('klingon', 1, true)
  H.check(expected or note.level == nil or note.level < vim.log.levels.WARN, 'unexpected warning', note)
end

H.step('status done')
-- :checkhealth kenning sees the running client and its folder.
vim.cmd('checkhealth kenning')
local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
H.check(report:find('OK enabled', 1, true), 'checkhealth: not enabled', report)
H.check(report:find(('client %d: ws: ready'):format(client.id), 1, true), 'checkhealth: no ready folder', report)

-- A clean stop.
vim.lsp.enable('kenning', false)
H.wait_for('the client to stop', function()
  return #vim.lsp.get_clients() == 0
end, 20000)
H.step('stopped')
io.stdout:write('ok\n')
