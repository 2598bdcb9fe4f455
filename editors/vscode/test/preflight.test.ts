// The pre-start check of the server command (src/preflight.ts), with small
// shell scripts standing in for Python.

import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { preflight } from "../src/preflight";
import type { ServerCommand } from "../src/serverCommand";

const posix = process.platform !== "win32";
let dir = "";

function script(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

function python(executable: string): ServerCommand {
  return { command: executable, args: ["-m", "kenning", "serve"], source: "pythonPath", python: executable };
}

const which = (): string | undefined => undefined;

describe("preflight", { skip: !posix }, () => {
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "kenning-preflight-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("passes an interpreter that finds kenning", async () => {
    const ok = script("ok-python", 'case "$2" in *find_spec*) exit 0;; esac; exit 9');
    assert.deepEqual(await preflight(python(ok), { which, cwd: dir }), { ok: true });
  });

  it("says kenning is missing when the probe exits 3", async () => {
    const missing = script("bare-python", "exit 3");
    const result = await preflight(python(missing), { which, cwd: dir });
    assert.deepEqual(result, {
      ok: false,
      reason: "missing-package",
      detail: `kenning is not installed for ${missing}`,
    });
  });

  it("reports a broken interpreter with its stderr", async () => {
    const broken = script("broken-python", "echo 'bad magic number' >&2; exit 1");
    const result = await preflight(python(broken), { which, cwd: dir });
    assert.equal(result.ok, false);
    assert.ok(!result.ok && result.reason === "broken-python" && result.detail.includes("bad magic number"));
  });

  it("reports a missing executable without running anything", async () => {
    const result = await preflight(python(join(dir, "nope")), { which, cwd: dir });
    assert.ok(!result.ok && result.reason === "missing-executable");
  });

  it("checks a bare command name on PATH", async () => {
    const command: ServerCommand = { command: "kenning", args: ["serve"], source: "setting" };
    const missing = await preflight(command, { which });
    assert.ok(!missing.ok && /not on PATH/.test(missing.detail));
    assert.deepEqual(await preflight(command, { which: () => "/usr/bin/kenning" }), { ok: true });
  });

  it("does not probe a non-Python command", async () => {
    const server = script("kenning", "exit 1");
    assert.deepEqual(await preflight({ command: server, args: ["serve"], source: "setting" }, { which }), {
      ok: true,
    });
  });
});
