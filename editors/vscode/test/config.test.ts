// Settings → initialization options / workspace/configuration (src/config.ts),
// checked against package.json's contributed settings and docs/protocol.md.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

import {
  answerConfiguration,
  EMBEDDING_KEYS,
  OPTION_KEYS,
  RESTART_SETTINGS,
  toInitializationOptions,
} from "../src/config";

const root = join(__dirname, "..", "..");

interface SettingSchema {
  default?: unknown;
  markdownDescription?: string;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
}
const properties = (
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    contributes: { configuration: { properties: Record<string, SettingSchema> } };
  }
).contributes.configuration.properties;

function getterFrom(values: Record<string, unknown>) {
  return (key: string): unknown => values[key];
}

describe("toInitializationOptions", () => {
  it("maps every protocol key from the setting of the same name", () => {
    const options = toInitializationOptions(
      getterFrom({
        storePath: "/idx",
        model: "/models/mini",
        exclude: ["vendor/**"],
        maxFileSize: 4096,
        embedThreads: 2,
        indexOnStartup: false,
        maxResults: 50,
        symbolLimit: 300,
        logLevel: "debug",
        "server.command": ["ignored"],
        "trace.server": "verbose",
      }),
    );
    assert.deepEqual(options, {
      storePath: "/idx",
      model: "/models/mini",
      exclude: ["vendor/**"],
      maxFileSize: 4096,
      embedThreads: 2,
      indexOnStartup: false,
      maxResults: 50,
      symbolLimit: 300,
      logLevel: "debug",
    });
  });

  it("sends null for an empty path setting and leaves unset keys out", () => {
    assert.deepEqual(toInitializationOptions(getterFrom({ storePath: "", model: "  ", maxResults: 20 })), {
      storePath: null,
      model: null,
      maxResults: 20,
    });
  });

  it("gathers kenning.embedding.* into one embedding object, leaving unset ones out", () => {
    const options = toInitializationOptions(
      getterFrom({
        "embedding.url": "http://127.0.0.1:8080/v1",
        "embedding.model": "nomic-embed-text",
        "embedding.keyEnv": "",
        "embedding.batchSize": 64,
        "embedding.dimensions": null,
      }),
    );
    assert.deepEqual(options.embedding, {
      url: "http://127.0.0.1:8080/v1",
      model: "nomic-embed-text",
      batchSize: 64,
    });
    assert.equal(toInitializationOptions(getterFrom({ "embedding.url": "" })).embedding, undefined);
  });

  it("passes wrong types through for the server to report", () => {
    assert.deepEqual(toInitializationOptions(getterFrom({ maxResults: "lots" })), { maxResults: "lots" });
  });

  it("matches the server defaults with package.json's defaults", () => {
    const defaults = toInitializationOptions((key) => properties[`kenning.${key}`]?.default);
    assert.deepEqual(defaults, {
      storePath: null,
      model: null,
      exclude: [],
      maxFileSize: 2097152,
      embedThreads: 0,
      indexOnStartup: true,
      maxResults: 20,
      symbolLimit: 200,
      logLevel: "info",
      sharedCache: true,
      importPack: null,
      sharedCacheMaxSize: null,
    });
  });

  it("declares a setting for every protocol key, with the protocol's bounds", () => {
    for (const key of OPTION_KEYS) {
      if (key === "embedding") {
        for (const sub of EMBEDDING_KEYS) {
          assert.ok(properties[`kenning.embedding.${sub}`], `missing setting kenning.embedding.${sub}`);
        }
        continue;
      }
      assert.ok(properties[`kenning.${key}`], `missing setting kenning.${key}`);
    }
    assert.equal(properties["kenning.maxResults"].minimum, 1);
    assert.equal(properties["kenning.maxResults"].maximum, 200);
    assert.equal(properties["kenning.maxFileSize"].minimum, 1024);
    assert.deepEqual(properties["kenning.logLevel"].enum, ["error", "warning", "info", "debug"]);
    for (const name of RESTART_SETTINGS) {
      assert.ok(properties[name], `restart setting ${name} is not declared`);
    }
    assert.ok(properties["kenning.trace.server"]);
  });
});

describe("answerConfiguration", () => {
  const options = { maxResults: 7, storePath: null };

  it("answers section kenning with the protocol shape and leaves other sections alone", () => {
    const scopes: (string | undefined)[] = [];
    const answer = answerConfiguration(
      [
        { section: "kenning", scopeUri: "file:///ws" },
        { section: "editor" },
        { section: "kenning.maxResults" },
      ],
      [{ server: { command: [] }, maxResults: 99 }, { tabSize: 4 }, 99],
      (scope) => {
        scopes.push(scope);
        return options;
      },
    );
    assert.deepEqual(answer, [options, { tabSize: 4 }, 7]);
    assert.deepEqual(scopes, ["file:///ws", undefined]);
  });

  it("answers null for a missing default and an unknown kenning key", () => {
    assert.deepEqual(
      answerConfiguration([{ section: "kenning.server" }, { section: null }], [], () => options),
      [null, null],
    );
  });
});

describe("docs/protocol.md", { skip: !existsSync(join(root, "..", "..", "docs", "protocol.md")) }, () => {
  it("lists exactly the keys the client sends", () => {
    const doc = readFileSync(join(root, "..", "..", "docs", "protocol.md"), "utf8");
    const section = doc.slice(
      doc.indexOf("## Initialization options"),
      doc.indexOf("## `workspace/semanticSearch`"),
    );
    const keys = [...section.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]);
    assert.deepEqual([...keys].sort(), [...OPTION_KEYS].sort());
  });
});

describe("configurationDefaults", () => {
  it("hides the default store folder from the Explorer and from search", () => {
    const defaults = (
      JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
        contributes: { configurationDefaults?: Record<string, Record<string, boolean>> };
      }
    ).contributes.configurationDefaults;
    // `.kenning` is the store's default name (kenning.storePath's description says so too).
    assert.match(String(properties["kenning.storePath"].markdownDescription), /`<folder>\/\.kenning`/);
    assert.deepEqual(defaults?.["files.exclude"], { "**/.kenning": true });
    assert.deepEqual(defaults?.["search.exclude"], { "**/.kenning": true });
  });
});
