// Result and status text (src/format.ts).

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  describeError,
  embeddedPercent,
  formatCount,
  formatHit,
  indexNotice,
  isCancellation,
  leastReady,
  matchInfo,
  previewLine,
  statusBarText,
  statusLine,
} from "../src/format";
import type { IndexStatus, SearchHit } from "../src/protocol";

function hit(overrides: Partial<SearchHit> = {}): SearchHit {
  return {
    uri: "file:///ws/src/upload.py",
    range: { start: { line: 41, character: 0 }, end: { line: 60, character: 12 } },
    score: 0.8,
    preview: "def retry_upload(policy):\n    for attempt in range(3):",
    symbol: { name: "retry_upload", kind: "function" },
    language: "python",
    match: { denseRank: 1, lexicalRank: 3 },
    ...overrides,
  };
}

function status(overrides: Partial<IndexStatus> = {}): IndexStatus {
  return {
    folder: "file:///ws",
    state: "ready",
    files: 1234,
    chunks: 9876,
    embedded: 9876,
    pending: 0,
    skipped: 0,
    ...overrides,
  };
}

const rel = (uri: string): string => uri.replace("file:///ws/", "");
const name = (uri: string): string => uri.slice(uri.lastIndexOf("/") + 1);

describe("formatHit", () => {
  it("labels a hit `symbol — path:line` with a 1-based line", () => {
    assert.deepEqual(formatHit(hit(), rel), {
      label: "retry_upload — src/upload.py:42",
      description: "dense #1 · lexical #3",
      detail: "def retry_upload(policy): ⏎ for attempt in range(3):",
    });
  });

  it("labels a hit without a symbol `path:line`", () => {
    assert.equal(formatHit(hit({ symbol: undefined }), rel).label, "src/upload.py:42");
  });

  it("qualifies a symbol with its container", () => {
    const label = formatHit(
      hit({ symbol: { name: "backoff", kind: "method", containerName: "Policy" } }),
      rel,
    ).label;
    assert.equal(label, "Policy.backoff — src/upload.py:42");
  });
});

describe("matchInfo", () => {
  it("names only the halves that ranked the hit", () => {
    assert.equal(matchInfo(hit({ match: { denseRank: 2, lexicalRank: null } })), "dense #2");
    assert.equal(matchInfo(hit({ match: { denseRank: null, lexicalRank: 1 } })), "lexical #1");
    assert.equal(matchInfo(hit({ match: { denseRank: null, lexicalRank: null } })), "");
  });
});

describe("previewLine", () => {
  it("drops blank lines and cuts long previews", () => {
    assert.equal(previewLine("a\r\n\n   b  \n"), "a ⏎ b");
    const long = previewLine("x".repeat(400));
    assert.equal(long.length, 300);
    assert.ok(long.endsWith("…"));
  });
});

describe("counts", () => {
  it("groups thousands regardless of locale", () => {
    assert.equal(formatCount(0), "0");
    assert.equal(formatCount(999), "999");
    assert.equal(formatCount(9876), "9,876");
    assert.equal(formatCount(1234567), "1,234,567");
  });

  it("rounds the embedded share down and survives zero", () => {
    assert.equal(embeddedPercent(41, 59), 41);
    assert.equal(embeddedPercent(999, 1), 99);
    assert.equal(embeddedPercent(0, 0), 0);
  });
});

describe("statusBarText", () => {
  it("shows files while scanning", () => {
    assert.equal(
      statusBarText([status({ state: "scanning", files: 312 })], name).text,
      "$(sync~spin) kenning 312 files…",
    );
  });

  it("shows the embedded share while embedding", () => {
    const text = statusBarText([status({ state: "embedding", embedded: 4100, pending: 5776 })], name).text;
    assert.equal(text, "$(sync~spin) kenning embedding 41%");
  });

  it("shows the chunk count when ready", () => {
    assert.equal(statusBarText([status()], name).text, "kenning $(check) 9,876 chunks");
  });

  it("shows an error icon, with the message in the tooltip", () => {
    const { text, tooltip } = statusBarText([status({ state: "error", message: "disk full" })], name);
    assert.equal(text, "$(error) kenning");
    assert.match(tooltip, /ws: error — disk full/);
  });

  it("folds several folders: least ready state, summed counts", () => {
    const folders = [
      status({ folder: "file:///a", chunks: 100, embedded: 100 }),
      status({ folder: "file:///b", state: "embedding", chunks: 300, embedded: 100, pending: 100 }),
    ];
    assert.equal(statusBarText(folders, name).text, "$(sync~spin) kenning embedding 66%");
    assert.equal(
      statusBarText([folders[0], status({ folder: "file:///c", chunks: 5 })], name).text,
      "kenning $(check) 105 chunks",
    );
  });

  it("says starting before the first notification", () => {
    assert.equal(statusBarText([], name).text, "$(sync~spin) kenning");
  });
});

describe("leastReady", () => {
  it("orders error < scanning < embedding < ready", () => {
    assert.equal(leastReady(["ready", "embedding", "scanning"]), "scanning");
    assert.equal(leastReady(["ready", "error", "scanning"]), "error");
    assert.equal(leastReady([]), undefined);
  });
});

describe("statusLine", () => {
  it("describes one folder", () => {
    assert.equal(
      statusLine(status({ skipped: 3 }), name),
      "ws: ready — 9,876 chunks in 1,234 files, 3 skipped",
    );
    assert.equal(
      statusLine(status({ state: "embedding", embedded: 4100, pending: 5776 }), name),
      "ws: embedding 4,100/9,876 chunks (41%) — 9,876 chunks in 1,234 files",
    );
  });
});

describe("indexNotice", () => {
  const summary = { files: 10, chunks: 9876, embedded: 4100, pending: 5776 };

  it("says nothing when ready", () => {
    assert.equal(indexNotice({ ...summary, state: "ready" }), undefined);
  });

  it("says lexical results until the embeddings are ready", () => {
    assert.equal(
      indexNotice({ ...summary, state: "embedding", lexicalOnly: true }),
      "kenning: still embedding 4,100/9,876 — lexical results until ready",
    );
  });

  it("explains a ready index without the dense half", () => {
    assert.match(
      indexNotice({ ...summary, state: "ready", lexicalOnly: true }) ?? "",
      /lexical results only/,
    );
  });

  it("mentions scanning and errors", () => {
    assert.match(indexNotice({ ...summary, state: "scanning" }) ?? "", /still scanning \(10 files so far\)/);
    assert.match(indexNotice({ ...summary, state: "error" }) ?? "", /indexing failed/);
  });
});

describe("errors", () => {
  it("spells out invalid params", () => {
    const error = Object.assign(new Error("unknown language 'klingon'"), { code: -32602 });
    assert.equal(describeError(error), "invalid request: unknown language 'klingon'");
  });

  it("keeps other codes and plain values", () => {
    assert.equal(describeError(Object.assign(new Error("boom"), { code: -32603 })), "boom (-32603)");
    assert.equal(describeError("plain"), "plain");
    assert.equal(describeError({ message: "shape only", code: 1 }), "shape only (1)");
  });

  it("recognizes cancellations", () => {
    assert.ok(isCancellation({ code: -32800, message: "cancelled" }));
    assert.ok(isCancellation(Object.assign(new Error("Canceled"), { name: "Canceled" })));
    assert.ok(!isCancellation(new Error("boom")));
  });
});
