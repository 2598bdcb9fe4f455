-- Shared by the specs that tests/test_neovim.py runs with `nvim --headless -u NONE -l <spec>`.
-- A spec fails by exiting 1 with a message on stderr; every wait has its own timeout.

local H = {}

--- Called on failure; its result is printed after the message (what the spec saw so far).
---@type fun(): any
H.context = function()
  return nil
end

--- Prints `msg` (and H.context()) to stderr and exits 1.
---@param msg string
function H.fail(msg)
  io.stderr:write('FAIL: ' .. msg .. '\n')
  local ok, context = pcall(H.context)
  if context ~= nil then
    io.stderr:write('context: ' .. vim.inspect(ok and context or ('(failed: ' .. tostring(context) .. ')')) .. '\n')
  end
  io.stderr:flush()
  os.exit(1)
end

---@param cond any
---@param msg string
---@param ... any values shown with vim.inspect
function H.check(cond, msg, ...)
  if not cond then
    local extra = vim.tbl_map(vim.inspect, { ... })
    H.fail(msg .. (#extra > 0 and ('\n' .. table.concat(extra, '\n')) or ''))
  end
end

---@param a any
---@param b any
---@param what string
function H.eq(a, b, what)
  H.check(vim.deep_equal(a, b), what .. ': expected', b, 'got', a)
end

local started = vim.uv.hrtime()

--- Prints `label` with the seconds since the spec started (shown when a spec fails).
---@param label string
function H.step(label)
  io.stdout:write(('[%6.2fs] %s\n'):format((vim.uv.hrtime() - started) / 1e9, label))
  io.stdout:flush()
end

--- Checked by every wait: a message when waiting further is pointless (the server exited).
---@type fun(): string?
H.abort = function()
  return nil
end

--- Waits for `cond` (up to `ms`), failing with `what` on timeout or when H.abort() says why.
---@param what string
---@param cond fun(): any
---@param ms? integer
function H.wait_for(what, cond, ms)
  local done = vim.wait(ms or 30000, function()
    return H.abort() ~= nil or cond()
  end, 20)
  local reason = H.abort()
  if reason then
    H.fail(('%s while waiting for %s'):format(reason, what))
  elseif not done then
    H.fail('timed out waiting for ' .. what)
  end
end

--- The plugin under test on 'runtimepath' (plugin/ files sourced: -u NONE loads no plugins).
function H.load_plugin()
  vim.opt.rtp:prepend(H.env('KENNING_NVIM_PLUGIN'))
  vim.cmd('filetype on')
  vim.cmd.runtime('plugin/kenning.lua')
end

---@param name string
---@return string
function H.env(name)
  local value = os.getenv(name)
  if not value then
    H.fail(name .. ' is not set')
  end
  return value
end

--- Replaces vim.notify with a recorder; returns the list it fills.
---@return { msg: string, level: integer? }[]
function H.capture_notify()
  local seen = {}
  vim.notify = function(msg, level)
    table.insert(seen, { msg = msg, level = level })
  end
  return seen
end

return H
