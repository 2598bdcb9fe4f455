// Text the user sees: search hits as QuickPick item text, index state as the
// status-bar text, the QuickPick title and the Show Index Status lines, and
// JSON-RPC errors as one line. Pure; does not import `vscode`.

import { ErrorCodes, type IndexState, type IndexStatus, type IndexSummary, type SearchHit } from "./protocol";

/** 9876 → "9,876", independent of the host locale. */
export function formatCount(n: number): string {
  const sign = n < 0 ? "-" : "";
  const digits = Math.trunc(Math.abs(n)).toString();
  return sign + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function plural(n: number, one: string, many: string): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

// ---------------------------------------------------------------------------
// Search hits

export interface HitText {
  label: string;
  description: string;
  detail: string;
}

/** "Container.name" when the server names a container, else "name". */
export function symbolName(hit: SearchHit): string | undefined {
  if (hit.symbol === undefined || hit.symbol.name.length === 0) {
    return undefined;
  }
  const container = hit.symbol.containerName;
  return container ? `${container}.${hit.symbol.name}` : hit.symbol.name;
}

/** "dense #1 · lexical #3"; only the halves that ranked the hit. */
export function matchInfo(hit: SearchHit): string {
  const parts: string[] = [];
  if (hit.match.denseRank !== null && hit.match.denseRank !== undefined) {
    parts.push(`dense #${hit.match.denseRank}`);
  }
  if (hit.match.lexicalRank !== null && hit.match.lexicalRank !== undefined) {
    parts.push(`lexical #${hit.match.lexicalRank}`);
  }
  return parts.join(" · ");
}

const MAX_DETAIL = 300;

/** The preview on one line: lines trimmed, blank ones dropped, joined by " ⏎ ". */
export function previewLine(preview: string): string {
  const line = preview
    .split(/\r?\n/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .join(" ⏎ ");
  return line.length > MAX_DETAIL ? `${line.slice(0, MAX_DETAIL - 1)}…` : line;
}

/**
 * QuickPick text for one hit: label `symbol — path:line` (or `path:line`),
 * description = match info, detail = preview. `relativePath` turns the hit's
 * URI into what the user should read (VS Code's workspace-relative path);
 * lines are shown 1-based.
 */
export function formatHit(hit: SearchHit, relativePath: (uri: string) => string): HitText {
  const location = `${relativePath(hit.uri)}:${hit.range.start.line + 1}`;
  const name = symbolName(hit);
  return {
    label: name === undefined ? location : `${name} — ${location}`,
    description: matchInfo(hit),
    detail: previewLine(hit.preview),
  };
}

// ---------------------------------------------------------------------------
// Index state

const STATE_ORDER: Record<IndexState, number> = { error: 0, scanning: 1, embedding: 2, ready: 3 };

/** The least ready of several states (error < scanning < embedding < ready). */
export function leastReady(states: IndexState[]): IndexState | undefined {
  let worst: IndexState | undefined;
  for (const state of states) {
    if (worst === undefined || STATE_ORDER[state] < STATE_ORDER[worst]) {
      worst = state;
    }
  }
  return worst;
}

/** Per-folder statuses folded into one summary, like the server's IndexSummary. */
export function summarize(statuses: IndexStatus[]): (IndexSummary & { skipped: number }) | undefined {
  const state = leastReady(statuses.map((s) => s.state));
  if (state === undefined) {
    return undefined;
  }
  const sum = (pick: (s: IndexStatus) => number): number => statuses.reduce((total, s) => total + pick(s), 0);
  return {
    state,
    files: sum((s) => s.files),
    chunks: sum((s) => s.chunks),
    embedded: sum((s) => s.embedded),
    pending: sum((s) => s.pending),
    skipped: sum((s) => s.skipped),
  };
}

/** Share of chunks with a vector, 0–100, rounded down (100 only when done). */
export function embeddedPercent(embedded: number, pending: number): number {
  const total = embedded + pending;
  if (total <= 0) {
    return 0;
  }
  return Math.floor((embedded / total) * 100);
}

export interface StatusBarText {
  text: string;
  tooltip: string;
}

/** The status-bar item for the folders' latest kenning/indexStatus notifications. */
export function statusBarText(statuses: IndexStatus[], folderName: (uri: string) => string): StatusBarText {
  const summary = summarize(statuses);
  if (summary === undefined) {
    return { text: "$(sync~spin) kenning", tooltip: "kenning: starting…" };
  }
  const tooltip = [
    "kenning — click for index status",
    ...statuses.map((s) => statusLine(s, folderName)),
  ].join("\n");
  switch (summary.state) {
    case "scanning":
      return { text: `$(sync~spin) kenning ${plural(summary.files, "file", "files")}…`, tooltip };
    case "embedding":
      return {
        text: `$(sync~spin) kenning embedding ${embeddedPercent(summary.embedded, summary.pending)}%`,
        tooltip,
      };
    case "ready":
      return { text: `kenning $(check) ${plural(summary.chunks, "chunk", "chunks")}`, tooltip };
    case "error":
      return { text: "$(error) kenning", tooltip };
  }
}

/** One folder on one line: "app: ready — 9,876 chunks in 1,234 files, 3 skipped". */
export function statusLine(status: IndexStatus, folderName: (uri: string) => string): string {
  const name = folderName(status.folder);
  const counts = `${plural(status.chunks, "chunk", "chunks")} in ${plural(status.files, "file", "files")}`;
  const skipped = status.skipped > 0 ? `, ${formatCount(status.skipped)} skipped` : "";
  switch (status.state) {
    case "scanning":
      return `${name}: scanning — ${plural(status.files, "file", "files")} so far${skipped}`;
    case "embedding":
      return `${name}: embedding ${formatCount(status.embedded)}/${formatCount(status.embedded + status.pending)} chunks (${embeddedPercent(status.embedded, status.pending)}%) — ${counts}${skipped}`;
    case "ready":
      return `${name}: ready — ${counts}${skipped}`;
    case "error":
      return `${name}: error — ${status.message ?? "unknown error"}`;
  }
}

/**
 * The QuickPick title for a search answer's index summary: undefined when the
 * index is ready and dense search works, otherwise what the results lack.
 */
export function indexNotice(index: IndexSummary): string | undefined {
  const lexical = index.lexicalOnly === true;
  switch (index.state) {
    case "ready":
      return lexical ? "kenning: lexical results only (the embedding model is unavailable)" : undefined;
    case "scanning":
      return `kenning: still scanning (${plural(index.files, "file", "files")} so far) — results may be incomplete`;
    case "embedding":
      return `kenning: still embedding ${formatCount(index.embedded)}/${formatCount(index.chunks)} — ${
        lexical ? "lexical results until ready" : "results improve when ready"
      }`;
    case "error":
      return `kenning: indexing failed${lexical ? " — lexical results only" : ""}; see Output → kenning`;
  }
}

// ---------------------------------------------------------------------------
// Errors

interface ErrorLike {
  code?: unknown;
  message?: unknown;
}

/** JSON-RPC code of an error (vscode-languageclient's ResponseError), if any. */
export function errorCode(error: unknown): number | undefined {
  if (typeof error === "object" && error !== null) {
    const code = (error as ErrorLike).code;
    if (typeof code === "number") {
      return code;
    }
  }
  return undefined;
}

/** True for errors that only mean "this request was cancelled". */
export function isCancellation(error: unknown): boolean {
  const code = errorCode(error);
  if (code === ErrorCodes.RequestCancelled || code === ErrorCodes.ServerCancelled) {
    return true;
  }
  return error instanceof Error && error.name === "Canceled";
}

/** One line for the user: "invalid request: unknown language 'klingon'". */
export function describeError(error: unknown): string {
  const code = errorCode(error);
  let message: string;
  if (error instanceof Error) {
    message = error.message;
  } else if (
    typeof error === "object" &&
    error !== null &&
    typeof (error as ErrorLike).message === "string"
  ) {
    message = (error as ErrorLike).message as string;
  } else {
    message = String(error);
  }
  if (code === ErrorCodes.InvalidParams) {
    return `invalid request: ${message}`;
  }
  return code === undefined ? message : `${message} (${code})`;
}

/** `text` without a leading "kenning: ", so that adding the prefix never doubles it. */
export function withoutPrefix(text: string): string {
  return text.replace(/^(kenning:\s*)+/i, "");
}
