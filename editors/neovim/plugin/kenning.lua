-- :KenningSearch[!] {query}, :[range]KenningSimilar[!], :KenningStatus, :KenningReindex.
-- The server itself is enabled by the user (vim.lsp.enable('kenning') or require('kenning').setup()).
if vim.g.loaded_kenning then
  return
end
vim.g.loaded_kenning = true

local command = vim.api.nvim_create_user_command

command('KenningSearch', function(args)
  require('kenning').search(args.args, { qf = args.bang })
end, {
  nargs = '*',
  bang = true,
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
