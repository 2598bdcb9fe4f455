-- The Neovim plugin against what the real server sends: tests/golden/*.json, recorded from a real
-- `kenning serve --stdio` by tests/lsp/test_golden.py. Two checks:
--  * the plugin's LuaLS classes (---@class / ---@field in lua/kenning/*.lua) declare exactly the
--    fields the server sends: an undeclared field, a required field never sent, or an optional
--    field no sample carries fails (a field on one side only);
--  * the plugin's own parsers (results.format, to_qf_item, show, format_status, on_index_status)
--    take every recorded response.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')
H.load_plugin()

local plugin = H.env('KENNING_NVIM_PLUGIN')
local golden_dir = H.env('KENNING_GOLDEN_DIR')

---@param name string
---@return { method: string, samples: any[] }
local function golden(name)
  local file = assert(io.open(golden_dir .. '/' .. name .. '.json', 'r'))
  local text = file:read('*a')
  file:close()
  -- Like vim.lsp's decoder: JSON null stays vim.NIL inside objects.
  return vim.json.decode(text)
end

-- The classes the plugin declares: name -> { parent?, fields = { name -> { type, optional } } }.
local classes = {}
for _, path in ipairs(vim.fn.glob(plugin .. '/lua/kenning/*.lua', false, true)) do
  local current
  for line in io.lines(path) do
    local name, parent = line:match('^%-%-%-@class%s+([%w%.]+)%s*:%s*([%w%.]+)')
    name = name or line:match('^%-%-%-@class%s+([%w%.]+)')
    if name then
      current = { parent = parent, fields = {} }
      classes[name] = current
    elseif current and line:match('^%-%-%-@field') then
      local field, optional, type_ = line:match('^%-%-%-@field%s+([%w_]+)(%??)%s+(%S+)')
      H.check(field, 'cannot read the annotation: ' .. line)
      current.fields[field] = { type = type_, optional = optional == '?' }
    elseif not line:match('^%-%-%-') then
      current = nil
    end
  end
end

--- Every field of `name`, its parents' included.
local function fields_of(name)
  local class = classes[name]
  H.check(class, 'the plugin declares no class ' .. name)
  local all = class.parent and vim.deepcopy(fields_of(class.parent)) or {}
  for field, spec in pairs(class.fields) do
    all[field] = vim.tbl_extend('force', spec, { owner = name })
  end
  for _, spec in pairs(all) do
    spec.owner = spec.owner or class.parent
  end
  return all
end

local seen = {} ---@type table<string, boolean> "class.field" -> carried by some sample
local problems = {} ---@type string[]

local check_value

--- Whether `value` fits the annotation `type_` (a union of alternatives separated by '|').
local function fits(value, type_, path)
  local errors = {}
  -- split on '|' outside of quotes
  for alternative in (type_ .. '|'):gmatch('([^|]+)|') do
    local before = #problems
    check_value(value, alternative, path)
    if #problems == before then
      return true
    end
    for i = #problems, before + 1, -1 do
      table.insert(errors, table.remove(problems, i))
    end
  end
  table.insert(
    problems,
    ('%s: %s fits none of %s (%s)'):format(path, vim.inspect(value), type_, table.concat(errors, '; '))
  )
  return false
end

function check_value(value, type_, path)
  local array_of = type_:match('^(.+)%[%]$')
  if type_:find('|', 1, true) then
    fits(value, type_, path)
  elseif array_of then
    if type(value) ~= 'table' or not vim.islist(value) then
      table.insert(problems, path .. ': expected an array')
      return
    end
    for i, item in ipairs(value) do
      check_value(item, array_of, ('%s[%d]'):format(path, i))
    end
  elseif type_:match("^'.*'$") then
    if value ~= type_:sub(2, -2) then
      table.insert(problems, ('%s: expected %s, got %s'):format(path, type_, vim.inspect(value)))
    end
  elseif type_ == 'string' or type_ == 'boolean' or type_ == 'number' then
    if type(value) ~= type_ then
      table.insert(problems, ('%s: expected a %s, got %s'):format(path, type_, vim.inspect(value)))
    end
  elseif type_ == 'integer' then
    if type(value) ~= 'number' or value % 1 ~= 0 then
      table.insert(problems, ('%s: expected an integer, got %s'):format(path, vim.inspect(value)))
    end
  elseif type_ == 'vim.NIL' then
    if value ~= vim.NIL then
      table.insert(problems, ('%s: expected null, got %s'):format(path, vim.inspect(value)))
    end
  elseif type_ == 'lsp.Range' then
    local ok = type(value) == 'table'
      and type(value.start) == 'table'
      and type(value['end']) == 'table'
      and type(value.start.line) == 'number'
      and type(value.start.character) == 'number'
      and type(value['end'].line) == 'number'
      and type(value['end'].character) == 'number'
    if not ok then
      table.insert(problems, path .. ': expected an lsp.Range')
    end
  elseif classes[type_] then
    if type(value) ~= 'table' or (vim.islist(value) and next(value) ~= nil) then
      table.insert(problems, ('%s: expected an object (%s)'):format(path, type_))
      return
    end
    local fields = fields_of(type_)
    for key in pairs(value) do
      if not fields[key] then
        table.insert(problems, ('%s.%s: the server sends it, %s does not declare it'):format(path, key, type_))
      end
    end
    for field, spec in pairs(fields) do
      local key = spec.owner .. '.' .. field
      seen[key] = seen[key] or false
      if value[field] == nil then
        if not spec.optional then
          table.insert(problems, ('%s.%s: %s requires it, the server did not send it'):format(path, field, type_))
        end
      else
        seen[key] = true
        check_value(value[field], spec.type, path .. '.' .. field)
      end
    end
  else
    table.insert(problems, ('%s: no rule for the annotation %s'):format(path, type_))
  end
end

-- golden file -> the plugin class of each sample
local expected = {
  indexStatus = { class = 'kenning.IndexStatus', method = 'kenning/indexStatus' },
  semanticSearch = { class = 'kenning.SearchResult', method = 'workspace/semanticSearch' },
  similar = { class = 'kenning.SearchResult', method = 'kenning/similar' },
  status = { class = 'kenning.IndexStatusReport[]', method = 'workspace/executeCommand kenning.status' },
}
for name, want in pairs(expected) do
  local file = golden(name)
  H.eq(file.method, want.method, name .. '.json method')
  H.check(#file.samples > 0, name .. '.json has no samples')
  for i, sample in ipairs(file.samples) do
    check_value(sample, want.class, ('%s[%d]'):format(name, i))
  end
end
H.check(#problems == 0, 'the plugin and the server disagree:\n' .. table.concat(problems, '\n'))
local never = {}
for key, carried in pairs(seen) do
  if not carried then
    table.insert(never, key)
  end
end
table.sort(never)
H.eq(never, {}, 'fields the plugin declares that no recorded response carries')

-- The method and command names the plugin sends.
local kenning = require('kenning')
H.eq(golden('semanticSearch').method, kenning.methods.semantic_search, 'semanticSearch method')
H.eq(golden('similar').method, kenning.methods.similar, 'similar method')
H.eq(golden('indexStatus').method, kenning.methods.index_status, 'indexStatus method')
H.eq(golden('status').method, 'workspace/executeCommand ' .. kenning.methods.cmd_status, 'status command')
H.eq(golden('reindex').method, 'workspace/executeCommand ' .. kenning.methods.cmd_reindex, 'reindex command')
H.eq(golden('reindex').samples, { vim.NIL }, 'kenning.reindex answers null')

-- The plugin's parsers on every recorded response.
local results = require('kenning.results')
for _, name in ipairs({ 'semanticSearch', 'similar' }) do
  for i, response in ipairs(golden(name).samples) do
    for j, hit in ipairs(response.results) do
      local line = results.format(hit)
      local where = ('%s:%d'):format(vim.fs.basename(vim.uri_to_fname(hit.uri)), hit.range.start.line + 1)
      H.check(line:find(where, 1, true), ('%s[%d] hit %d: format() lacks %s'):format(name, i, j, where), line)
      if hit.symbol then
        H.check(
          line:find(hit.symbol.name, 1, true),
          ('%s[%d] hit %d: format() lacks the symbol'):format(name, i, j),
          line
        )
      end
      local item = results.to_qf_item(hit)
      H.eq(item.lnum, hit.range.start.line + 1, name .. ' qf lnum')
      H.eq(item.end_lnum, hit.range['end'].line + 1, name .. ' qf end_lnum')
    end
    results.show(response, { title = 'golden ' .. name, qf = true, encoding = 'utf-16' })
    H.eq(#vim.fn.getqflist(), #response.results, name .. ' quickfix items')
    vim.cmd('cclose')
  end
end
for i, status in ipairs(golden('indexStatus').samples) do
  local line = kenning.format_status(status)
  H.check(line:find('ws: ' .. status.state, 1, true), ('indexStatus[%d]: format_status()'):format(i), line)
  if status.message then
    H.check(line:find(status.message, 1, true), ('indexStatus[%d]: the message is shown'):format(i), line)
  end
  kenning.on_index_status(nil, status, { client_id = 1, method = 'kenning/indexStatus' })
  H.eq(kenning.index_status[1][status.folder], status, 'on_index_status remembers the status')
end
for _, report in ipairs(golden('status').samples[1]) do
  H.check(kenning.format_status(report):find('ws: ready', 1, true), 'format_status() of a kenning.status report')
end

print('ok')
