// The VS Code glue (src/extension.ts and the modules it wires) against the
// stubbed `vscode` and `vscode-languageclient/node` (test/stubs/): commands,
// the client's options, the status bar, the search QuickPick, restarts.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";

import { activate, deactivate } from "../src/extension";
import { RestartPolicy } from "../src/server";
import type { SearchHit, SemanticSearchResult } from "../src/protocol";
import type { ResultItem } from "../src/searchPick";
import { LanguageClient } from "./stubs/languageclient";
import { fakeEditor, Range, Selection, stub, Uri, type FakeQuickPick } from "./stubs/vscode";

const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as {
  contributes: { commands: { command: string; title: string; category?: string }[] };
};
const declared = pkg.contributes.commands.map((c) => c.command);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string, tries = 200): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (check()) {
      return;
    }
    await sleep(5);
  }
  assert.fail(`timed out waiting for ${what}`);
}

function context() {
  return { subscriptions: [] as { dispose(): unknown }[], extensionUri: Uri.file(tmpdir()) };
}

type Context = ReturnType<typeof context>;

async function activated(): Promise<{ ctx: Context; client: LanguageClient }> {
  const ctx = context();
  await activate(ctx as never);
  await until(() => LanguageClient.instances.some((c) => c.running), "the client to start");
  return { ctx, client: LanguageClient.instances[LanguageClient.instances.length - 1] };
}

function hit(line: number, name?: string): SearchHit {
  return {
    uri: `file:///ws/src/mod${line}.py`,
    range: { start: { line, character: 0 }, end: { line: line + 5, character: 3 } },
    score: 1 / (line + 1),
    preview: `def f${line}():`,
    symbol: name === undefined ? undefined : { name, kind: "function" },
    language: "python",
    match: { denseRank: 1, lexicalRank: null },
  };
}

function answer(
  results: SearchHit[],
  state: SemanticSearchResult["index"]["state"] = "ready",
): SemanticSearchResult {
  return {
    results,
    index: { state, files: 3, chunks: 9876, embedded: 4100, pending: 5776, lexicalOnly: state !== "ready" },
  };
}

function searches(client: LanguageClient) {
  return client.requests.filter((r) => r.method === "workspace/semanticSearch");
}

beforeEach(() => {
  stub.reset();
  LanguageClient.reset();
  stub.workspaceFolders = [{ uri: Uri.file("/ws"), name: "ws", index: 0 }];
  // an executable that exists, so the pre-start check passes without Python
  stub.settings.set("kenning.server.command", [process.execPath, "serve"]);
});

afterEach(async () => {
  await deactivate();
});

describe("activate", () => {
  it("registers every command declared in package.json, and no others", async () => {
    const { ctx } = await activated();
    assert.deepEqual([...stub.commands.keys()].sort(), [...declared].sort());
    assert.ok(ctx.subscriptions.length >= declared.length);
    for (const command of pkg.contributes.commands) {
      assert.equal(command.category, "Kenning", `${command.command} has no Kenning category`);
    }
  });

  it("does not take the server's own command ids (the client registers those)", () => {
    assert.ok(!declared.includes("kenning.reindex"));
    assert.ok(!declared.includes("kenning.status"));
  });

  it("starts `kenning.server.command` over stdio with the protocol's initialization options", async () => {
    const { client } = await activated();
    assert.equal(client.id, "kenning");
    // A function ServerOptions: the client adds nothing (no --stdio) to the configured command line.
    assert.equal(typeof client.serverOptions, "function");
    assert.ok(client.process !== undefined);
    assert.deepEqual(client.process.spawnargs, [process.execPath, "serve"]);
    const options = client.clientOptions as {
      initializationFailedHandler: (error: unknown) => boolean;
      initializationOptions: unknown;
      synchronize: { configurationSection: string };
    };
    // a failed initialize gets the extension's one message, not the client's own toast as well
    assert.equal(options.initializationFailedHandler(new Error("x")), false);
    assert.deepEqual(options.initializationOptions, {
      storePath: null,
      model: null,
      exclude: [],
      maxFileSize: 2097152,
      embedThreads: 0,
      indexOnStartup: true,
      maxResults: 20,
      symbolLimit: 200,
      logLevel: "info",
      sharedCache: true,
      importPack: null,
      sharedCacheMaxSize: null,
    });
    assert.equal(options.synchronize.configurationSection, "kenning");
  });

  it("answers workspace/configuration and didChangeConfiguration in the protocol shape", async () => {
    const { client } = await activated();
    stub.settings.set("kenning.maxResults", 42);
    stub.settings.set("kenning.storePath", "");
    const middleware = (
      client.clientOptions as {
        middleware: {
          workspace: {
            configuration(
              params: unknown,
              token: unknown,
              next: (p: unknown, t: unknown) => unknown,
            ): Promise<unknown[]>;
            didChangeConfiguration(sections: string[] | undefined, next: unknown): Promise<void>;
          };
        };
      }
    ).middleware.workspace;
    const answer = await middleware.configuration(
      { items: [{ section: "kenning" }, { section: "files.exclude" }] },
      {},
      () => [{ server: { command: [] }, storePath: "" }, { "**/.git": true }],
    );
    assert.equal((answer[0] as { maxResults: number }).maxResults, 42);
    assert.equal((answer[0] as { storePath: unknown }).storePath, null);
    assert.ok(!("server" in (answer[0] as object)));
    assert.deepEqual(answer[1], { "**/.git": true });

    await middleware.didChangeConfiguration(["kenning"], () =>
      assert.fail("the raw settings tree must not be sent"),
    );
    const sent = client.notifications.find((n) => n.method === "workspace/didChangeConfiguration");
    assert.deepEqual(
      (sent?.params as { settings: { kenning: { maxResults: number } } }).settings.kenning.maxResults,
      42,
    );
  });

  it("feeds the status bar from kenning/indexStatus", async () => {
    const { client } = await activated();
    const item = stub.statusBarItems[0];
    assert.equal(item.command, "kenning.showIndexStatus");
    const base = { folder: "file:///ws", files: 312, chunks: 9876, embedded: 0, pending: 0, skipped: 0 };
    client.notify("kenning/indexStatus", { ...base, state: "scanning" });
    assert.equal(item.text, "$(sync~spin) kenning 312 files…");
    client.notify("kenning/indexStatus", { ...base, state: "embedding", embedded: 4100, pending: 5776 });
    assert.equal(item.text, "$(sync~spin) kenning embedding 41%");
    client.notify("kenning/indexStatus", { ...base, state: "ready", embedded: 9876 });
    assert.equal(item.text, "kenning $(check) 9,876 chunks");
    client.notify("kenning/indexStatus", { ...base, state: "error", message: "disk full" });
    assert.equal(item.text, "$(error) kenning");
    assert.match(String(item.tooltip), /disk full/);
  });

  it("restarts the server when a restart setting changes, not for others", async () => {
    const { client } = await activated();
    stub.changeSetting("kenning.maxResults", 5);
    await sleep(20);
    assert.equal(LanguageClient.instances.length, 1);
    stub.changeSetting("kenning.model", "/models/other");
    await until(
      () => LanguageClient.instances.length === 2 && LanguageClient.instances[1].running,
      "a new client",
    );
    assert.ok(client.disposed);
    assert.equal(
      (LanguageClient.instances[1].clientOptions as { initializationOptions: { model: string } })
        .initializationOptions.model,
      "/models/other",
    );
  });

  it("explains a missing server with the install command and an Open Settings button", async () => {
    stub.settings.delete("kenning.server.command");
    const savedPath = process.env.PATH;
    process.env.PATH = "";
    try {
      await activate(context() as never);
      await until(() => stub.messages.some((m) => m.kind === "error"), "an error message", 4_000);
    } finally {
      process.env.PATH = savedPath;
    }
    const error = stub.messages.find((m) => m.kind === "error");
    assert.match(error?.text ?? "", /pip install kenning/);
    assert.deepEqual(error?.items, ["Open Settings", "Show Output"]);
    assert.equal(LanguageClient.instances.length, 0);
    assert.equal(stub.statusBarItems[0].text, "$(error) kenning");
  });

  it("explains an interpreter without kenning", async () => {
    stub.settings.delete("kenning.server.command");
    stub.settings.set("kenning.server.pythonPath", join(tmpdir(), "no-such-python"));
    await activate(context() as never);
    await until(() => stub.messages.some((m) => m.kind === "error"), "an error message", 4_000);
    assert.match(stub.messages[0].text, /no-such-python does not exist.*Check kenning\.server\.pythonPath/);
  });

  it("shows a crashed server in the status bar, and starts it again on the next command", async () => {
    const { client } = await activated();
    client.crash();
    assert.equal(stub.statusBarItems[0].text, "$(error) kenning");
    assert.match(String(stub.statusBarItems[0].tooltip), /stopped/);
    await stub.commands.get("kenning.reindexWorkspace")?.();
    assert.equal(LanguageClient.instances.length, 1, "the same client is started again");
    assert.ok(client.running);
    assert.equal(client.requests.at(-1)?.method, "workspace/executeCommand");
  });

  it("a restart does not flag the old client's stop as an error", async () => {
    await activated();
    await stub.commands.get("kenning.restartServer")?.();
    assert.equal(LanguageClient.instances.length, 2);
    assert.ok(LanguageClient.instances[0].disposed);
    assert.equal(stub.statusBarItems[0].text, "$(sync~spin) kenning");
  });

  it("reports a start failure instead of throwing", async () => {
    LanguageClient.startError = new Error("initialize failed");
    stub.settings.set("kenning.server.command", [process.execPath, "-e", "setTimeout(() => {}, 60000)"]);
    await activate(context() as never);
    // the process still runs: the client's own error is all there is (after a short wait for an exit)
    await until(() => stub.messages.some((m) => m.kind === "error"), "an error message", 4_000);
    assert.match(stub.messages[0].text, /did not start .*initialize failed/);
    const child = LanguageClient.instances[0].process;
    await until(() => child?.exitCode !== null || child?.signalCode !== null, "the process to be ended");
  });

  it("explains a server that exits during start by its exit code and last stderr line", async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => {
      rejections.push(reason);
    };
    process.on("unhandledRejection", onRejection);
    try {
      // What the real client reports when the process dies before answering initialize.
      LanguageClient.startError = Object.assign(
        new Error("Pending response rejected since connection got disposed"),
        { code: -32097 },
      );
      const script =
        "console.error('usage: kenning serve');" +
        "console.error('kenning: error: unrecognized arguments: --stdio'); process.exit(2)";
      stub.settings.set("kenning.server.command", [process.execPath, "-e", script]);
      await activate(context() as never);
      await until(() => stub.messages.some((m) => m.kind === "error"), "an error message", 4_000);
      const text = stub.messages[0].text;
      assert.match(text, /exited with code 2: kenning: error: unrecognized arguments: --stdio/);
      assert.doesNotMatch(text, /-32097|connection got disposed/);
      assert.match(text, /See Output → kenning/);
      assert.deepEqual(stub.messages[0].items, ["Open Settings", "Show Output"]);
      const tooltip = String(stub.statusBarItems[0].tooltip);
      assert.match(tooltip, /^kenning: the language server did not start/);
      assert.doesNotMatch(tooltip, /kenning: kenning:/);
      // Restart and stop after the failed start: no rejection escapes.
      await stub.commands.get("kenning.restartServer")?.();
      await deactivate();
      await sleep(50);
      assert.deepEqual(rejections, []);
    } finally {
      process.off("unhandledRejection", onRejection);
    }
  });

  it("treats a start() that resolves without a running client as failed (vscode-languageclient 9.0.1)", async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => {
      rejections.push(reason);
    };
    process.on("unhandledRejection", onRejection);
    try {
      LanguageClient.startError = new Error("Pending response rejected since connection got disposed");
      LanguageClient.resolveFailedStart = true;
      const script = "console.error('kenning: error: unrecognized arguments: --x'); process.exit(2)";
      stub.settings.set("kenning.server.command", [process.execPath, "-e", script]);
      await activate(context() as never);
      await until(() => stub.messages.some((m) => m.kind === "error"), "an error message", 4_000);
      assert.match(
        stub.messages[0].text,
        /did not start .*exited with code 2: kenning: error: unrecognized arguments: --x/,
      );
      assert.equal(stub.statusBarItems[0].text, "$(error) kenning");
      const client = LanguageClient.instances[0];
      client.error("kenning client: couldn't create connection to server.", undefined, "force");
      await sleep(50);
      assert.deepEqual(rejections, []);
    } finally {
      process.off("unhandledRejection", onRejection);
    }
  });

  it("keeps the install hint when the interpreter lacks kenning", async () => {
    LanguageClient.startError = new Error("Pending response rejected since connection got disposed");
    const script = 'console.error("/usr/bin/python3: No module named kenning"); process.exit(1)';
    stub.settings.set("kenning.server.command", [process.execPath, "-e", script]);
    await activate(context() as never);
    await until(() => stub.messages.some((m) => m.kind === "error"), "an error message", 4_000);
    assert.match(
      stub.messages[0].text,
      /exited with code 1: .*No module named kenning\. Check kenning\.server\.command/,
    );
  });
});

describe("RestartPolicy", () => {
  it("never restarts a server that did not start", () => {
    const policy = new RestartPolicy(3);
    assert.deepEqual(policy.closed(), { action: 1, handled: true });
  });

  it("restarts a crashed server up to 3 times in 3 minutes, then gives up with a reason", () => {
    let now = 0;
    const policy = new RestartPolicy(3, () => now);
    policy.markStarted();
    for (let i = 0; i < 3; i++) {
      now += 1_000;
      assert.equal(policy.closed().action, 2);
    }
    now += 1_000;
    const gaveUp = policy.closed();
    assert.equal(gaveUp.action, 1);
    assert.match(String(gaveUp.message), /stopped 4 times in 3 minutes/);
    now += 4 * 60_000;
    assert.equal(policy.closed().action, 2, "old crashes are forgotten");
  });
});

describe("workspace trust", () => {
  it("declares limited support for untrusted workspaces", () => {
    const capabilities = (
      pkg as unknown as {
        capabilities: { untrustedWorkspaces: { supported: unknown; description: string } };
      }
    ).capabilities;
    assert.equal(capabilities.untrustedWorkspaces.supported, "limited");
    assert.match(capabilities.untrustedWorkspaces.description, /does not start its language server/);
  });

  it("starts no server in Restricted Mode, says why, and starts once trust is granted", async () => {
    stub.trusted = false;
    await activate(context() as never);
    await sleep(20);
    assert.equal(LanguageClient.instances.length, 0, "no server in an untrusted workspace");
    const item = stub.statusBarItems[0];
    assert.equal(item.text, "$(shield) kenning");
    assert.match(String(item.tooltip), /^kenning: this workspace is in Restricted Mode/);
    assert.equal(item.command, "workbench.trust.manage");

    stub.messageAnswer = "Manage Workspace Trust";
    await stub.commands.get("kenning.semanticSearch")?.();
    assert.equal(LanguageClient.instances.length, 0);
    assert.match(stub.messages.at(-1)?.text ?? "", /Restricted Mode/);
    assert.deepEqual(stub.messages.at(-1)?.items, ["Manage Workspace Trust"]);
    assert.ok(stub.executed.some((e) => e.command === "workbench.trust.manage"));
    await stub.commands.get("kenning.restartServer")?.();
    assert.equal(LanguageClient.instances.length, 0, "a restart does not bypass trust");

    stub.grantTrust();
    await until(() => LanguageClient.instances.some((c) => c.running), "the client to start");
    assert.equal(item.command, "kenning.showIndexStatus");
  });
});

describe("commands", () => {
  it("Reindex Workspace sends kenning.reindex", async () => {
    const { client } = await activated();
    await stub.commands.get("kenning.reindexWorkspace")?.();
    assert.deepEqual(client.requests.at(-1), {
      method: "workspace/executeCommand",
      params: { command: "kenning.reindex" },
      token: undefined,
    });
  });

  it("Show Index Status lists kenning.status per folder and can reindex one", async () => {
    const { client } = await activated();
    LanguageClient.handler = async (method, params) => {
      if (
        method === "workspace/executeCommand" &&
        (params as { command: string }).command === "kenning.status"
      ) {
        return [
          {
            folder: "file:///ws",
            state: "ready",
            files: 2,
            chunks: 10,
            embedded: 10,
            pending: 0,
            skipped: 1,
          },
        ];
      }
      return null;
    };
    await stub.commands.get("kenning.showIndexStatus")?.();
    const pick = stub.lastQuickPick<{ label: string; description?: string; folder?: string }>();
    assert.equal(pick.items.length, 1);
    assert.equal(pick.items[0].label, "$(check) ws");
    assert.equal(pick.items[0].description, "ready — 10 chunks in 2 files, 1 skipped");
    assert.equal(stub.statusBarItems[0].text, "kenning $(check) 10 chunks");
    pick.pressButton(pick.items[0], {});
    await until(
      () => client.requests.some((r) => (r.params as { command?: string }).command === "kenning.reindex"),
      "reindex",
    );
    assert.deepEqual(client.requests.at(-1)?.params, {
      command: "kenning.reindex",
      arguments: ["file:///ws"],
    });
  });

  it("Find Similar Code sends the active document and selection", async () => {
    const { client } = await activated();
    const editor = fakeEditor(Uri.file("/ws/src/a.py"), new Selection(3, 0, 7, 4));
    stub.activeTextEditor = editor;
    LanguageClient.handler = async () => answer([hit(10, "twin")]);
    await stub.commands.get("kenning.findSimilar")?.();
    const pick = stub.lastQuickPick<ResultItem>();
    assert.equal(pick.title, "kenning: code similar to src/a.py:4–8");
    const request = client.requests.at(-1);
    assert.equal(request?.method, "kenning/similar");
    assert.deepEqual(request?.params, {
      textDocument: { uri: "file:///ws/src/a.py" },
      range: { start: { line: 3, character: 0 }, end: { line: 7, character: 4 } },
    });
    await until(() => pick.items.length > 0, "results");
    assert.equal(pick.items[0].label, "twin — src/mod10.py:11");
    assert.equal(pick.busy, false);
    assert.equal(pick.matchOnDetail, true);
  });

  it("Find Similar Code without an editor says what to do", async () => {
    await activated();
    await stub.commands.get("kenning.findSimilar")?.();
    assert.match(stub.messages.at(-1)?.text ?? "", /select the code/);
  });
});

describe("Semantic Search", () => {
  async function openSearch(): Promise<{ client: LanguageClient; pick: FakeQuickPick<ResultItem> }> {
    const { client } = await activated();
    await stub.commands.get("kenning.semanticSearch")?.();
    return { client, pick: stub.lastQuickPick<ResultItem>() };
  }

  it("asks for the index state at once and titles the picker with it", async () => {
    LanguageClient.handler = async () => answer([], "embedding");
    const { client, pick } = await openSearch();
    assert.deepEqual(searches(client)[0].params, { query: "" });
    await until(() => pick.busy === false, "the first answer");
    assert.equal(pick.title, "kenning: still embedding 4,100/9,876 — lexical results until ready");
    assert.deepEqual(pick.items, []);
  });

  it("searches as you type: debounced, filters parsed, the previous request cancelled", async () => {
    const pending: ((value: SemanticSearchResult) => void)[] = [];
    LanguageClient.handler = (_method, params) =>
      (params as { query: string }).query === ""
        ? Promise.resolve(answer([]))
        : new Promise((resolve) => pending.push(resolve as (value: SemanticSearchResult) => void));
    const { client, pick } = await openSearch();
    await until(() => !pick.busy, "the first answer");

    pick.type("re");
    pick.type("retry");
    pick.type("retry lang:python path:src/**");
    assert.equal(pick.busy, true);
    await sleep(100);
    assert.equal(searches(client).length, 1, "nothing is sent before the input rests");
    await until(() => searches(client).length === 2, "the debounced request");
    assert.deepEqual(searches(client)[1].params, {
      query: "retry",
      filters: { paths: ["src/**"], languages: ["python"] },
    });

    pick.type("retry upload lang:python mode:lexical");
    assert.equal(
      searches(client)[1].token?.isCancellationRequested,
      true,
      "typing cancels the request in flight",
    );
    await until(() => searches(client).length === 3, "the next request");
    assert.deepEqual(searches(client)[2].params, {
      query: "retry upload",
      mode: "lexical",
      filters: { languages: ["python"] },
    });

    pending[0](answer([hit(1, "stale")]));
    pending[1](answer([hit(41, "retry_upload"), hit(7)]));
    await until(() => !pick.busy, "the answer");
    assert.deepEqual(
      pick.items.map((i) => [i.label, i.description, i.detail, i.alwaysShow]),
      [
        ["retry_upload — src/mod41.py:42", "dense #1", "def f41():", true],
        ["src/mod7.py:8", "dense #1", "def f7():", true],
      ],
    );
    assert.equal(pick.title, "kenning: semantic search — lang python · mode lexical");
  });

  it("shows an invalid-params error as a row, not a crash", async () => {
    LanguageClient.handler = async (_m, params) => {
      if ((params as { query: string }).query === "") {
        return answer([]);
      }
      throw Object.assign(new Error("unknown language 'klingon'"), { code: -32602 });
    };
    const { pick } = await openSearch();
    pick.type("warp lang:klingon");
    await until(() => pick.items.length > 0, "the error row");
    assert.equal(pick.items[0].label, "$(error) invalid request: unknown language 'klingon'");
    assert.equal(pick.items[0].hit, undefined);
    pick.accept(pick.items[0]);
    assert.equal(pick.visible, true, "accepting a message row keeps the picker open");
    assert.equal(pick.busy, false);
  });

  it("shows a bad mode and an empty answer as rows", async () => {
    LanguageClient.handler = async () => answer([]);
    const { pick } = await openSearch();
    pick.type("foo mode:fuzzy");
    await until(() => pick.items.length === 2, "rows");
    assert.match(pick.items[0].label, /\$\(warning\) unknown mode "fuzzy"/);
    assert.equal(pick.items[1].label, "$(info) no results");
  });

  it("previews the highlighted hit, opens it on Enter with the range selected", async () => {
    const previous = fakeEditor(Uri.file("/ws/main.py"), new Selection(5, 0, 5, 0));
    stub.editors.set(previous.document.uri.toString(), previous);
    stub.activeTextEditor = previous;
    LanguageClient.handler = async (_m, params) =>
      answer((params as { query: string }).query ? [hit(41, "retry_upload")] : []);
    const { pick } = await openSearch();
    pick.type("retry");
    await until(() => pick.items.length === 1, "a hit");
    pick.highlight(pick.items[0]);
    await until(() => stub.shownDocuments.length === 1, "the preview");
    assert.deepEqual(stub.shownDocuments[0], {
      target: "file:///ws/src/mod41.py",
      options: { preview: true, preserveFocus: true, viewColumn: 1 },
    });
    const previewed = stub.editors.get("file:///ws/src/mod41.py");
    assert.deepEqual(previewed?.decorations, [new Range(41, 0, 46, 3)]);

    pick.accept(pick.items[0]);
    await until(() => stub.shownDocuments.length === 2, "the open");
    const opened = stub.shownDocuments[1];
    assert.equal(opened.target, "file:///ws/src/mod41.py");
    assert.equal(opened.options?.preview, false);
    assert.deepEqual(opened.options?.selection, new Range(41, 0, 46, 3));
    assert.equal(pick.visible, false);
    assert.equal(pick.disposed, true);
    await sleep(10);
    assert.equal(stub.shownDocuments.length, 2, "accepting does not go back to the previous editor");
  });

  it("Escape goes back to the editor you came from", async () => {
    const previous = fakeEditor(Uri.file("/ws/main.py"), new Selection(5, 2, 5, 2));
    previous.visibleRanges = [new Range(2, 0, 40, 0)];
    stub.editors.set(previous.document.uri.toString(), previous);
    stub.activeTextEditor = previous;
    LanguageClient.handler = async (_m, params) =>
      answer((params as { query: string }).query ? [hit(3)] : []);
    const { client, pick } = await openSearch();
    pick.type("x");
    await until(() => pick.items.length === 1, "a hit");
    pick.highlight(pick.items[0]);
    pick.type("xy"); // a request in flight when the picker closes
    pick.hide();
    await until(() => stub.shownDocuments.length === 2, "the restore");
    assert.equal(stub.shownDocuments[1].target, "file:///ws/main.py");
    assert.deepEqual(stub.shownDocuments[1].options?.selection, new Selection(5, 2, 5, 2));
    assert.equal(stub.activeTextEditor, previous);
    assert.deepEqual(previous.revealed, [new Range(2, 0, 40, 0)], "scrolled back to where it was");
    assert.deepEqual(
      stub.editors.get("file:///ws/src/mod3.py")?.decorations,
      [],
      "the preview highlight is gone",
    );
    await sleep(250);
    assert.equal(searches(client).length, 2, "closing cancels the pending search");
  });
});
