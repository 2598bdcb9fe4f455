---@brief
---
--- kenning finds code by describing it: ask for "where do we retry failed uploads" or
--- `parseHttpHeader` and get ranked locations from a hybrid of dense vectors (a small embedding
--- model that runs on your CPU) and lexical BM25. It indexes the whole workspace folder, whatever
--- the language, so this config attaches to every filetype.
---
--- Install the server (Python ≥ 3.10) so that `kenning` is on your `$PATH`:
--- ```sh
--- pipx install kenning            # or: pip install kenning
--- pip install /path/to/kenning    # or from a checkout of the kenning repository
--- ```
---
--- Then enable it (add `editors/neovim` to 'runtimepath' for the `:KenningSearch`,
--- `:KenningSimilar` and `:KenningStatus` commands):
--- ```lua
--- vim.lsp.enable('kenning')
--- ```
---
--- `init_options` (all optional; unset keys take the server's defaults) are sent as
--- `initializationOptions`; see docs/protocol.md in the repository:
--- - `storePath` (string): where the index lives, relative to the folder (default `.kenning`)
--- - `model` (string): a directory with `model.onnx`, `tokenizer.json`, `kenning-model.json`
---   (default: the built-in all-MiniLM-L6-v2 int8)
--- - `exclude` (string[]): extra gitignore-style globs to leave out of the index
--- - `maxFileSize` (integer, bytes ≥ 1024): larger files are skipped
--- - `embedThreads` (integer ≥ 0): cores the embedding model may use, 0 = all
--- - `indexOnStartup` (boolean): index every folder as soon as the client is initialized
--- - `maxResults` (integer 1–200): default number of `workspace/semanticSearch` results
--- - `symbolLimit` (integer 1–10000): most results of `workspace/symbol`
--- - `logLevel` (`"error"`|`"warning"`|`"info"`|`"debug"`): what reaches the LSP log
--- - `embedding` (table): embed through an OpenAI-compatible server (TEI, Ollama, vLLM,
---   llama.cpp) instead of the built-in model; your code is sent to that host. Keys: `url`,
---   `model` (both required), `keyEnv` (the NAME of the environment variable holding the API
---   key), `dimensions`, `queryPrefix`, `documentPrefix`, `maxChars`, `batchSize`, `inFlight`,
---   `timeout`, `queryTimeout`, `retries`; see docs/embedding-servers.md.
---
--- ```lua
--- vim.lsp.config('kenning', {
---   init_options = { exclude = { 'vendor/**' }, maxResults = 50 },
--- })
--- -- or, with an embedding server:
--- vim.lsp.config('kenning', {
---   init_options = {
---     embedding = { url = 'http://127.0.0.1:11434/v1', model = 'nomic-embed-text',
---                   queryPrefix = 'search_query: ', documentPrefix = 'search_document: ' },
---   },
--- })
--- ```
---
--- Indexing progress is reported with standard LSP progress (`vim.lsp.status()`, `LspProgress`),
--- so statusline components and fidget.nvim show it without further setup.

---@type vim.lsp.Config
return {
  cmd = { 'kenning', 'serve' },
  -- No `filetypes`: kenning indexes every file of the folder, so it attaches to every buffer
  -- with a filetype (a config without `filetypes` matches them all).
  -- The repository root first: search covers the whole project, not the nearest package.
  root_markers = {
    '.git',
    '.kenning',
    '.hg',
    '.jj',
    'pyproject.toml',
    'package.json',
    'go.mod',
    'Cargo.toml',
  },
  -- Without a project root there is nothing sensible to index (think of a file in $HOME).
  workspace_required = true,
  -- No `init_options`: the server owns every default (docs/protocol.md), so nothing is sent
  -- unless the user sets it; a copy here would override a server whose defaults changed.
  -- For example: init_options = { exclude = { 'vendor/**' }, maxResults = 50 }
  handlers = {
    ['kenning/indexStatus'] = function(err, result, ctx)
      return require('kenning').on_index_status(err, result, ctx)
    end,
  },
}
