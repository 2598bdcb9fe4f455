// The MCP server registration (src/mcp.ts): `kenning mcp --root <folder>` per
// folder from the language server's own command, only where VS Code has the
// API, only in a trusted workspace.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";

import { activate, deactivate } from "../src/extension";
import { MCP_PROVIDER_ID, mcpCommandFor } from "../src/mcp";
import { LanguageClient } from "./stubs/languageclient";
import { McpStdioServerDefinition, stub, Uri } from "./stubs/vscode";

const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as {
  contributes: { mcpServerDefinitionProviders?: { id: string; label: string }[] };
};

function context() {
  return { subscriptions: [] as { dispose(): unknown }[], extensionUri: Uri.file(tmpdir()) };
}

beforeEach(() => {
  stub.reset();
  LanguageClient.reset();
  stub.workspaceFolders = [
    { uri: Uri.file("/ws/app"), name: "app", index: 0 },
    { uri: Uri.file("/ws/lib"), name: "lib", index: 1 },
  ];
  stub.settings.set("kenning.server.command", [process.execPath, "serve"]);
});

afterEach(async () => {
  await deactivate();
});

describe("mcpCommandFor", () => {
  it("swaps the trailing `serve` for `mcp --root <folder>`", () => {
    assert.deepEqual(
      mcpCommandFor(
        { command: "/venv/bin/python", args: ["-m", "kenning", "serve"], source: "pythonPath" },
        "/ws/app",
      ),
      { command: "/venv/bin/python", args: ["-m", "kenning", "mcp", "--root", "/ws/app"] },
    );
    assert.deepEqual(mcpCommandFor({ command: "/bin/kenning", args: ["serve"], source: "path" }, "/w"), {
      command: "/bin/kenning",
      args: ["mcp", "--root", "/w"],
    });
  });

  it("leaves a custom command that does not end in `serve` alone", () => {
    assert.equal(
      mcpCommandFor({ command: "/x/run-kenning.sh", args: [], source: "setting" }, "/w"),
      undefined,
    );
  });
});

describe("MCP server definitions", () => {
  it("are contributed under the provider id the code registers", () => {
    assert.deepEqual(pkg.contributes.mcpServerDefinitionProviders, [
      { id: MCP_PROVIDER_ID, label: "kenning" },
    ]);
  });

  it("register nothing, and break nothing, in a VS Code without the API", async () => {
    await activate(context() as never);
    assert.equal(stub.mcpProviders.size, 0);
    assert.ok(stub.commands.has("kenning.semanticSearch"));
  });

  it("give one stdio server per folder, run like the language server", async () => {
    stub.installMcpApi();
    await activate(context() as never);
    const provider = stub.mcpProviders.get(MCP_PROVIDER_ID);
    assert.ok(provider !== undefined, "no provider registered");
    const definitions = (await provider.provideMcpServerDefinitions({})) as McpStdioServerDefinition[];
    assert.deepEqual(
      definitions.map((d) => [d.label, d.command, d.args]),
      [
        ["kenning: app", process.execPath, ["mcp", "--root", "/ws/app"]],
        ["kenning: lib", process.execPath, ["mcp", "--root", "/ws/lib"]],
      ],
    );
    let changes = 0;
    provider.onDidChangeMcpServerDefinitions(() => {
      changes += 1;
    });
    stub.changeSetting("kenning.server.pythonPath", "/venv/bin/python");
    stub.changeSetting("kenning.maxResults", 5);
    assert.equal(changes, 1, "a kenning.server change announces new definitions, others do not");
  });

  it("give none in an untrusted workspace, until trust is granted", async () => {
    stub.installMcpApi();
    stub.trusted = false;
    await activate(context() as never);
    const provider = stub.mcpProviders.get(MCP_PROVIDER_ID);
    assert.ok(provider !== undefined);
    assert.deepEqual(await provider.provideMcpServerDefinitions({}), []);
    let changes = 0;
    provider.onDidChangeMcpServerDefinitions(() => {
      changes += 1;
    });
    stub.grantTrust();
    assert.equal(changes, 1);
    assert.equal(((await provider.provideMcpServerDefinitions({})) as unknown[]).length, 2);
  });
});
