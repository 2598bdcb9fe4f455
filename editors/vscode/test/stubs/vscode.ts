// A fake `vscode` module for the glue tests: just enough of the API that
// src/ uses, recording what the extension does (commands registered, pickers
// created, documents shown, messages) in `stub`. esbuild aliases `vscode` to
// this file when it bundles the tests (see esbuild.mjs).

import { readFileSync } from "node:fs";
import { join } from "node:path";

type Listener<T> = (value: T) => unknown;

export class Disposable {
  constructor(private readonly onDispose: () => void = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((item) => item.dispose()));
  }
  dispose(): void {
    this.onDispose();
  }
}

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    });
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
  get listenerCount(): number {
    return this.listeners.length;
  }
  dispose(): void {
    this.listeners = [];
  }
}

export interface FakeToken {
  readonly isCancellationRequested: boolean;
  readonly onCancellationRequested: (listener: Listener<void>) => Disposable;
}

export class CancellationTokenSource {
  private cancelled = false;
  private readonly emitter = new EventEmitter<void>();
  readonly token: FakeToken;

  constructor() {
    const isCancelled = (): boolean => this.cancelled;
    this.token = {
      get isCancellationRequested() {
        return isCancelled();
      },
      onCancellationRequested: this.emitter.event,
    };
    stub.tokenSources.push(this);
  }
  cancel(): void {
    if (!this.cancelled) {
      this.cancelled = true;
      this.emitter.fire();
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  static parse(value: string): Uri {
    const match = /^([a-z][a-z0-9+.-]*):(?:\/\/[^/]*)?(.*)$/i.exec(value);
    if (match === null) {
      throw new Error(`not a URI: ${value}`);
    }
    return new Uri(match[1], decodeURIComponent(match[2]));
  }
  static file(path: string): Uri {
    return new Uri("file", path);
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${encodeURI(this.path)}`;
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(startLine: number, startCharacter: number, endLine: number, endCharacter: number) {
    this.start = new Position(startLine, startCharacter);
    this.end = new Position(endLine, endCharacter);
  }
}

export class Selection extends Range {}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class ThemeIcon {
  constructor(readonly id: string) {}
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum TextEditorRevealType {
  Default = 0,
  InCenter = 1,
  InCenterIfOutsideViewport = 2,
  AtTop = 3,
}

// ---------------------------------------------------------------------------
// Recorded state

export interface FakeStatusBarItem {
  id: string;
  text: string;
  tooltip: string | undefined;
  command: string | undefined;
  name: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible: boolean;
  show(): void;
  hide(): void;
  dispose(): void;
}

export interface QuickPickItemLike {
  label: string;
  description?: string;
  detail?: string;
  alwaysShow?: boolean;
}

export class FakeQuickPick<T extends QuickPickItemLike> {
  title: string | undefined;
  placeholder: string | undefined;
  busy = false;
  matchOnDescription = false;
  matchOnDetail = false;
  items: readonly T[] = [];
  activeItems: readonly T[] = [];
  selectedItems: readonly T[] = [];
  visible = false;
  disposed = false;
  private _value = "";
  private readonly valueEmitter = new EventEmitter<string>();
  private readonly activeEmitter = new EventEmitter<readonly T[]>();
  private readonly acceptEmitter = new EventEmitter<void>();
  private readonly hideEmitter = new EventEmitter<void>();
  private readonly buttonEmitter = new EventEmitter<{ item: T; button: unknown }>();
  readonly onDidChangeValue = this.valueEmitter.event;
  readonly onDidChangeActive = this.activeEmitter.event;
  readonly onDidAccept = this.acceptEmitter.event;
  readonly onDidHide = this.hideEmitter.event;
  readonly onDidTriggerItemButton = this.buttonEmitter.event;

  get value(): string {
    return this._value;
  }
  /** Setting the value from code does not fire onDidChangeValue (as in VS Code). */
  set value(value: string) {
    this._value = value;
  }
  show(): void {
    this.visible = true;
  }
  hide(): void {
    if (this.visible) {
      this.visible = false;
      this.hideEmitter.fire();
    }
  }
  dispose(): void {
    this.disposed = true;
  }

  // --- what the user does
  type(value: string): void {
    this._value = value;
    this.valueEmitter.fire(value);
  }
  highlight(item: T): void {
    this.activeItems = [item];
    this.activeEmitter.fire([item]);
  }
  accept(item: T): void {
    this.activeItems = [item];
    this.selectedItems = [item];
    this.acceptEmitter.fire();
  }
  pressButton(item: T, button: unknown): void {
    this.buttonEmitter.fire({ item, button });
  }
}

export interface ShownDocument {
  target: string;
  options: { preview?: boolean; preserveFocus?: boolean; selection?: Range; viewColumn?: number } | undefined;
}

export interface FakeEditor {
  document: { uri: Uri };
  selection: Selection;
  visibleRanges: Range[];
  viewColumn: number | undefined;
  decorations: Range[];
  revealed: Range[];
  setDecorations(type: unknown, ranges: Range[]): void;
  revealRange(range: Range): void;
}

export function fakeEditor(uri: Uri, selection = new Selection(0, 0, 0, 0)): FakeEditor {
  return {
    document: { uri },
    selection,
    visibleRanges: [new Range(0, 0, 30, 0)],
    viewColumn: 1,
    decorations: [],
    revealed: [],
    setDecorations(_type, ranges) {
      this.decorations = ranges;
    },
    revealRange(range) {
      this.revealed.push(range);
    },
  };
}

interface ConfigurationDefaults {
  [key: string]: unknown;
}

function packageDefaults(): ConfigurationDefaults {
  const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as {
    contributes: { configuration: { properties: Record<string, { default?: unknown }> } };
  };
  const defaults: ConfigurationDefaults = {};
  for (const [key, schema] of Object.entries(pkg.contributes.configuration.properties)) {
    defaults[key] = schema.default;
  }
  return defaults;
}

export const stub = {
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  executed: [] as { command: string; args: unknown[] }[],
  /** full setting name → value the user set */
  settings: new Map<string, unknown>(),
  defaults: packageDefaults(),
  statusBarItems: [] as FakeStatusBarItem[],
  quickPicks: [] as FakeQuickPick<QuickPickItemLike>[],
  tokenSources: [] as CancellationTokenSource[],
  messages: [] as { kind: "info" | "warning" | "error"; text: string; items: string[] }[],
  /** what showErrorMessage & co. resolve to */
  messageAnswer: undefined as string | undefined,
  shownDocuments: [] as ShownDocument[],
  editors: new Map<string, FakeEditor>(),
  activeTextEditor: undefined as FakeEditor | undefined,
  workspaceFolders: undefined as { uri: Uri; name: string; index: number }[] | undefined,
  extensions: new Map<string, unknown>(),
  configurationChanged: new EventEmitter<{ affectsConfiguration(section: string): boolean }>(),
  foldersChanged: new EventEmitter<{ added: unknown[]; removed: { uri: Uri }[] }>(),
  output: [] as string[],
  /** vscode.workspace.isTrusted; grantTrust() flips it and fires onDidGrantWorkspaceTrust */
  trusted: true,
  trustGranted: new EventEmitter<void>(),

  grantTrust(): void {
    this.trusted = true;
    this.trustGranted.fire();
  },

  /** Fires onDidChangeConfiguration after setting `name` (e.g. "kenning.model"). */
  changeSetting(name: string, value: unknown): void {
    this.settings.set(name, value);
    this.configurationChanged.fire({
      affectsConfiguration: (section: string) => name === section || name.startsWith(`${section}.`),
    });
  },
  lastQuickPick<T extends QuickPickItemLike>(): FakeQuickPick<T> {
    const pick = this.quickPicks[this.quickPicks.length - 1];
    if (pick === undefined) {
      throw new Error("no QuickPick was created");
    }
    return pick as unknown as FakeQuickPick<T>;
  },
  /** registered MCP server-definition providers, by id (with the API installed) */
  mcpProviders: new Map<string, McpProviderLike>(),
  installMcpApi(): void {
    lm.registerMcpServerDefinitionProvider = (id, provider) => {
      this.mcpProviders.set(id, provider);
      return new Disposable(() => this.mcpProviders.delete(id));
    };
  },
  reset(): void {
    delete lm.registerMcpServerDefinitionProvider;
    this.mcpProviders.clear();
    this.commands.clear();
    this.executed = [];
    this.settings.clear();
    this.statusBarItems = [];
    this.quickPicks = [];
    this.tokenSources = [];
    this.messages = [];
    this.messageAnswer = undefined;
    this.shownDocuments = [];
    this.editors.clear();
    this.activeTextEditor = undefined;
    this.workspaceFolders = undefined;
    this.extensions.clear();
    this.configurationChanged = new EventEmitter();
    this.foldersChanged = new EventEmitter();
    this.output = [];
    this.trusted = true;
    this.trustGranted = new EventEmitter();
  },
};

// ---------------------------------------------------------------------------
// Namespaces

export const commands = {
  registerCommand(command: string, callback: (...args: unknown[]) => unknown): Disposable {
    if (stub.commands.has(command)) {
      throw new Error(`command '${command}' already exists`);
    }
    stub.commands.set(command, callback);
    return new Disposable(() => stub.commands.delete(command));
  },
  async executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    stub.executed.push({ command, args });
    const callback = stub.commands.get(command);
    return callback === undefined ? undefined : callback(...args);
  },
};

function message(kind: "info" | "warning" | "error") {
  return (text: string, ...items: unknown[]): Promise<string | undefined> => {
    const labels = items.filter((item): item is string => typeof item === "string");
    stub.messages.push({ kind, text, items: labels });
    return Promise.resolve(stub.messageAnswer);
  };
}

export const window = {
  get activeTextEditor(): FakeEditor | undefined {
    return stub.activeTextEditor;
  },
  createOutputChannel(name: string) {
    return {
      name,
      append: (text: string) => stub.output.push(text),
      appendLine: (text: string) => stub.output.push(text),
      replace: () => undefined,
      clear: () => undefined,
      show: () => undefined,
      hide: () => undefined,
      dispose: () => undefined,
    };
  },
  createStatusBarItem(id: string): FakeStatusBarItem {
    const item: FakeStatusBarItem = {
      id,
      text: "",
      tooltip: undefined,
      command: undefined,
      name: undefined,
      backgroundColor: undefined,
      visible: false,
      show() {
        this.visible = true;
      },
      hide() {
        this.visible = false;
      },
      dispose() {
        this.visible = false;
      },
    };
    stub.statusBarItems.push(item);
    return item;
  },
  createQuickPick<T extends QuickPickItemLike>(): FakeQuickPick<T> {
    const pick = new FakeQuickPick<T>();
    stub.quickPicks.push(pick as unknown as FakeQuickPick<QuickPickItemLike>);
    return pick;
  },
  createTextEditorDecorationType(_options: unknown) {
    return { key: "decoration", dispose: () => undefined };
  },
  async showTextDocument(
    target: Uri | { uri: Uri },
    options?: ShownDocument["options"],
  ): Promise<FakeEditor> {
    const uri = target instanceof Uri ? target : target.uri;
    stub.shownDocuments.push({ target: uri.toString(), options });
    let editor = stub.editors.get(uri.toString());
    if (editor === undefined) {
      editor = fakeEditor(uri);
      stub.editors.set(uri.toString(), editor);
    }
    if (options?.selection !== undefined) {
      editor.selection = options.selection;
    }
    if (options?.preserveFocus !== true) {
      stub.activeTextEditor = editor;
    }
    return editor;
  },
  showInformationMessage: message("info"),
  showWarningMessage: message("warning"),
  showErrorMessage: message("error"),
  setStatusBarMessage(text: string): Disposable {
    stub.messages.push({ kind: "info", text, items: [] });
    return new Disposable();
  },
};

export const workspace = {
  get workspaceFolders() {
    return stub.workspaceFolders;
  },
  getConfiguration(section?: string) {
    const prefix = section ? `${section}.` : "";
    return {
      get<T>(key: string, fallback?: T): T | undefined {
        const name = prefix + key;
        if (stub.settings.has(name)) {
          return stub.settings.get(name) as T;
        }
        if (name in stub.defaults) {
          return stub.defaults[name] as T;
        }
        return fallback;
      },
      has(key: string): boolean {
        return stub.settings.has(prefix + key) || prefix + key in stub.defaults;
      },
    };
  },
  get onDidChangeConfiguration() {
    return stub.configurationChanged.event;
  },
  get onDidChangeWorkspaceFolders() {
    return stub.foldersChanged.event;
  },
  get isTrusted() {
    return stub.trusted;
  },
  get onDidGrantWorkspaceTrust() {
    return stub.trustGranted.event;
  },
  getWorkspaceFolder(uri: Uri) {
    return stub.workspaceFolders?.find((folder) => uri.path.startsWith(folder.uri.path));
  },
  asRelativePath(target: Uri | string): string {
    const path = typeof target === "string" ? target : target.path;
    const folder = stub.workspaceFolders?.find((f) => path.startsWith(`${f.uri.path}/`));
    return folder === undefined ? path : path.slice(folder.uri.path.length + 1);
  },
};

/** VS Code 1.101's MCP API; tests install it with stub.installMcpApi(). */
export class McpStdioServerDefinition {
  constructor(
    readonly label: string,
    readonly command: string,
    readonly args: string[] = [],
    readonly env: Record<string, string | number | null> = {},
    readonly version?: string,
  ) {}
}

export const lm: {
  registerMcpServerDefinitionProvider?: (id: string, provider: McpProviderLike) => Disposable;
} = {};

export interface McpProviderLike {
  onDidChangeMcpServerDefinitions: (listener: () => void) => Disposable;
  provideMcpServerDefinitions(token: unknown): Promise<unknown[]>;
}

export const extensions = {
  getExtension(id: string) {
    return stub.extensions.get(id);
  },
};
