// The inline filter syntax of the Semantic Search box (src/query.ts). The cases are shared with
// the Neovim plugin's parser (tests/query_syntax.json); what is particular to this client is below.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

import { parseQuery, toSearchParams } from "../src/query";

interface SyntaxCase {
  name: string;
  input: string;
  params: Record<string, unknown>;
  problems?: string[];
}

const casesPath = join(__dirname, "..", "..", "..", "..", "tests", "query_syntax.json");
const cases = (JSON.parse(readFileSync(casesPath, "utf8")) as { cases: SyntaxCase[] }).cases;

describe("parseQuery: the shared cases (tests/query_syntax.json)", () => {
  it("has cases", () => assert.ok(cases.length > 10));
  for (const c of cases) {
    it(c.name, () => {
      const parsed = parseQuery(c.input);
      assert.deepEqual(toSearchParams(parsed), c.params);
      const want = c.problems ?? [];
      assert.equal(parsed.problems.length, want.length, parsed.problems.join("; "));
      want.forEach((text, i) => assert.ok(parsed.problems[i].includes(text), parsed.problems[i]));
    });
  }
});

describe("parseQuery", () => {
  it("keeps the query text apart from the filters", () => {
    assert.deepEqual(parseQuery("  retry   upload with backoff "), {
      text: "retry upload with backoff",
      filters: {},
      problems: [],
    });
  });

  it("reports a query over the server's 1,000 characters", () => {
    const parsed = parseQuery("x".repeat(1001));
    assert.match(parsed.problems[0], /1001 characters/);
  });
});

describe("toSearchParams", () => {
  it("sends only the query when nothing else was given", () => {
    assert.deepEqual(toSearchParams(parseQuery("retry")), { query: "retry" });
  });

  it("sends filters, mode and limit in the protocol's shape", () => {
    assert.deepEqual(toSearchParams(parseQuery("retry lang:python path:src/** mode:lexical"), 50), {
      query: "retry",
      limit: 50,
      mode: "lexical",
      filters: { paths: ["src/**"], languages: ["python"] },
    });
  });
});
