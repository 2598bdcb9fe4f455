// src/serverProcess.ts with real child processes: the exact command line, the
// exit code and the last stderr line of a server that dies, a spawn error.

import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { describe, it } from "node:test";

import { describeExit, LineTail, ServerProcesses } from "../src/serverProcess";

describe("LineTail", () => {
  it("keeps the last non-empty lines across chunk boundaries", () => {
    const tail = new LineTail(2);
    tail.push("one\ntw");
    tail.push("o\r\n\nthree\nfour");
    assert.deepEqual(tail.all, ["two", "three", "four"]);
  });
});

describe("describeExit", () => {
  it("names the code, the signal or the spawn error, and the last line", () => {
    assert.equal(
      describeExit({ code: 2, signal: null, stderr: ["usage: kenning", "kenning: error: bad"] }),
      "the server exited with code 2: kenning: error: bad",
    );
    assert.equal(
      describeExit({ code: null, signal: "SIGKILL", stderr: [] }),
      "the server was killed by SIGKILL",
    );
    assert.equal(
      describeExit({ code: null, signal: null, stderr: [], error: "spawn x ENOENT" }),
      "the server could not be started: spawn x ENOENT",
    );
  });
});

describe("ServerProcesses", () => {
  it("spawns exactly the configured arguments and reports how the process ended", async () => {
    const script =
      "console.error('starting'); console.error(JSON.stringify(process.argv.slice(1))); process.exit(3)";
    const processes = new ServerProcesses({
      command: process.execPath,
      args: ["-e", script, "serve"],
      cwd: tmpdir(),
    });
    const child = await processes.spawn();
    assert.deepEqual(child.spawnargs, [process.execPath, "-e", script, "serve"]);
    const exit = await processes.waitForExit(10_000);
    assert.ok(exit !== undefined);
    assert.equal(exit.code, 3);
    assert.deepEqual(exit.stderr, ["starting", '["serve"]']);
    assert.equal(describeExit(exit), 'the server exited with code 3: ["serve"]');
  });

  it("reports a command that cannot be spawned", async () => {
    const processes = new ServerProcesses({
      command: "/nonexistent/kenning",
      args: ["serve"],
      cwd: tmpdir(),
    });
    await processes.spawn();
    const exit = await processes.waitForExit(10_000);
    assert.match(String(exit?.error), /ENOENT/);
  });

  it("kill() ends a running process; waitForExit gives up on one that keeps running", async () => {
    const processes = new ServerProcesses({
      command: process.execPath,
      args: ["-e", "setTimeout(() => {}, 60000)"],
      cwd: tmpdir(),
    });
    await processes.spawn();
    assert.equal(await processes.waitForExit(50), undefined);
    processes.kill();
    const exit = await processes.waitForExit(10_000);
    assert.equal(exit?.signal, "SIGTERM");
  });
});
