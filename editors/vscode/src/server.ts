// The kenning language-server process and its vscode-languageclient: resolve
// the command, check it can run, start over stdio, restart, and explain a
// failure with the install command and an "Open Settings" button. Settings go
// out as initializationOptions and come back in the protocol's camelCase shape
// on workspace/configuration and workspace/didChangeConfiguration.

import * as os from "node:os";
import * as vscode from "vscode";
import {
  LanguageClient,
  RevealOutputChannelOn,
  State,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import { DidChangeConfigurationNotification } from "vscode-languageserver-protocol";

import { answerConfiguration, toInitializationOptions } from "./config";
import { describeError } from "./format";
import { preflight, isExecutableFile } from "./preflight";
import { CONFIGURATION_SECTION, indexStatus, type InitializationOptions } from "./protocol";
import { onDidChangeInterpreter, selectedInterpreter } from "./python";
import {
  describeCommand,
  installHintFor,
  isFailure,
  resolveServerCommand,
  which,
  type ServerCommand,
} from "./serverCommand";
import type { IndexStatusBar } from "./statusBar";

const CLIENT_ID = "kenning";
const CLIENT_NAME = "kenning";

export function pathLookup(name: string): string | undefined {
  return which(name, {
    path: process.env.PATH,
    pathext: process.env.PATHEXT,
    platform: process.platform,
    isExecutable: isExecutableFile,
  });
}

export function settingsFor(scope?: vscode.Uri): InitializationOptions {
  const config = vscode.workspace.getConfiguration(CONFIGURATION_SECTION, scope);
  return toInitializationOptions((key) => config.get(key));
}

export class KenningServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  /** the command line of `client`, for messages */
  private commandLine = "";
  private hint = "";
  private starting: Promise<LanguageClient | undefined> | undefined;
  private interpreterWatch: vscode.Disposable | undefined;

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly statusBar: IndexStatusBar,
    /** a directory the user controls, used as the server's cwd (never the workspace) */
    private readonly cwd: string,
  ) {}

  /** The running client, starting it first if needed; undefined when it cannot start. */
  async ensureStarted(): Promise<LanguageClient | undefined> {
    const client = this.client;
    if (client?.isRunning()) {
      return client;
    }
    if (this.starting === undefined) {
      // A client that exists but is not running is restarting after a crash, or gave up:
      // start() joins the restart or tries once more.
      this.starting = (client === undefined ? this.start() : this.revive(client)).finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private async revive(client: LanguageClient): Promise<LanguageClient | undefined> {
    try {
      await client.start();
      return client;
    } catch (error) {
      if (this.client === client) {
        this.client = undefined;
      }
      this.fail(
        `kenning: the language server did not start (${this.commandLine}): ${describeError(error)}.`,
        this.hint,
      );
      void client.dispose(2_000).catch(() => undefined);
      return undefined;
    }
  }

  async restart(): Promise<LanguageClient | undefined> {
    this.output.appendLine("kenning: restarting the language server");
    if (this.starting !== undefined) {
      await this.starting;
    }
    await this.stop();
    return this.ensureStarted();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client === undefined) {
      return;
    }
    try {
      await client.dispose(5_000);
    } catch (error) {
      this.output.appendLine(`kenning: stopping the server failed: ${describeError(error)}`);
    }
  }

  private async resolveCommand(): Promise<ServerCommand | undefined> {
    const config = vscode.workspace.getConfiguration(CONFIGURATION_SECTION);
    const command = config.get<string[]>("server.command");
    const pythonPath = config.get<string>("server.pythonPath");
    const folder = vscode.workspace.workspaceFolders?.[0];
    const explicit = (command ?? []).length > 0 || (pythonPath ?? "").trim() !== "";
    const interpreter = explicit
      ? undefined
      : await selectedInterpreter(folder?.uri, (m) => this.output.appendLine(m));
    const resolved = resolveServerCommand({
      command,
      pythonPath,
      interpreter,
      which: pathLookup,
      variables: { home: os.homedir(), workspaceFolder: folder?.uri.fsPath, env: process.env },
    });
    if (isFailure(resolved)) {
      this.fail(resolved.error, resolved.installHint);
      return undefined;
    }
    if (resolved.source === "pythonExtension") {
      await this.watchInterpreter();
    }
    return resolved;
  }

  private async watchInterpreter(): Promise<void> {
    if (this.interpreterWatch !== undefined) {
      return;
    }
    this.interpreterWatch = await onDidChangeInterpreter(() => {
      this.output.appendLine("kenning: the Python interpreter changed");
      void this.restart();
    });
  }

  private async start(): Promise<LanguageClient | undefined> {
    this.statusBar.starting();
    const command = await this.resolveCommand();
    if (command === undefined) {
      return undefined;
    }
    const line = describeCommand(command);
    this.output.appendLine(`kenning: starting \`${line}\` (from ${command.source})`);

    const check = await preflight(command, { cwd: this.cwd, which: pathLookup });
    if (!check.ok) {
      const hint = installHintFor(command, check.reason === "missing-executable");
      this.fail(`kenning: cannot start the language server (${line}): ${check.detail}.`, hint);
      return undefined;
    }

    const serverOptions: ServerOptions = {
      command: command.command,
      args: command.args,
      transport: TransportKind.stdio,
      options: { cwd: this.cwd },
    };
    const client: LanguageClient = new LanguageClient(
      CLIENT_ID,
      CLIENT_NAME,
      serverOptions,
      this.clientOptions((): LanguageClient => client),
    );
    client.onNotification(indexStatus, (status) => this.statusBar.update(status));
    client.onDidChangeState((event) => {
      // Only the current client speaks for the status bar; a restart stops the old one on purpose.
      if (this.client === client && event.newState === State.Stopped) {
        this.statusBar.stopped(
          "the language server stopped; see Output → kenning, then Kenning: Restart Server",
        );
      } else if (this.client === client && event.newState === State.Starting) {
        this.statusBar.starting();
      }
    });
    this.commandLine = line;
    this.hint = installHintFor(command);
    try {
      await client.start();
    } catch (error) {
      this.fail(
        `kenning: the language server did not start (${line}): ${describeError(error)}.`,
        installHintFor(command),
      );
      try {
        await client.dispose(2_000);
      } catch {
        // already down
      }
      return undefined;
    }
    this.client = client;
    return client;
  }

  private clientOptions(client: () => LanguageClient): LanguageClientOptions {
    return {
      // Every file: kenning indexes all languages, and kenning/similar names open documents.
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: settingsFor(vscode.workspace.workspaceFolders?.[0]?.uri),
      synchronize: { configurationSection: CONFIGURATION_SECTION },
      connectionOptions: { maxRestartCount: 3 },
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const defaults = await next(params, token);
            const answered = Array.isArray(defaults) ? defaults : params.items.map(() => null);
            return answerConfiguration(params.items, answered, (scope) =>
              settingsFor(scope === undefined ? undefined : vscode.Uri.parse(scope)),
            );
          },
          // Send the protocol shape, not VS Code's raw settings tree.
          didChangeConfiguration: async () => {
            await client().sendNotification(DidChangeConfigurationNotification.type, {
              settings: { [CONFIGURATION_SECTION]: settingsFor(vscode.workspace.workspaceFolders?.[0]?.uri) },
            });
          },
        },
      },
    };
  }

  private fail(message: string, hint: string): void {
    this.output.appendLine(`${message} ${hint}`);
    this.statusBar.stopped(`${message} ${hint}`);
    void vscode.window
      .showErrorMessage(`${message} ${hint}`, "Open Settings", "Show Output")
      .then((choice) => {
        if (choice === "Open Settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", "kenning.server");
        } else if (choice === "Show Output") {
          this.output.show(true);
        }
      });
  }

  dispose(): void {
    this.interpreterWatch?.dispose();
    void this.stop();
  }
}
