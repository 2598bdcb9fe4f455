// kenning's MCP server for VS Code's agents: registers `kenning mcp --root
// <folder>` for each workspace folder through the MCP server-definition
// provider API (VS Code 1.101+), run by the same interpreter or executable as
// the language server. Older VS Code has no such API: then nothing is
// registered and nothing else changes. Untrusted workspaces get no server.

import * as vscode from "vscode";

import type { ServerCommand } from "./serverCommand";

/** package.json contributes.mcpServerDefinitionProviders[0].id */
export const MCP_PROVIDER_ID = "kenning.mcp";

/** The `kenning mcp` command line for `folder`, from the one that runs `kenning serve`. */
export function mcpCommandFor(
  server: ServerCommand,
  folder: string,
): { command: string; args: string[] } | undefined {
  const args = [...server.args];
  // A custom kenning.server.command that does not end in `serve` cannot be mapped safely.
  if (args[args.length - 1] !== "serve") {
    return undefined;
  }
  args[args.length - 1] = "mcp";
  return { command: server.command, args: [...args, "--root", folder] };
}

// The API's shape, declared here: @types/vscode stays at the oldest supported VS Code (1.85).
interface McpProvider {
  onDidChangeMcpServerDefinitions: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): Promise<unknown[]>;
}
interface McpApi {
  registerMcpServerDefinitionProvider(id: string, provider: McpProvider): vscode.Disposable;
}
type McpStdioServerDefinition = new (
  label: string,
  command: string,
  args?: string[],
  env?: Record<string, string | number | null>,
  version?: string,
) => unknown;

/**
 * Registers the provider when this VS Code has the API; returns what to dispose, or undefined.
 * `resolve` finds the server command without telling the user about a failure.
 */
export function registerMcpServers(
  resolve: () => Promise<ServerCommand | undefined>,
  version: string,
): vscode.Disposable | undefined {
  const api = vscode as unknown as {
    lm?: Partial<McpApi>;
    McpStdioServerDefinition?: McpStdioServerDefinition;
  };
  const Definition = api.McpStdioServerDefinition;
  if (typeof api.lm?.registerMcpServerDefinitionProvider !== "function" || typeof Definition !== "function") {
    return undefined;
  }
  const changed = new vscode.EventEmitter<void>();
  const provider: McpProvider = {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: async () => {
      if (!vscode.workspace.isTrusted) {
        return [];
      }
      const server = await resolve();
      if (server === undefined) {
        return [];
      }
      const definitions: unknown[] = [];
      for (const folder of vscode.workspace.workspaceFolders ?? []) {
        const mcp = mcpCommandFor(server, folder.uri.fsPath);
        if (mcp !== undefined) {
          definitions.push(new Definition(`kenning: ${folder.name}`, mcp.command, mcp.args, {}, version));
        }
      }
      return definitions;
    },
  };
  const fire = (): void => changed.fire();
  return vscode.Disposable.from(
    api.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider),
    changed,
    vscode.workspace.onDidChangeWorkspaceFolders(fire),
    vscode.workspace.onDidGrantWorkspaceTrust(fire),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("kenning.server")) {
        fire();
      }
    }),
  );
}
