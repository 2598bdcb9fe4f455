// The status-bar item: the latest kenning/indexStatus per workspace folder,
// folded into one short text (see format.ts); clicking it runs Show Index
// Status. Also shows when the server is starting or not running.

import * as vscode from "vscode";

import { statusBarText, withoutPrefix } from "./format";
import type { IndexStatus } from "./protocol";

/** VS Code's own "Workspaces: Manage Workspace Trust". */
export const MANAGE_TRUST_COMMAND = "workbench.trust.manage";

export const UNTRUSTED_REASON =
  "this workspace is in Restricted Mode, so the server does not start and nothing is indexed; it starts when you trust the workspace.";

export function folderName(uri: string): string {
  try {
    const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(uri));
    if (folder !== undefined) {
      return folder.name;
    }
  } catch {
    // not a URI VS Code can parse: fall through to the last path segment
  }
  const trimmed = uri.replace(/\/+$/, "");
  return decodeURIComponent(trimmed.slice(trimmed.lastIndexOf("/") + 1)) || uri;
}

export class IndexStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly statuses = new Map<string, IndexStatus>();

  constructor(private readonly command: string) {
    this.item = vscode.window.createStatusBarItem("kenning.indexStatus", vscode.StatusBarAlignment.Left, 0);
    this.item.name = "kenning";
    this.item.command = command;
    this.starting();
    this.item.show();
  }

  /** The server is (re)starting: forget what the previous process reported. */
  starting(): void {
    this.statuses.clear();
    this.item.command = this.command;
    this.item.text = "$(sync~spin) kenning";
    this.item.tooltip = "kenning: starting the language server…";
    this.item.backgroundColor = undefined;
  }

  /** The server is not running; `reason` goes in the tooltip. */
  stopped(reason: string): void {
    this.statuses.clear();
    this.item.text = "$(error) kenning";
    this.item.tooltip = `kenning: ${withoutPrefix(reason)}`;
    this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
  }

  /** Restricted Mode: the server waits for the user to trust the workspace; a click manages trust. */
  untrusted(): void {
    this.statuses.clear();
    this.item.text = "$(shield) kenning";
    this.item.tooltip = `kenning: ${UNTRUSTED_REASON} Click to manage workspace trust.`;
    this.item.command = MANAGE_TRUST_COMMAND;
    this.item.backgroundColor = undefined;
  }

  /** Not running, and that is fine (e.g. no folder open yet). */
  idle(reason: string): void {
    this.statuses.clear();
    this.item.text = "$(circle-slash) kenning";
    this.item.tooltip = `kenning: ${withoutPrefix(reason)}`;
    this.item.backgroundColor = undefined;
  }

  update(status: IndexStatus): void {
    this.statuses.set(status.folder, status);
    this.render();
  }

  /** Replaces everything known, e.g. with the answer of kenning.status. */
  replaceAll(statuses: IndexStatus[]): void {
    this.statuses.clear();
    for (const status of statuses) {
      this.statuses.set(status.folder, status);
    }
    this.render();
  }

  /** A folder left the workspace. */
  forget(folder: string): void {
    if (this.statuses.delete(folder)) {
      this.render();
    }
  }

  get text(): string {
    return this.item.text;
  }

  private render(): void {
    const statuses = [...this.statuses.values()];
    const { text, tooltip } = statusBarText(statuses, folderName);
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.backgroundColor = statuses.some((s) => s.state === "error")
      ? new vscode.ThemeColor("statusBarItem.errorBackground")
      : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
