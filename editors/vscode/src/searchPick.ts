// The results QuickPick behind Semantic Search and Find Similar Code:
// search-as-you-type (debounced, previous request cancelled, busy while
// waiting), one item per hit, a preview of the highlighted hit, Enter to open
// it with the range selected, Escape to go back to the editor you came from.
// Errors and index notices show inside the picker, never as a crash.

import * as vscode from "vscode";

import { LatestRequest } from "./debounce";
import { describeError, formatHit, indexNotice, isCancellation } from "./format";
import {
  MAX_QUERY_CHARS,
  type Range as WireRange,
  type SearchHit,
  type SemanticSearchParams,
  type SemanticSearchResult,
  type SimilarParams,
} from "./protocol";
import { parseQuery, toSearchParams, type ParsedQuery } from "./query";

export const SEARCH_DEBOUNCE_MS = 200;

const SEARCH_TITLE = "kenning: semantic search";
const SEARCH_PLACEHOLDER =
  "Describe the code — filters: lang:python path:src/** ext:ts mode:lexical|semantic|hybrid";

/** What the picker needs from the language client. */
export interface SearchBackend {
  search(params: SemanticSearchParams, token: vscode.CancellationToken): Promise<SemanticSearchResult>;
  similar(params: SimilarParams, token: vscode.CancellationToken): Promise<SemanticSearchResult>;
}

export interface ResultItem extends vscode.QuickPickItem {
  /** undefined for message rows (errors, "no results"): not openable */
  hit?: SearchHit;
}

function toRange(range: WireRange): vscode.Range {
  return new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
}

function toWireRange(range: vscode.Range): WireRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

function relativePath(uri: string): string {
  return vscode.workspace.asRelativePath(vscode.Uri.parse(uri), true);
}

export function messageItem(label: string, detail?: string): ResultItem {
  return { label, detail, alwaysShow: true };
}

/**
 * Shows locations as they are highlighted and puts the user back where they
 * were on Escape. Editor operations run one after another so a slow preview
 * can never land after the final open/restore.
 */
class LocationPreview {
  private readonly previous: vscode.TextEditor | undefined;
  private readonly previousSelection: vscode.Selection | undefined;
  private readonly previousVisible: vscode.Range | undefined;
  private readonly highlight: vscode.TextEditorDecorationType;
  private queue: Promise<void> = Promise.resolve();
  private highlighted: vscode.TextEditor | undefined;
  private moved = false;

  constructor() {
    this.previous = vscode.window.activeTextEditor;
    this.previousSelection = this.previous?.selection;
    this.previousVisible = this.previous?.visibleRanges[0];
    this.highlight = vscode.window.createTextEditorDecorationType({
      backgroundColor: new vscode.ThemeColor("editor.rangeHighlightBackground"),
      isWholeLine: true,
    });
  }

  private enqueue(operation: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(operation).catch(() => undefined);
    return this.queue;
  }

  private clearHighlight(): void {
    this.highlighted?.setDecorations(this.highlight, []);
    this.highlighted = undefined;
  }

  preview(hit: SearchHit): Promise<void> {
    return this.enqueue(async () => {
      const range = toRange(hit.range);
      const editor = await vscode.window.showTextDocument(vscode.Uri.parse(hit.uri), {
        preview: true,
        preserveFocus: true,
        viewColumn: this.previous?.viewColumn,
      });
      this.moved = true;
      this.clearHighlight();
      editor.setDecorations(this.highlight, [range]);
      this.highlighted = editor;
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    });
  }

  open(hit: SearchHit): Promise<void> {
    return this.enqueue(async () => {
      this.clearHighlight();
      const range = toRange(hit.range);
      const editor = await vscode.window.showTextDocument(vscode.Uri.parse(hit.uri), {
        preview: false,
        preserveFocus: false,
        selection: range,
        viewColumn: this.previous?.viewColumn,
      });
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    });
  }

  restore(): Promise<void> {
    return this.enqueue(async () => {
      this.clearHighlight();
      if (!this.moved || this.previous === undefined) {
        return;
      }
      const editor = await vscode.window.showTextDocument(this.previous.document, {
        viewColumn: this.previous.viewColumn,
        selection: this.previousSelection,
        preserveFocus: false,
      });
      if (this.previousVisible !== undefined) {
        editor.revealRange(this.previousVisible, vscode.TextEditorRevealType.AtTop);
      }
    });
  }

  dispose(): void {
    void this.enqueue(async () => {
      this.clearHighlight();
      this.highlight.dispose();
    });
  }
}

interface PickSetup {
  title: string;
  placeholder: string;
  /** true: the server filters (search as you type); false: VS Code filters the list */
  serverFiltered: boolean;
}

/** A QuickPick of search hits with preview / open / restore wired up. */
class ResultsPick {
  readonly pick: vscode.QuickPick<ResultItem>;
  private readonly preview = new LocationPreview();
  private accepted = false;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly onHideCallbacks: (() => void)[] = [];

  constructor(private readonly setup: PickSetup) {
    const pick = vscode.window.createQuickPick<ResultItem>();
    this.pick = pick;
    pick.title = setup.title;
    pick.placeholder = setup.placeholder;
    pick.matchOnDescription = !setup.serverFiltered;
    pick.matchOnDetail = !setup.serverFiltered;
    this.disposables.push(
      pick.onDidChangeActive((items) => {
        const hit = items[0]?.hit;
        if (hit !== undefined) {
          void this.preview.preview(hit);
        }
      }),
      pick.onDidAccept(() => {
        const hit = (pick.selectedItems[0] ?? pick.activeItems[0])?.hit;
        if (hit === undefined) {
          return; // a message row: nothing to open, keep the picker
        }
        this.accepted = true;
        void this.preview.open(hit);
        pick.hide();
      }),
      pick.onDidHide(() => {
        if (!this.accepted) {
          void this.preview.restore();
        }
        for (const callback of this.onHideCallbacks) {
          callback();
        }
        this.preview.dispose();
        for (const disposable of this.disposables) {
          disposable.dispose();
        }
        pick.dispose();
      }),
    );
  }

  onHide(callback: () => void): void {
    this.onHideCallbacks.push(callback);
  }

  show(): void {
    this.pick.show();
  }

  showResults(result: SemanticSearchResult, header: ResultItem[], emptyMessage: string | undefined): void {
    const notice = indexNotice(result.index);
    this.pick.title = notice ?? this.setup.title;
    const items: ResultItem[] = [...header];
    for (const hit of result.results) {
      items.push({ ...formatHit(hit, relativePath), hit, alwaysShow: this.setup.serverFiltered });
    }
    if (result.results.length === 0 && emptyMessage !== undefined) {
      items.push(messageItem(emptyMessage));
    }
    this.pick.items = items;
  }

  showMessages(items: ResultItem[]): void {
    this.pick.items = items;
  }
}

function filterSummary(parsed: ParsedQuery): string {
  const parts: string[] = [];
  if (parsed.filters.languages) parts.push(`lang ${parsed.filters.languages.join(",")}`);
  if (parsed.filters.extensions) parts.push(`ext ${parsed.filters.extensions.join(",")}`);
  if (parsed.filters.paths) parts.push(`path ${parsed.filters.paths.join(", ")}`);
  if (parsed.mode) parts.push(`mode ${parsed.mode}`);
  return parts.join(" · ");
}

function problemItems(parsed: ParsedQuery): ResultItem[] {
  return parsed.problems.map((problem) => messageItem(`$(warning) ${problem}`));
}

/** Kenning: Semantic Search. Resolves once the picker is shown. */
export function showSemanticSearch(backend: SearchBackend, initialValue = ""): vscode.QuickPick<ResultItem> {
  const results = new ResultsPick({
    title: SEARCH_TITLE,
    placeholder: SEARCH_PLACEHOLDER,
    serverFiltered: true,
  });
  const { pick } = results;

  const requests = new LatestRequest<ParsedQuery, SemanticSearchResult, vscode.CancellationToken>({
    delayMs: SEARCH_DEBOUNCE_MS,
    newTokenSource: () => new vscode.CancellationTokenSource(),
    run: (parsed, token) => backend.search(toSearchParams(parsed), token),
    onResult: (result, parsed) => {
      const summary = filterSummary(parsed);
      results.showResults(
        result,
        problemItems(parsed),
        parsed.text === "" ? undefined : `$(info) no results${summary ? ` with ${summary}` : ""}`,
      );
      if (indexNotice(result.index) === undefined && summary) {
        pick.title = `${SEARCH_TITLE} — ${summary}`;
      }
    },
    onError: (error, parsed) => {
      if (isCancellation(error)) {
        return;
      }
      results.showMessages([
        ...problemItems(parsed),
        messageItem(
          `$(error) ${describeError(error)}`,
          "the request failed; see Output → kenning for details",
        ),
      ]);
    },
    onBusy: (busy) => {
      pick.busy = busy;
    },
  });

  const onValue = (value: string, immediately: boolean): void => {
    const parsed = parseQuery(value);
    if (parsed.text.length > MAX_QUERY_CHARS) {
      requests.cancel();
      results.showMessages(problemItems(parsed));
      return;
    }
    if (immediately) {
      requests.runNow(parsed);
    } else {
      requests.schedule(parsed);
    }
  };

  const valueListener = pick.onDidChangeValue((value) => onValue(value, false));
  results.onHide(() => {
    valueListener.dispose();
    requests.dispose();
  });

  pick.value = initialValue;
  results.show();
  // An empty query answers at once with the index summary: fills the title.
  onValue(initialValue, true);
  return pick;
}

/** Kenning: Find Similar Code, for the selection of `editor`. */
export function showSimilar(backend: SearchBackend, editor: vscode.TextEditor): vscode.QuickPick<ResultItem> {
  const selection = editor.selection;
  const where = `${vscode.workspace.asRelativePath(editor.document.uri, true)}:${selection.start.line + 1}${
    selection.end.line > selection.start.line ? `–${selection.end.line + 1}` : ""
  }`;
  const title = `kenning: code similar to ${where}`;
  const results = new ResultsPick({
    title,
    placeholder: "Type to filter the results",
    serverFiltered: false,
  });
  const { pick } = results;
  const source = new vscode.CancellationTokenSource();
  results.onHide(() => {
    source.cancel();
    source.dispose();
  });
  pick.busy = true;
  results.show();

  const params: SimilarParams = {
    textDocument: { uri: editor.document.uri.toString() },
    range: toWireRange(selection),
  };
  backend.similar(params, source.token).then(
    (result) => {
      if (source.token.isCancellationRequested) {
        return;
      }
      pick.busy = false;
      results.showResults(result, [], "$(info) no similar code found");
      if (indexNotice(result.index) === undefined) {
        pick.title = title;
      }
    },
    (error: unknown) => {
      if (source.token.isCancellationRequested || isCancellation(error)) {
        return;
      }
      pick.busy = false;
      results.showMessages([messageItem(`$(error) ${describeError(error)}`)]);
    },
  );
  return pick;
}
