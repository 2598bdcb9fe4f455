-- :KenningSearch[!] {query}, :[range]KenningSimilar[!], :KenningStatus, :KenningReindex.
-- The server itself is enabled by the user (vim.lsp.enable('kenning') or require('kenning').setup()).
if vim.g.loaded_kenning then
  return
end
vim.g.loaded_kenning = true

local command = vim.api.nvim_create_user_command

local FILTERS = { 'lang:', 'ext:', 'path:', 'mode:hybrid', 'mode:semantic', 'mode:lexical' }

--- Completes the filter keys of the word being typed.
---@param arglead string
---@return string[]
local function complete_filters(arglead)
  return vim.tbl_filter(function(filter)
    return arglead ~= '' and vim.startswith(filter, arglead:lower())
  end, FILTERS)
end

command('KenningSearch', function(args)
  require('kenning').search(args.args, { qf = args.bang })
end, {
  nargs = '*',
  bang = true,
  complete = complete_filters,
  desc = 'kenning: find code by describing it (lang: path: ext: mode: filters; ! → quickfix)',
})

command('KenningSimilar', function(args)
  local opts = { qf = args.bang }
  if args.range > 0 then
    opts.line1, opts.line2 = args.line1, args.line2
  end
  require('kenning').similar(opts)
end, {
  range = true,
  bang = true,
  desc = 'kenning: find code like the selected lines (! → quickfix)',
})

command('KenningStatus', function()
  require('kenning').status()
end, { desc = 'kenning: index state of each workspace folder' })

command('KenningReindex', function()
  require('kenning').reindex()
end, { desc = 'kenning: rescan every workspace folder' })
