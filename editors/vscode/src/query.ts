// The inline filter syntax of the Semantic Search box: splits what the user
// typed into the free-text query and the request's `filters` / `mode`.
// Pure; does not import `vscode`.
//
//   retry upload lang:python path:"src/my dir/**" ext:ts,tsx mode:lexical
//
// - `lang:` (`language:`), `ext:` (`extension:`), `path:` and `mode:` are
//   filters; keys are case-insensitive. Repeating a filter adds to it (the
//   server takes the union within one kind, the intersection across kinds);
//   for `mode:` the last one wins.
// - `lang:` and `ext:` take comma-separated lists; `path:` takes one glob each.
// - A value may be quoted with "…" or '…' to hold spaces.
// - Anything else, including `foo:bar` with an unknown key, an empty value
//   (`lang:`) or a quoted word ("lang:python"), stays in the query text.

import {
  MAX_QUERY_CHARS,
  SEARCH_MODES,
  type SearchFilters,
  type SearchMode,
  type SemanticSearchParams,
} from "./protocol";

export interface ParsedQuery {
  /** the free text, filter tokens removed, words joined by single spaces */
  text: string;
  mode?: SearchMode;
  /** only the kinds that were given */
  filters: SearchFilters;
  /** human-readable problems (bad mode, query too long); the query still runs */
  problems: string[];
}

type FilterKey = "lang" | "ext" | "path" | "mode";

const KEYS: Record<string, FilterKey> = {
  lang: "lang",
  language: "lang",
  ext: "ext",
  extension: "ext",
  path: "path",
  mode: "mode",
};

interface Token {
  /** the key before ':' when the token looks like `key:value` */
  key?: string;
  /** the value (quotes removed) or the whole word */
  value: string;
  /** true when the text of the token (or its value) was quoted */
  quoted: boolean;
}

function isSpace(ch: string): boolean {
  return /\s/.test(ch);
}

/** Reads a quoted run starting at `i` (at the quote); returns [content, next index]. */
function readQuoted(input: string, i: number): [string, number] {
  const quote = input[i];
  const end = input.indexOf(quote, i + 1);
  if (end === -1) {
    return [input.slice(i + 1), input.length];
  }
  return [input.slice(i + 1, end), end + 1];
}

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    if (isSpace(input[i])) {
      i++;
      continue;
    }
    if (input[i] === '"' || input[i] === "'") {
      const [content, next] = readQuoted(input, i);
      tokens.push({ value: content, quoted: true });
      i = next;
      continue;
    }
    const start = i;
    while (i < input.length && !isSpace(input[i]) && input[i] !== ":") {
      i++;
    }
    if (i < input.length && input[i] === ":" && i > start) {
      const key = input.slice(start, i);
      i++; // ':'
      if (i < input.length && (input[i] === '"' || input[i] === "'")) {
        const [content, next] = readQuoted(input, i);
        tokens.push({ key, value: content, quoted: true });
        i = next;
        continue;
      }
      const valueStart = i;
      while (i < input.length && !isSpace(input[i])) {
        i++;
      }
      tokens.push({ key, value: input.slice(valueStart, i), quoted: false });
      continue;
    }
    while (i < input.length && !isSpace(input[i])) {
      i++;
    }
    tokens.push({ value: input.slice(start, i), quoted: false });
  }
  return tokens;
}

function tokenText(token: Token): string {
  if (token.key === undefined) {
    return token.value;
  }
  return token.quoted ? `${token.key}:"${token.value}"` : `${token.key}:${token.value}`;
}

function splitList(value: string): string[] {
  return value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

function isMode(value: string): value is SearchMode {
  return (SEARCH_MODES as readonly string[]).includes(value);
}

export function parseQuery(input: string): ParsedQuery {
  const words: string[] = [];
  const paths: string[] = [];
  const languages: string[] = [];
  const extensions: string[] = [];
  const problems: string[] = [];
  let mode: SearchMode | undefined;

  for (const token of tokenize(input)) {
    const kind = token.key === undefined ? undefined : KEYS[token.key.toLowerCase()];
    const value = token.value.trim();
    if (kind === undefined || value.length === 0) {
      const text = tokenText(token).trim();
      if (text.length > 0) {
        words.push(text);
      }
      continue;
    }
    switch (kind) {
      case "lang":
        languages.push(...splitList(value));
        break;
      case "ext":
        extensions.push(...splitList(value));
        break;
      case "path":
        paths.push(value);
        break;
      case "mode": {
        const lowered = value.toLowerCase();
        if (isMode(lowered)) {
          mode = lowered;
        } else {
          problems.push(`unknown mode "${value}" (use ${SEARCH_MODES.join(", ")})`);
        }
        break;
      }
    }
  }

  const filters: SearchFilters = {};
  if (paths.length > 0) {
    filters.paths = paths;
  }
  if (languages.length > 0) {
    filters.languages = languages;
  }
  if (extensions.length > 0) {
    filters.extensions = extensions;
  }

  const text = words.join(" ");
  if (text.length > MAX_QUERY_CHARS) {
    problems.push(`query is ${text.length} characters; the server takes at most ${MAX_QUERY_CHARS}`);
  }
  const parsed: ParsedQuery = { text, filters, problems };
  if (mode !== undefined) {
    parsed.mode = mode;
  }
  return parsed;
}

export function hasFilters(parsed: ParsedQuery): boolean {
  return Object.keys(parsed.filters).length > 0;
}

/** The request for a parsed query; `filters` and `mode` only when given. */
export function toSearchParams(parsed: ParsedQuery, limit?: number): SemanticSearchParams {
  const params: SemanticSearchParams = { query: parsed.text };
  if (limit !== undefined) {
    params.limit = limit;
  }
  if (parsed.mode !== undefined) {
    params.mode = parsed.mode;
  }
  if (hasFilters(parsed)) {
    params.filters = parsed.filters;
  }
  return params;
}
