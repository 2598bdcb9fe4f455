--- :checkhealth kenning — Neovim version, the server command, whether it is enabled and running.

local M = {}

local health = vim.health

local function check_cmd()
  local config = vim.lsp.config.kenning
  local cmd = config and config.cmd
  if type(cmd) ~= 'table' then
    health.info('cmd is a function; not checked')
    return
  end
  if vim.fn.executable(cmd[1]) == 1 then
    health.ok(('`%s` found: %s'):format(table.concat(cmd, ' '), vim.fn.exepath(cmd[1])))
  else
    health.error(('`%s` is not executable'):format(cmd[1]), {
      'pip install kenning (or pipx install kenning), so that `kenning` is on $PATH',
      'or point at a Python that has it: '
        .. "vim.lsp.config('kenning', { cmd = { '/path/to/python', '-m', 'kenning', 'serve' } })",
    })
  end
end

local function check_clients()
  if not vim.lsp.is_enabled('kenning') then
    health.warn('not enabled', { "vim.lsp.enable('kenning') or require('kenning').setup()" })
    return
  end
  health.ok('enabled')
  local clients = vim.lsp.get_clients({ name = 'kenning' })
  if #clients == 0 then
    health.info('no client running: open a file inside a project (a folder with .git or .kenning)')
  end
  local kenning = require('kenning')
  for _, client in ipairs(clients) do
    local statuses = kenning.index_status[client.id] or {}
    if next(statuses) == nil then
      health.info(('client %d: no index status received yet'):format(client.id))
    end
    for _, status in pairs(statuses) do
      local report = status.state == 'error' and health.error or health.ok
      report(('client %d: %s'):format(client.id, kenning.format_status(status)))
    end
  end
end

function M.check()
  health.start('kenning')
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.11 or newer is needed (vim.lsp.config / vim.lsp.enable)')
    return
  end
  check_cmd()
  check_clients()
end

return M
