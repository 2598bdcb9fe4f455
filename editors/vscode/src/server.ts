// The kenning language-server process and its vscode-languageclient: resolve
// the command, check it can run, start over stdio, restart, and explain a
// failure (the server's own exit code and last stderr line, or the install
// command) with an "Open Settings" button. Settings go
// out as initializationOptions and come back in the protocol's camelCase shape
// on workspace/configuration and workspace/didChangeConfiguration.

import * as os from "node:os";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type CloseHandlerResult,
  type ErrorHandler,
  type ErrorHandlerResult,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import { DidChangeConfigurationNotification } from "vscode-languageserver-protocol";

import { answerConfiguration, toInitializationOptions } from "./config";
import { describeError, withoutPrefix } from "./format";
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
  type ServerCommandFailure,
} from "./serverCommand";
import { describeExit, ServerProcesses, type ServerExit } from "./serverProcess";
import type { IndexStatusBar } from "./statusBar";

const CLIENT_ID = "kenning";
const CLIENT_NAME = "kenning";
/** crashes of a running server that are restarted within 3 minutes */
const MAX_RESTARTS = 3;

export function pathLookup(name: string): string | undefined {
  return which(name, {
    path: process.env.PATH,
    pathext: process.env.PATHEXT,
    platform: process.platform,
    isExecutable: isExecutableFile,
  });
}

/**
 * vscode-languageclient's client, made safe to stop in any state. The library's
 * own failure paths (an initialize request that dies with the process) call
 * `void this.stop()`, which rejects with "Client is not running and can't be
 * stopped" when the start failed: an unhandled rejection in the extension host.
 * Stopping something that is not running has nothing to do, so it resolves.
 */
export class KenningClient extends LanguageClient {
  private startingUp = false;

  /**
   * Rejects unless the client ends up running. vscode-languageclient 9.0.1 resolves start()
   * when the server process dies during initialize (its connection-closed handler clears the
   * start promise before start() returns it) and leaves that promise's rejection unobserved.
   */
  override start(): Promise<void> {
    this.startingUp = true;
    const started = super.start();
    // Set synchronously by start(); observing it keeps its rejection from going unhandled.
    const internal = (this as unknown as { _onStart?: Promise<void> })._onStart;
    let failure: unknown;
    internal?.catch((error: unknown) => {
      failure = error;
    });
    return started
      .then(() => {
        if (!this.isRunning()) {
          throw failure ?? new Error("the client is not running after start");
        }
      })
      .finally(() => {
        this.startingUp = false;
      });
  }

  /** No toasts of the client's own while starting: a failed start gets one message, with the reason. */
  override error(message: string, data?: unknown, showNotification: boolean | "force" = true): void {
    super.error(message, data, this.startingUp ? false : showNotification);
  }

  override async stop(timeout?: number): Promise<void> {
    try {
      await super.stop(timeout);
    } catch (error) {
      if (this.isRunning()) {
        throw error;
      }
    }
  }
}

/**
 * When the connection closes: never restart a server that did not start (the client's default
 * would spawn it again several times and bury the reason under "-32097"); after it ran, restart
 * a crashed server up to `maxRestarts` times in 3 minutes, like the client's default handler.
 */
export class RestartPolicy implements ErrorHandler {
  private started = false;
  private readonly restarts: number[] = [];

  constructor(
    private readonly maxRestarts: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The server answered initialize. */
  markStarted(): void {
    this.started = true;
  }

  error(_error: Error, _message: unknown, count: number | undefined): ErrorHandlerResult {
    return { action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown };
  }

  closed(): CloseHandlerResult {
    if (!this.started) {
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = this.now();
    this.restarts.push(now);
    while (this.restarts.length > 0 && now - this.restarts[0] > 3 * 60_000) {
      this.restarts.shift();
    }
    if (this.restarts.length > this.maxRestarts) {
      return {
        action: CloseAction.DoNotRestart,
        message: `kenning: the server stopped ${this.restarts.length} times in 3 minutes and is not restarted; see Output → kenning, then Kenning: Restart Server.`,
      };
    }
    return { action: CloseAction.Restart, handled: true };
  }
}

/** Whether a failed start is kenning missing from the interpreter (then the install hint fits). */
export function isMissingKenning(exit: ServerExit | undefined): boolean {
  return exit?.stderr.some((line) => /No module named '?kenning\b/.test(line)) ?? false;
}

export function settingsFor(scope?: vscode.Uri): InitializationOptions {
  const config = vscode.workspace.getConfiguration(CONFIGURATION_SECTION, scope);
  return toInitializationOptions((key) => config.get(key));
}

export class KenningServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  /** the processes of `client` */
  private processes: ServerProcesses | undefined;
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
    // An untrusted workspace is never indexed: its files, ignore files and store are the
    // repository author's, not the user's. extension.ts starts the server when trust is granted.
    if (!vscode.workspace.isTrusted) {
      this.statusBar.untrusted();
      return undefined;
    }
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
      const processes = this.processes;
      if (this.client === client) {
        this.client = undefined;
        this.processes = undefined;
      }
      await this.failedStart(error, processes, this.hint);
      void client.dispose(2_000).catch(() => undefined);
      processes?.kill();
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
    const processes = this.processes;
    this.client = undefined;
    this.processes = undefined;
    if (client === undefined) {
      return;
    }
    try {
      await client.dispose(5_000);
    } catch (error) {
      this.output.appendLine(`kenning: stopping the server failed: ${describeError(error)}`);
    }
    // shutdown + exit normally ends it; a server that did not answer in time is ended here
    processes?.kill();
  }

  private async resolveCommand(): Promise<ServerCommand | undefined> {
    const resolved = await this.resolve();
    if (isFailure(resolved)) {
      this.fail(resolved.error, resolved.installHint);
      return undefined;
    }
    if (resolved.source === "pythonExtension") {
      await this.watchInterpreter();
    }
    return resolved;
  }

  /** The server command as the settings give it, without telling the user when there is none. */
  async resolveQuietly(): Promise<ServerCommand | undefined> {
    const resolved = await this.resolve();
    return isFailure(resolved) ? undefined : resolved;
  }

  private async resolve(): Promise<ServerCommand | ServerCommandFailure> {
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
      this.fail(`cannot start the language server (${line}): ${check.detail}.`, hint);
      return undefined;
    }

    // The client spawns through `processes` (a function ServerOptions): the command line stays
    // exactly as configured, and the exit code and stderr are there to explain a failure.
    const processes = new ServerProcesses({ command: command.command, args: command.args, cwd: this.cwd });
    const serverOptions: ServerOptions = () => processes.spawn();
    const restartPolicy = new RestartPolicy(MAX_RESTARTS);
    const client: LanguageClient = new KenningClient(
      CLIENT_ID,
      CLIENT_NAME,
      serverOptions,
      this.clientOptions((): LanguageClient => client, restartPolicy),
    );
    client.onNotification(indexStatus, (status) => this.statusBar.update(status));
    client.onDidChangeState((event) => {
      // Only the current client speaks for the status bar; a restart stops the old one on purpose.
      if (this.client === client && event.newState === State.Stopped) {
        const exit = processes.exit;
        const how = exit === undefined ? "" : ` (${describeExit(exit)})`;
        this.statusBar.stopped(
          `the language server stopped${how}; see Output → kenning, then Kenning: Restart Server`,
        );
      } else if (this.client === client && event.newState === State.Starting) {
        this.statusBar.starting();
      }
    });
    this.commandLine = line;
    this.hint = installHintFor(command);
    try {
      await client.start();
      restartPolicy.markStarted();
    } catch (error) {
      await this.failedStart(error, processes, installHintFor(command));
      try {
        await client.dispose(2_000);
      } catch {
        // already down
      }
      processes.kill();
      return undefined;
    }
    this.client = client;
    this.processes = processes;
    return client;
  }

  /**
   * Explains a start that failed. When the process died, its exit code and last stderr line
   * say why; the client's own error ("connection got disposed") only says that it did.
   */
  private async failedStart(
    error: unknown,
    processes: ServerProcesses | undefined,
    hint: string,
  ): Promise<void> {
    const exit = (await processes?.waitForExit(2_000)) ?? processes?.lastExit;
    if (exit === undefined) {
      this.fail(`the language server did not start (${this.commandLine}): ${describeError(error)}.`, hint);
      return;
    }
    this.fail(
      `the language server did not start (${this.commandLine}): ${describeExit(exit)}.`,
      isMissingKenning(exit) || exit.error !== undefined ? hint : "See Output → kenning for its log.",
    );
  }

  private clientOptions(client: () => LanguageClient, errorHandler: ErrorHandler): LanguageClientOptions {
    return {
      // Every file: kenning indexes all languages, and kenning/similar names open documents.
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: settingsFor(vscode.workspace.workspaceFolders?.[0]?.uri),
      synchronize: { configurationSection: CONFIGURATION_SECTION },
      errorHandler,
      // Without a handler the client shows the bare "connection got disposed" in a toast of its own;
      // failedStart explains a failed start once, with the server's exit code and last words.
      initializationFailedHandler: () => false,
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

  /** `message` without the "kenning: " prefix; the toast and the log add it, the status bar too. */
  private fail(message: string, hint: string): void {
    const text = `${withoutPrefix(message)} ${hint}`;
    this.output.appendLine(`kenning: ${text}`);
    this.statusBar.stopped(text);
    void vscode.window.showErrorMessage(`kenning: ${text}`, "Open Settings", "Show Output").then((choice) => {
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
