// The inline filter syntax of the Semantic Search box (src/query.ts).

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { parseQuery, toSearchParams } from "../src/query";

describe("parseQuery", () => {
  it("keeps plain words as the query", () => {
    assert.deepEqual(parseQuery("  retry   upload with backoff "), {
      text: "retry upload with backoff",
      filters: {},
      problems: [],
    });
  });

  it("parses every filter kind out of the text", () => {
    const parsed = parseQuery("retry lang:python path:src/** ext:ts mode:lexical upload");
    assert.equal(parsed.text, "retry upload");
    assert.deepEqual(parsed.filters, { paths: ["src/**"], languages: ["python"], extensions: ["ts"] });
    assert.equal(parsed.mode, "lexical");
    assert.deepEqual(parsed.problems, []);
  });

  it("accepts the long key names and any key case", () => {
    const parsed = parseQuery("Language:rust EXTENSION:.rs Mode:Semantic x");
    assert.deepEqual(parsed.filters, { languages: ["rust"], extensions: [".rs"] });
    assert.equal(parsed.mode, "semantic");
    assert.equal(parsed.text, "x");
  });

  it("reads quoted values with spaces", () => {
    const parsed = parseQuery(`path:"src/my dir/**" parse config path:'docs/a b.md'`);
    assert.deepEqual(parsed.filters.paths, ["src/my dir/**", "docs/a b.md"]);
    assert.equal(parsed.text, "parse config");
  });

  it("takes an unterminated quote to the end of the input", () => {
    const parsed = parseQuery(`token path:"src/my dir`);
    assert.deepEqual(parsed.filters.paths, ["src/my dir"]);
    assert.equal(parsed.text, "token");
  });

  it("adds up repeated filters and splits lang/ext lists on commas", () => {
    const parsed = parseQuery("lang:python lang:go,rust ext:ts,tsx ext:js path:a/** path:b/** q");
    assert.deepEqual(parsed.filters, {
      paths: ["a/**", "b/**"],
      languages: ["python", "go", "rust"],
      extensions: ["ts", "tsx", "js"],
    });
  });

  it("does not split path globs on commas", () => {
    assert.deepEqual(parseQuery("path:a,b/** q").filters.paths, ["a,b/**"]);
  });

  it("lets the last mode win", () => {
    assert.equal(parseQuery("mode:lexical mode:hybrid q").mode, "hybrid");
  });

  it("keeps unknown keys, empty values and URLs as text", () => {
    const parsed = parseQuery("foo:bar lang: http://example.com C:\\src q");
    assert.equal(parsed.text, "foo:bar lang: http://example.com C:\\src q");
    assert.deepEqual(parsed.filters, {});
    assert.equal(parsed.mode, undefined);
  });

  it("keeps a quoted unknown filter with its quotes", () => {
    assert.equal(parseQuery(`foo:"a b" q`).text, `foo:"a b" q`);
  });

  it("treats a quoted word as text, even when it looks like a filter", () => {
    const parsed = parseQuery(`"lang:python" 'two words'`);
    assert.equal(parsed.text, "lang:python two words");
    assert.deepEqual(parsed.filters, {});
  });

  it("reports an unknown mode and sends none", () => {
    const parsed = parseQuery("mode:fuzzy q");
    assert.equal(parsed.mode, undefined);
    assert.equal(parsed.text, "q");
    assert.equal(parsed.problems.length, 1);
    assert.match(parsed.problems[0], /unknown mode "fuzzy"/);
  });

  it("reports a query over the server's 1,000 characters", () => {
    const parsed = parseQuery("x".repeat(1001));
    assert.match(parsed.problems[0], /1001 characters/);
  });

  it("returns an empty text for filters only", () => {
    const parsed = parseQuery("lang:python");
    assert.equal(parsed.text, "");
    assert.deepEqual(parsed.filters, { languages: ["python"] });
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
