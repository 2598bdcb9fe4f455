// The kenning wire contract, mirrored from docs/protocol.md (server side:
// server/kenning/lsp/protocol.py). Method names, params and results only; no
// behaviour. Keep this file in step with the server's protocol module, the way
// rust-analyzer's lsp_ext.ts mirrors its server. Does not import `vscode`.

import {
  ExecuteCommandRequest,
  NotificationType,
  RequestType,
  type ExecuteCommandParams,
  type Range,
} from "vscode-languageserver-protocol";

export type { Position, Range } from "vscode-languageserver-protocol";

// ---------------------------------------------------------------------------
// Initialization options (also the answer for configuration section "kenning")

export type LogLevel = "error" | "warning" | "info" | "debug";

/** Every key is optional on the wire; unknown keys are ignored by the server. */
export interface InitializationOptions {
  storePath?: string | null;
  model?: string | null;
  exclude?: string[];
  maxFileSize?: number;
  embedThreads?: number;
  indexOnStartup?: boolean;
  maxResults?: number;
  symbolLimit?: number;
  logLevel?: LogLevel;
  embedding?: EmbeddingOptions;
  /** the user-level embedding cache (docs/sharing.md) */
  sharedCache?: boolean;
  /** its cap: bytes, or a size such as "2G"; null: $KENNING_CACHE_MAX or 2G */
  sharedCacheMaxSize?: string | number | null;
  /** an index pack imported into the shared cache before embedding */
  importPack?: string | null;
}

/** An OpenAI-compatible embedding server (docs/embedding-servers.md); absent: the built-in model. */
export interface EmbeddingOptions {
  url?: string;
  model?: string;
  keyEnv?: string; // the NAME of the environment variable holding the API key
  dimensions?: number;
  queryPrefix?: string;
  documentPrefix?: string;
  maxChars?: number;
  batchSize?: number;
  inFlight?: number;
  timeout?: number;
  queryTimeout?: number;
  retries?: number;
}

/** The configuration section the server asks for with workspace/configuration. */
export const CONFIGURATION_SECTION = "kenning";

// ---------------------------------------------------------------------------
// workspace/semanticSearch

export type SearchMode = "hybrid" | "semantic" | "lexical";
export const SEARCH_MODES: readonly SearchMode[] = ["hybrid", "semantic", "lexical"];

export interface SearchFilters {
  /** gitignore-style globs relative to the folder root, e.g. "src/**"; union */
  paths?: string[];
  /** language names as listed by `kenning languages`, e.g. "python" */
  languages?: string[];
  /** "ts" or ".ts" */
  extensions?: string[];
}

export interface SemanticSearchParams {
  /** plain words or identifiers; at most MAX_QUERY_CHARS characters */
  query: string;
  /** integer 1–200, default maxResults */
  limit?: number;
  mode?: SearchMode;
  filters?: SearchFilters;
  workDoneToken?: string | number;
}

export const MAX_QUERY_CHARS = 1000;
export const MAX_LIMIT = 200;

export type IndexState = "scanning" | "embedding" | "ready" | "error";

export interface SearchSymbol {
  name: string;
  /** like "function", "method", "class" */
  kind: string;
  containerName?: string;
}

export interface SearchHit {
  /** file: URI of the file */
  uri: string;
  /** the chunk's lines */
  range: Range;
  /** fused score, higher is better, comparable only within one response */
  score: number;
  /** a few lines of the chunk (≤ 300 characters), the best-matching line first */
  preview: string;
  symbol?: SearchSymbol;
  language: string;
  /** 1-based rank in each half, null when absent */
  match: { denseRank: number | null; lexicalRank: number | null };
}

export interface IndexSummary {
  /** the least ready state across folders */
  state: IndexState;
  files: number;
  chunks: number;
  embedded: number;
  pending: number;
  /** true when the dense half could not be used */
  lexicalOnly?: boolean;
}

export interface SemanticSearchResult {
  /** best first */
  results: SearchHit[];
  index: IndexSummary;
}

export const semanticSearch = new RequestType<SemanticSearchParams, SemanticSearchResult, void>(
  "workspace/semanticSearch",
);

// ---------------------------------------------------------------------------
// kenning/similar

export interface SimilarParams {
  textDocument: { uri: string };
  /** the selection; an empty range means the chunk around range.start */
  range: Range;
  /** 1–200, default maxResults */
  limit?: number;
}

export const similar = new RequestType<SimilarParams, SemanticSearchResult, void>("kenning/similar");

// ---------------------------------------------------------------------------
// kenning/indexStatus (server → client)

export interface IndexStatus {
  /** the workspace folder's URI */
  folder: string;
  state: IndexState;
  files: number;
  chunks: number;
  embedded: number;
  pending: number;
  skipped: number;
  /** for "error": what went wrong */
  message?: string;
  /** "scheme://host:port" of the embedding server that receives the folder's code, if not local */
  embeddingEndpoint?: string;
  /** where the folder's vectors came from since its model was set (once its index is open) */
  origin?: VectorOrigin;
  /** the user-level embedding cache shared by every index on the machine (once open) */
  sharedCache?: SharedCacheInfo;
}

export interface VectorOrigin {
  /** computed by the model */
  computed: number;
  /** reused from this index's own vectors */
  store: number;
  /** taken from the shared cache */
  sharedCache: number;
  /** taken from the shared cache, brought there by an index pack */
  pack: number;
}

export interface SharedCacheInfo {
  enabled: boolean;
  bytes: number;
  maxBytes: number;
}

export const indexStatus = new NotificationType<IndexStatus>("kenning/indexStatus");

/** One folder in the answer of the kenning.status command. */
export interface IndexStatusReport extends IndexStatus {
  /** how many indexing jobs the folder has run (a burst of saves is one job) */
  reindexJobs: number;
}

/** A JSON-RPC error response's `error`, e.g. -32602 for a bad parameter. */
export interface ResponseErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

// ---------------------------------------------------------------------------
// workspace/executeCommand commands. These are *server* command ids: the
// extension's own VS Code commands must use other ids, because
// vscode-languageclient registers the server's advertised commands itself.

export const ServerCommands = {
  /** args: none, or [folderUri]; result: null (a full rescan starts in the background) */
  reindex: "kenning.reindex",
  /** args: none; result: IndexStatusReport[], one per folder */
  status: "kenning.status",
} as const;

// "No arguments" is sent as no `arguments` field rather than `[]`: both are
// valid LSP, and pygls 2 matches an `arguments` array to the handler's
// positional parameters, so `[]` can be refused with -32602.

export function reindexParams(folderUri?: string): ExecuteCommandParams {
  return folderUri === undefined
    ? { command: ServerCommands.reindex }
    : { command: ServerCommands.reindex, arguments: [folderUri] };
}

export function statusParams(): ExecuteCommandParams {
  return { command: ServerCommands.status };
}

/** workspace/executeCommand typed for kenning.reindex. */
export const reindex = new RequestType<ExecuteCommandParams, null, void>(ExecuteCommandRequest.method);
/** workspace/executeCommand typed for kenning.status. */
export const status = new RequestType<ExecuteCommandParams, IndexStatusReport[], void>(
  ExecuteCommandRequest.method,
);

// ---------------------------------------------------------------------------
// JSON-RPC error codes the client treats specially.

export const ErrorCodes = {
  InvalidParams: -32602,
  RequestCancelled: -32800,
  ServerCancelled: -32802,
  ContentModified: -32801,
} as const;
