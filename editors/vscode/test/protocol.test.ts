// src/protocol.ts against the wire contract in docs/protocol.md: method and
// command names, and the request helpers' params.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

import {
  indexStatus,
  reindex,
  reindexParams,
  semanticSearch,
  ServerCommands,
  similar,
  status,
  statusParams,
} from "../src/protocol";

const docPath = join(__dirname, "..", "..", "..", "..", "docs", "protocol.md");

describe("protocol", () => {
  it("uses the documented method names", () => {
    assert.equal(semanticSearch.method, "workspace/semanticSearch");
    assert.equal(similar.method, "kenning/similar");
    assert.equal(indexStatus.method, "kenning/indexStatus");
    assert.equal(reindex.method, "workspace/executeCommand");
    assert.equal(status.method, "workspace/executeCommand");
  });

  it("builds executeCommand params", () => {
    // no arguments: the field is left out, not sent as []
    assert.deepEqual(reindexParams(), { command: "kenning.reindex" });
    assert.deepEqual(reindexParams("file:///ws"), { command: "kenning.reindex", arguments: ["file:///ws"] });
    assert.deepEqual(statusParams(), { command: "kenning.status" });
  });

  it("names only things docs/protocol.md names", { skip: !existsSync(docPath) }, () => {
    const doc = readFileSync(docPath, "utf8");
    for (const name of [
      semanticSearch.method,
      similar.method,
      indexStatus.method,
      ...Object.values(ServerCommands),
    ]) {
      assert.ok(doc.includes(`\`${name}\``), `${name} is not in docs/protocol.md`);
    }
  });
});
