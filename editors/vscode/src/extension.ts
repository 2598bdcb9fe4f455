// Entry point: wires the commands, the status bar, the language client and
// the setting watchers together. Logic lives elsewhere (query.ts, format.ts,
// debounce.ts, serverCommand.ts, config.ts are vscode-free; server.ts,
// searchPick.ts, statusBar.ts hold the VS Code glue).

import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

import { RESTART_SETTINGS } from "./config";
import { describeError, statusLine } from "./format";
import {
  reindex,
  reindexParams,
  semanticSearch,
  similar,
  status,
  statusParams,
  type IndexStatus,
} from "./protocol";
import { showSemanticSearch, showSimilar, type SearchBackend } from "./searchPick";
import { registerMcpServers } from "./mcp";
import { KenningServer } from "./server";
import { IndexStatusBar, MANAGE_TRUST_COMMAND, UNTRUSTED_REASON, folderName } from "./statusBar";

/** The extension's own command ids (package.json contributes.commands). */
export const Commands = {
  semanticSearch: "kenning.semanticSearch",
  findSimilar: "kenning.findSimilar",
  reindexWorkspace: "kenning.reindexWorkspace",
  showIndexStatus: "kenning.showIndexStatus",
  restartServer: "kenning.restartServer",
  showOutput: "kenning.showOutput",
} as const;

let server: KenningServer | undefined;

function backendFor(client: LanguageClient): SearchBackend {
  return {
    search: (params, token) => client.sendRequest(semanticSearch, params, token),
    similar: (params, token) => client.sendRequest(similar, params, token),
  };
}

async function withClient(
  kenning: KenningServer,
  run: (client: LanguageClient) => Promise<void>,
): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    const choice = await vscode.window.showInformationMessage(
      `kenning: ${UNTRUSTED_REASON}`,
      "Manage Workspace Trust",
    );
    if (choice === "Manage Workspace Trust") {
      await vscode.commands.executeCommand(MANAGE_TRUST_COMMAND);
    }
    return;
  }
  const client = await kenning.ensureStarted();
  if (client === undefined) {
    return; // KenningServer already told the user why
  }
  try {
    await run(client);
  } catch (error) {
    void vscode.window.showErrorMessage(`kenning: ${describeError(error)}`);
  }
}

interface FolderItem extends vscode.QuickPickItem {
  folder?: string;
}

async function showIndexStatus(client: LanguageClient, statusBar: IndexStatusBar): Promise<void> {
  const statuses: IndexStatus[] = (await client.sendRequest(status, statusParams())) ?? [];
  statusBar.replaceAll(statuses);
  if (statuses.length === 0) {
    void vscode.window.showInformationMessage("kenning: no workspace folder is indexed.");
    return;
  }
  const reindexButton: vscode.QuickInputButton = {
    iconPath: new vscode.ThemeIcon("refresh"),
    tooltip: "Reindex this folder",
  };
  const icons: Record<IndexStatus["state"], string> = {
    scanning: "$(sync~spin)",
    embedding: "$(sync~spin)",
    ready: "$(check)",
    error: "$(error)",
  };
  const items: FolderItem[] = statuses.map((s) => {
    const line = statusLine(s, folderName);
    const colon = line.indexOf(": ");
    return {
      label: `${icons[s.state]} ${folderName(s.folder)}`,
      description: colon >= 0 ? line.slice(colon + 2) : line,
      detail: `${s.files} files · ${s.chunks} chunks · ${s.embedded} embedded · ${s.pending} pending · ${s.skipped} skipped`,
      folder: s.folder,
      buttons: [reindexButton],
    };
  });
  const pick = vscode.window.createQuickPick<FolderItem>();
  pick.title = "kenning: index status";
  pick.placeholder = "One line per workspace folder; the ↻ button reindexes a folder";
  pick.items = items;
  pick.onDidTriggerItemButton(async (event) => {
    const folder = event.item.folder;
    if (folder !== undefined) {
      pick.hide();
      await client.sendRequest(reindex, reindexParams(folder));
      vscode.window.setStatusBarMessage(`kenning: reindexing ${folderName(folder)}…`, 3_000);
    }
  });
  pick.onDidAccept(() => pick.hide());
  pick.onDidHide(() => pick.dispose());
  pick.show();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("kenning");
  const statusBar = new IndexStatusBar(Commands.showIndexStatus);
  const kenning = new KenningServer(output, statusBar, context.extensionUri.fsPath);
  server = kenning;
  context.subscriptions.push(output, statusBar, kenning);

  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.semanticSearch, () =>
      withClient(kenning, async (client) => {
        showSemanticSearch(backendFor(client));
      }),
    ),
    vscode.commands.registerCommand(Commands.findSimilar, () => {
      const editor = vscode.window.activeTextEditor;
      if (editor === undefined || editor.document.uri.scheme !== "file") {
        void vscode.window.showInformationMessage(
          "kenning: open a saved file and select the code to match first.",
        );
        return;
      }
      return withClient(kenning, async (client) => {
        showSimilar(backendFor(client), editor);
      });
    }),
    vscode.commands.registerCommand(Commands.reindexWorkspace, () =>
      withClient(kenning, async (client) => {
        await client.sendRequest(reindex, reindexParams());
        vscode.window.setStatusBarMessage("kenning: reindexing the workspace…", 3_000);
      }),
    ),
    vscode.commands.registerCommand(Commands.showIndexStatus, () =>
      withClient(kenning, (client) => showIndexStatus(client, statusBar)),
    ),
    vscode.commands.registerCommand(Commands.restartServer, async () => {
      await kenning.restart();
    }),
    vscode.commands.registerCommand(Commands.showOutput, () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (RESTART_SETTINGS.some((section) => event.affectsConfiguration(section))) {
        void kenning.restart();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      if ((vscode.workspace.workspaceFolders ?? []).length > 0) {
        void kenning.ensureStarted();
      } else {
        statusBar.idle("no folder open; the server starts when a folder is opened or a command is used");
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders((event) => {
      for (const removed of event.removed) {
        statusBar.forget(removed.uri.toString());
      }
      if ((vscode.workspace.workspaceFolders ?? []).length > 0) {
        void kenning.ensureStarted();
      }
    }),
  );

  // kenning's MCP server for VS Code's agents, where this VS Code supports registering one.
  const version = (context.extension?.packageJSON as { version?: string } | undefined)?.version ?? "0";
  const mcp = registerMcpServers(() => kenning.resolveQuietly(), version);
  if (mcp !== undefined) {
    context.subscriptions.push(mcp);
  }

  // Index as soon as there is something to index; with no folder open, start on first use.
  if (!vscode.workspace.isTrusted) {
    statusBar.untrusted();
  } else if ((vscode.workspace.workspaceFolders ?? []).length > 0) {
    void kenning.ensureStarted();
  } else {
    statusBar.idle("no folder open; the server starts when a folder is opened or a command is used");
  }
}

export async function deactivate(): Promise<void> {
  const kenning = server;
  server = undefined;
  await kenning?.stop();
}
