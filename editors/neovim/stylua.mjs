// StyLua over the plugin's Lua files with the settings of .stylua.toml beside this script.
// The WASM build of StyLua runs offline under Node (the stylua-bin package downloads a binary).
// Usage: node stylua.mjs [--check] DIR_OR_FILE...   --check: list unformatted files, exit 1.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CallParenType,
  Config,
  IndentType,
  LineEndings,
  OutputVerification,
  QuoteStyle,
  formatCode,
} from "@johnnymorganz/stylua";

const here = dirname(fileURLToPath(import.meta.url));

// The few keys .stylua.toml uses, mapped onto the WASM Config (a key it does not know is an error,
// so a setting added to the file is never silently ignored here).
const enums = {
  line_endings: LineEndings,
  indent_type: IndentType,
  quote_style: QuoteStyle,
  call_parentheses: CallParenType,
};
function loadConfig() {
  const config = Config.new();
  for (const raw of readFileSync(join(here, ".stylua.toml"), "utf8").split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (!line) continue;
    const m = /^(\w+)\s*=\s*(.+)$/.exec(line);
    if (!m) throw new Error(`.stylua.toml: cannot read ${JSON.stringify(raw)}`);
    const [, key, value] = m;
    if (key in enums) {
      const name = JSON.parse(value);
      if (!(name in enums[key])) throw new Error(`.stylua.toml: ${key} = ${value} is not known`);
      config[key] = enums[key][name];
    } else if (key === "column_width" || key === "indent_width") {
      config[key] = Number(value);
    } else {
      throw new Error(`.stylua.toml: ${key} is not supported by stylua.mjs`);
    }
  }
  return config;
}

function luaFiles(path) {
  if (statSync(path).isFile()) return path.endsWith(".lua") ? [path] : [];
  return readdirSync(path, { withFileTypes: true })
    .filter((e) => e.name !== "node_modules")
    .flatMap((e) => luaFiles(join(path, e.name)));
}

const args = process.argv.slice(2);
const check = args[0] === "--check";
const targets = check ? args.slice(1) : args;
let unformatted = 0;
for (const file of targets.flatMap((t) => luaFiles(join(here, t)))) {
  const before = readFileSync(file, "utf8");
  // formatCode takes the Config by value (the WASM side frees it): a fresh one per file.
  const after = formatCode(before, loadConfig(), undefined, OutputVerification.Full);
  if (after === before) continue;
  unformatted += 1;
  if (check) console.log(`not formatted: ${relative(process.cwd(), file)}`);
  else writeFileSync(file, after);
}
if (check && unformatted) {
  console.log(`${unformatted} file(s) differ from StyLua's output: run \`npm run format\` in editors/neovim`);
  process.exit(1);
}
