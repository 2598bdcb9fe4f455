// VS Code settings (section `kenning`) → the server's initialization options,
// in the camelCase shape of docs/protocol.md. The same object is sent as
// `initializationOptions`, as the answer to `workspace/configuration` for
// section "kenning", and as `workspace/didChangeConfiguration`'s settings.
// Pure: the caller passes a getter over the settings; does not import `vscode`.

import {
  CONFIGURATION_SECTION,
  type EmbeddingOptions,
  type InitializationOptions,
  type LogLevel,
} from "./protocol";

/** Reads one setting below `kenning.` (e.g. "maxResults"); undefined when absent. */
export type SettingGetter = (key: string) => unknown;

/** Settings whose change needs a new server process, not just didChangeConfiguration. */
export const RESTART_SETTINGS: readonly string[] = [
  "kenning.server.command",
  "kenning.server.pythonPath",
  "kenning.model",
  "kenning.storePath",
];

/**
 * The protocol keys, each read from the setting of the same name. Values are
 * passed through as the user wrote them — the server validates, warns once and
 * falls back to its default — except that an empty string for a path setting
 * means "the default" (null on the wire): paths, and the shared cache's size.
 */
const PATH_KEYS = ["storePath", "model", "importPack", "sharedCacheMaxSize"] as const;
const PASS_THROUGH_KEYS = [
  "exclude",
  "maxFileSize",
  "embedThreads",
  "indexOnStartup",
  "maxResults",
  "symbolLimit",
  "logLevel",
  "sharedCache",
] as const;

export const OPTION_KEYS: readonly (keyof InitializationOptions)[] = [
  ...PATH_KEYS,
  ...PASS_THROUGH_KEYS,
  "embedding",
];

/** The `embedding` object's keys, each read from the setting `kenning.embedding.<key>`. */
export const EMBEDDING_KEYS: readonly (keyof EmbeddingOptions)[] = [
  "url",
  "model",
  "keyEnv",
  "dimensions",
  "queryPrefix",
  "documentPrefix",
  "maxChars",
  "batchSize",
  "inFlight",
  "timeout",
  "queryTimeout",
  "retries",
];

/** The `embedding` object from the settings; undefined when none is set (the built-in model).
 * Unset settings (null or "") are left out, so the server applies its own defaults. */
function embeddingOptions(get: SettingGetter): EmbeddingOptions | undefined {
  const out: Record<string, unknown> = {};
  for (const key of EMBEDDING_KEYS) {
    const value = get(`embedding.${key}`);
    if (value !== undefined && value !== null && value !== "") {
      out[key] = value;
    }
  }
  return Object.keys(out).length > 0 ? (out as EmbeddingOptions) : undefined;
}

export function toInitializationOptions(get: SettingGetter): InitializationOptions {
  const options: Record<string, unknown> = {};
  for (const key of PATH_KEYS) {
    const value = get(key);
    if (value === undefined) {
      continue;
    }
    options[key] = typeof value === "string" && value.trim() === "" ? null : value;
  }
  for (const key of PASS_THROUGH_KEYS) {
    const value = get(key);
    if (value !== undefined) {
      options[key] = value;
    }
  }
  const embedding = embeddingOptions(get);
  if (embedding !== undefined) {
    options.embedding = embedding;
  }
  return options as InitializationOptions;
}

export interface ConfigurationItemLike {
  scopeUri?: string | null;
  section?: string | null;
}

/**
 * The answer to a workspace/configuration request: items for section
 * "kenning" (or "kenning.<key>") get the protocol shape from `optionsFor`;
 * every other item keeps the default answer.
 */
export function answerConfiguration(
  items: readonly ConfigurationItemLike[],
  defaults: readonly unknown[],
  optionsFor: (scopeUri: string | undefined) => InitializationOptions,
): unknown[] {
  return items.map((item, index) => {
    const section = item.section ?? undefined;
    const scope = item.scopeUri ?? undefined;
    if (section === CONFIGURATION_SECTION) {
      return optionsFor(scope);
    }
    if (section !== undefined && section.startsWith(`${CONFIGURATION_SECTION}.`)) {
      const key = section.slice(CONFIGURATION_SECTION.length + 1);
      if ((OPTION_KEYS as readonly string[]).includes(key)) {
        const value = (optionsFor(scope) as Record<string, unknown>)[key];
        return value === undefined ? null : value;
      }
    }
    return index < defaults.length ? defaults[index] : null;
  });
}

export const LOG_LEVELS: readonly LogLevel[] = ["error", "warning", "info", "debug"];
