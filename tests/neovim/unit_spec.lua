-- The plugin without a server: the config lsp/kenning.lua returns, commands, query parsing,
-- result formatting, selection ranges, setup() and the index-status handler.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')
H.load_plugin()

-- lsp/kenning.lua, as vim.lsp.config resolves it from 'runtimepath'.
local config = vim.lsp.config.kenning
H.check(config, 'vim.lsp.config.kenning is nil: lsp/kenning.lua not found on runtimepath')
H.eq(config.cmd, { 'kenning', 'serve' }, 'cmd')
H.eq(config.filetypes, nil, 'filetypes (nil attaches to every filetype)')
H.eq({ config.root_markers[1], config.root_markers[2] }, { '.git', '.kenning' }, 'root_markers')
-- The server owns the defaults: the config sends none of its own (a copy would override it).
H.eq(config.init_options, nil, 'no init_options: the server decides the defaults')
H.check(type(config.handlers['kenning/indexStatus']) == 'function', 'no kenning/indexStatus handler')

-- User commands from plugin/kenning.lua.
local commands = vim.api.nvim_get_commands({})
for _, name in ipairs({ 'KenningSearch', 'KenningSimilar', 'KenningStatus', 'KenningReindex' }) do
  H.check(commands[name], 'missing command :' .. name)
end
H.check(commands.KenningSearch.bang, ':KenningSearch takes a bang')
H.check(commands.KenningSimilar.range ~= nil and commands.KenningSimilar.range ~= '', ':KenningSimilar takes a range')

H.eq(
  vim.fn.getcompletion('KenningSearch! retry mo', 'cmdline'),
  { 'mode:hybrid', 'mode:semantic', 'mode:lexical' },
  'completion'
)

-- Inline filters (the syntax of the VS Code search box).
local query = require('kenning.query')
---@param input string
---@return kenning.SearchParams, string[]
local function parse(input)
  return query.parse(input)
end
-- The cases shared with the VS Code client's parser (src/query.ts).
local cases_path = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../query_syntax.json'
local cases = vim.json.decode(table.concat(vim.fn.readfile(cases_path), '\n')).cases
H.check(#cases > 10, 'tests/query_syntax.json has no cases')
for _, case in ipairs(cases) do
  local params, problems = parse(case.input)
  H.eq(params, case.params, case.name)
  local want = case.problems or {}
  H.eq(#problems, #want, case.name .. ': problems')
  for i, text in ipairs(want) do
    H.check(problems[i]:find(text, 1, true), case.name .. ': problem text', problems)
  end
end
H.eq(
  select(2, query.parse(('a'):rep(1001))),
  { 'the query is too long; the server takes at most 1000 characters' },
  'too long'
)
H.eq(
  query.merge(parse('x ext:ts'), { limit = 5, filters = { extensions = { 'js' }, paths = { 'a/**' } } }),
  { query = 'x', limit = 5, filters = { extensions = { 'ts', 'js' }, paths = { 'a/**' } } },
  'opts merged over inline filters'
)

-- Result formatting.
local results = require('kenning.results')
local cwd = vim.fn.getcwd()
local hit = {
  uri = vim.uri_from_fname(cwd .. '/web/headers.js'),
  range = { start = { line = 1, character = 0 }, ['end'] = { line = 8, character = 1 } },
  score = 0.5,
  preview = '  export function parseHttpHeader(raw) {\n  const headers = new Map();',
  symbol = { name = 'parseHttpHeader', kind = 'function' },
  language = 'javascript',
}
H.eq(results.format(hit), 'parseHttpHeader — web/headers.js:2  export function parseHttpHeader(raw) {', 'format')
local method = vim.tbl_extend('force', hit, { symbol = { name = 'add', kind = 'method', containerName = 'CookieJar' } })
H.eq(results.format(method):match('^[^ ]+'), 'CookieJar.add', 'format with a container')
local bare = vim.tbl_extend('force', hit, { preview = 'x' })
bare.symbol = nil
H.eq(results.format(bare), 'web/headers.js:2  x', 'format without a symbol')
local item = results.to_qf_item(hit)
H.eq({ item.filename, item.lnum, item.end_lnum, item.col }, { cwd .. '/web/headers.js', 2, 9, 1 }, 'qf item')

-- Selection ranges: UTF-16 columns, inclusive visual ends, linewise to the end of the line.
local selection = require('kenning.selection')
local buf = vim.api.nvim_create_buf(false, true)
vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'ab€d', 'x😀yz', 'last' })
H.eq(selection.range(buf, { 1, 2 }, { 2, 1 }, false, 'utf-16'), {
  start = { line = 0, character = 2 },
  ['end'] = { line = 1, character = 3 }, -- after the emoji: 1 + 2 UTF-16 units
}, 'charwise range')
H.eq(selection.range(buf, { 1, 2 }, { 2, 1 }, false, 'utf-8').start.character, 2, 'utf-8 start')
H.eq(selection.range(buf, { 2, 5 }, { 3, vim.v.maxcol }, true, 'utf-16'), {
  start = { line = 1, character = 0 },
  ['end'] = { line = 2, character = 4 },
}, 'linewise range')
vim.api.nvim_set_current_buf(buf)
vim.api.nvim_win_set_cursor(0, { 2, 5 }) -- on 'y', after the 4-byte emoji
H.eq(selection.current(buf, 'utf-16'), {
  start = { line = 1, character = 3 },
  ['end'] = { line = 1, character = 3 },
}, 'no selection: empty range at the cursor')
vim.cmd('normal! 1G0lvj') -- still in visual mode, as in an `x` mapping: '< and '> are not set yet
H.eq(selection.current(buf, 'utf-16'), {
  start = { line = 0, character = 1 },
  ['end'] = { line = 1, character = 3 },
}, 'an active charwise selection')
vim.cmd('normal! \27')
vim.cmd('normal! 2G$Vk')
H.eq(selection.current(buf, 'utf-16'), {
  start = { line = 0, character = 0 },
  ['end'] = { line = 1, character = 5 },
}, 'an active linewise selection, made upwards')
vim.cmd('normal! \27')
vim.cmd('normal! 1G0lllVj\27')
H.eq(selection.from_command(buf, 1, 2, 'utf-16'), {
  start = { line = 0, character = 0 },
  ['end'] = { line = 1, character = 5 },
}, ":'<,'> after a linewise selection")
vim.cmd('normal! 1G0lvj\27')
H.eq(selection.from_command(buf, 1, 2, 'utf-16'), {
  start = { line = 0, character = 1 },
  ['end'] = { line = 1, character = 3 },
}, ":'<,'> after a charwise selection")

-- Without a server, commands say so instead of failing.
local notes = H.capture_notify()
vim.cmd('KenningSearch anything')
H.check(#notes == 1 and notes[1].level == vim.log.levels.ERROR, 'no error without a client', notes)
H.check(notes[1].msg:find('no language server', 1, true), 'unexpected message', notes)

-- The index-status handler remembers the state and fires User KenningIndexStatus.
local fired
vim.api.nvim_create_autocmd('User', {
  pattern = 'KenningIndexStatus',
  callback = function(args)
    fired = args.data
  end,
})
local status = {
  folder = vim.uri_from_fname(cwd),
  state = 'error',
  files = 1,
  chunks = 2,
  embedded = 0,
  pending = 2,
  skipped = 0,
  message = 'disk full',
}
config.handlers['kenning/indexStatus'](nil, status, { client_id = 7, method = 'kenning/indexStatus' })
H.eq(fired, { client_id = 7, status = status }, 'autocmd data')
H.eq(require('kenning').index_status[7][status.folder], status, 'remembered status')
H.check(notes[#notes].msg:find('disk full', 1, true), 'an indexing error is notified', notes)

-- setup() merges options over lsp/kenning.lua and enables the config.
require('kenning').setup({ cmd = { 'python3', '-m', 'kenning', 'serve' }, init_options = { maxResults = 50 } })
H.check(vim.lsp.is_enabled('kenning'), 'setup() did not enable kenning')
H.eq(vim.lsp.config.kenning.cmd, { 'python3', '-m', 'kenning', 'serve' }, 'cmd after setup')
H.eq(vim.lsp.config.kenning.init_options.maxResults, 50, 'init_options override')
H.eq(vim.lsp.config.kenning.init_options.symbolLimit, nil, 'no default copied in beside it')

io.stdout:write('ok\n')
