// A fake `vscode-languageclient/node` for the glue tests: a LanguageClient
// that speaks no JSON-RPC. It records how it was constructed and what was
// sent, and answers requests through `LanguageClient.handler`. Like the real
// one it calls a function ServerOptions to get the server process, and after a
// failed start it refuses to stop ("Client is not running and can't be
// stopped") and calls its own stop() without awaiting it, as
// vscode-languageclient 9 does when initialize fails. esbuild aliases
// the real module to this file when it bundles the tests.

export enum TransportKind {
  stdio = 0,
  ipc = 1,
  pipe = 2,
  socket = 3,
}

export enum ErrorAction {
  Continue = 1,
  Shutdown = 2,
}

export enum CloseAction {
  DoNotRestart = 1,
  Restart = 2,
}

export interface ErrorHandlerResult {
  action: ErrorAction;
  message?: string;
  handled?: boolean;
}

export interface CloseHandlerResult {
  action: CloseAction;
  message?: string;
  handled?: boolean;
}

export interface ErrorHandler {
  error(error: Error, message: unknown, count: number | undefined): ErrorHandlerResult;
  closed(): CloseHandlerResult;
}

export enum RevealOutputChannelOn {
  Debug = 0,
  Info = 1,
  Warn = 2,
  Error = 3,
  Never = 4,
}

export enum State {
  Stopped = 1,
  Running = 2,
  Starting = 3,
}

export interface MessageSignature {
  method: string;
}

export interface TokenLike {
  readonly isCancellationRequested: boolean;
}

export interface SentRequest {
  method: string;
  params: unknown;
  token: TokenLike | undefined;
}

export type RequestHandler = (
  method: string,
  params: unknown,
  token: TokenLike | undefined,
) => Promise<unknown>;

// The real option types are structural; the glue only needs to be able to pass them.
export type LanguageClientOptions = Record<string, unknown>;
export type ServerOptions = Record<string, unknown>;

export class LanguageClient {
  static instances: LanguageClient[] = [];
  /** answers every sendRequest; tests replace it */
  static handler: RequestHandler = async () => null;
  /** when set, start() rejects with it */
  static startError: Error | undefined;
  /**
   * With startError: start() resolves anyway and an internal promise rejects, as
   * vscode-languageclient 9.0.1 does when the process dies during initialize.
   */
  static resolveFailedStart = false;

  readonly requests: SentRequest[] = [];
  readonly notifications: { method: string; params: unknown }[] = [];
  readonly notificationHandlers = new Map<string, (params: unknown) => void>();
  running = false;
  disposed = false;
  startFailed = false;
  /** what a function ServerOptions returned */
  process: import("node:child_process").ChildProcess | undefined;
  private readonly stateListeners: ((event: { oldState: State; newState: State }) => void)[] = [];

  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: ServerOptions,
    readonly clientOptions: LanguageClientOptions,
  ) {
    LanguageClient.instances.push(this);
  }

  static reset(): void {
    LanguageClient.instances = [];
    LanguageClient.handler = async () => null;
    LanguageClient.startError = undefined;
    LanguageClient.resolveFailedStart = false;
  }

  async start(): Promise<void> {
    // Like the real client: the start promise exists before the first await.
    let rejectStart: (error: unknown) => void = () => undefined;
    if (LanguageClient.resolveFailedStart) {
      this._onStart = new Promise<void>((_resolve, reject) => {
        rejectStart = reject;
      });
    }
    this.setState(State.Starting);
    const spawn = this.serverOptions as unknown;
    if (typeof spawn === "function") {
      this.process = await (spawn as () => Promise<import("node:child_process").ChildProcess>)();
    }
    if (LanguageClient.startError !== undefined) {
      // "connection got disposed" is what the real client says when the process has ended.
      const child = this.process;
      if (child !== undefined && /connection got disposed/.test(LanguageClient.startError.message)) {
        if (child.exitCode === null && child.signalCode === null) {
          await new Promise((resolve) => child.once("exit", resolve));
        }
      }
      this.startFailed = true;
      this.setState(State.Stopped);
      void this.stop();
      if (LanguageClient.resolveFailedStart) {
        rejectStart(LanguageClient.startError);
        return;
      }
      throw LanguageClient.startError;
    }
    this.setState(State.Running);
  }

  onDidChangeState(listener: (event: { oldState: State; newState: State }) => void): { dispose(): void } {
    this.stateListeners.push(listener);
    return { dispose: () => undefined };
  }

  /** What the real client does when the server process dies and it gives up. */
  crash(): void {
    this.setState(State.Stopped);
  }

  private state = State.Stopped;

  private setState(newState: State): void {
    const oldState = this.state;
    this.state = newState;
    this.running = newState === State.Running;
    for (const listener of this.stateListeners) {
      listener({ oldState, newState });
    }
  }

  /** the real client's start promise (private there) */
  _onStart: Promise<void> | undefined;
  readonly errors: { message: string; showNotification: boolean | "force" | undefined }[] = [];

  error(message: string, _data?: unknown, showNotification?: boolean | "force"): void {
    this.errors.push({ message, showNotification });
  }

  isRunning(): boolean {
    return this.running;
  }

  dispose(timeout?: number): Promise<void> {
    this.disposed = true;
    return this.stop(timeout);
  }

  async stop(_timeout?: number): Promise<void> {
    if (this.startFailed) {
      throw new Error("Client is not running and can't be stopped. It's current state is: startFailed");
    }
    this.setState(State.Stopped);
  }

  onNotification(type: MessageSignature | string, handler: (params: unknown) => void): { dispose(): void } {
    const method = typeof type === "string" ? type : type.method;
    this.notificationHandlers.set(method, handler);
    return { dispose: () => this.notificationHandlers.delete(method) };
  }

  async sendNotification(type: MessageSignature | string, params?: unknown): Promise<void> {
    this.notifications.push({ method: typeof type === "string" ? type : type.method, params });
  }

  sendRequest(type: MessageSignature | string, params?: unknown, token?: TokenLike): Promise<unknown> {
    const method = typeof type === "string" ? type : type.method;
    this.requests.push({ method, params, token });
    return LanguageClient.handler(method, params, token);
  }

  /** What the server would do: send a notification to the client. */
  notify(method: string, params: unknown): void {
    const handler = this.notificationHandlers.get(method);
    if (handler === undefined) {
      throw new Error(`no handler for ${method}`);
    }
    handler(params);
  }
}
