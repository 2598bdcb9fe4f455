// Bundles the extension (src/extension.ts → dist/extension.js, everything but
// `vscode` inlined) or, with --tests, each test/*.test.ts → out/test/*.test.js
// with `vscode` and `vscode-languageclient/node` replaced by the stubs in
// test/stubs/, so `node --test out/test/` runs without VS Code.

import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = dirname(fileURLToPath(import.meta.url));
const tests = process.argv.includes("--tests");
const production = process.argv.includes("--production");

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node18",
  logLevel: "warning",
};

if (tests) {
  const entryPoints = readdirSync(join(root, "test"))
    .filter((name) => name.endsWith(".test.ts"))
    .map((name) => join("test", name));
  await esbuild.build({
    ...common,
    entryPoints,
    outdir: "out/test",
    sourcemap: "inline",
    // test/golden.test.ts reads src/protocol.ts with the compiler; it stays in node_modules
    external: ["typescript"],
    alias: {
      vscode: "./test/stubs/vscode.ts",
      "vscode-languageclient/node": "./test/stubs/languageclient.ts",
    },
  });
} else {
  await esbuild.build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    external: ["vscode"],
    minify: production,
    sourcemap: !production,
  });
}
