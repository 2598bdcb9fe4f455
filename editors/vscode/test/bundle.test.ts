// The shipped bundle (dist/extension.js, built by `npm test` before the tests
// run): self-contained apart from `vscode` and node's built-ins, and loadable
// with the extension API's entry points.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import Module, { isBuiltin } from "node:module";
import { join } from "node:path";
import { describe, it } from "node:test";

/**
 * vscode-languageclient subclasses vscode classes and reads enums at load
 * time; this stand-in answers every property with another stand-in that can
 * also be called, constructed and extended.
 */
function anything(): unknown {
  const target = function () {
    /* a class, a function or a namespace: whatever is asked for */
  };
  return new Proxy(target, {
    get(fake, property) {
      if (property === "prototype") {
        return fake.prototype;
      }
      if (property === Symbol.toPrimitive) {
        return () => 0;
      }
      return anything();
    },
  });
}

const bundle = join(__dirname, "..", "..", "dist", "extension.js");

describe("dist/extension.js", { skip: !existsSync(bundle) && "run `npm run bundle` first" }, () => {
  it("requires nothing but vscode and node built-ins", () => {
    const source = readFileSync(bundle, "utf8");
    const required = new Set([...source.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]));
    const outside = [...required].filter((name) => name !== "vscode" && !isBuiltin(name));
    assert.deepEqual(outside, []);
    assert.ok(required.has("vscode"));
  });

  it("loads and exports activate and deactivate", () => {
    const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
    const original = loader._load;
    loader._load = (request: string, ...rest: unknown[]) =>
      request === "vscode" ? anything() : original(request, ...rest);
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const extension = require(bundle) as { activate?: unknown; deactivate?: unknown };
      assert.equal(typeof extension.activate, "function");
      assert.equal(typeof extension.deactivate, "function");
    } finally {
      loader._load = original;
    }
  });
});
