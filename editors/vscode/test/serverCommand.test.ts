// Server command resolution and PATH lookup (src/serverCommand.ts).

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  describeCommand,
  expandVariables,
  installHintFor,
  isFailure,
  resolveServerCommand,
  which,
  type ServerCommand,
} from "../src/serverCommand";

const nowhere = (): string | undefined => undefined;
const onPath = (name: string): string | undefined => (name === "kenning" ? "/usr/bin/kenning" : undefined);

function resolved(value: ReturnType<typeof resolveServerCommand>): ServerCommand {
  if (isFailure(value)) {
    assert.fail(value.error);
  }
  return value;
}

describe("resolveServerCommand", () => {
  it("uses kenning.server.command as is, over everything else", () => {
    const command = resolved(
      resolveServerCommand({
        command: ["/opt/kenning/bin/kenning", "serve", "--verbose"],
        pythonPath: "/usr/bin/python3",
        interpreter: ["/venv/bin/python"],
        which: onPath,
      }),
    );
    assert.deepEqual(command, {
      command: "/opt/kenning/bin/kenning",
      args: ["serve", "--verbose"],
      source: "setting",
    });
  });

  it("runs `<pythonPath> -m kenning serve` when pythonPath is set", () => {
    const command = resolved(
      resolveServerCommand({
        command: [],
        pythonPath: " /usr/bin/python3 ",
        interpreter: ["/venv/bin/python"],
        which: onPath,
      }),
    );
    assert.deepEqual(command, {
      command: "/usr/bin/python3",
      args: ["-m", "kenning", "serve"],
      source: "pythonPath",
      python: "/usr/bin/python3",
    });
  });

  it("uses the Python extension's interpreter when no setting is given", () => {
    const command = resolved(
      resolveServerCommand({ command: [], pythonPath: "", interpreter: ["/venv/bin/python"], which: onPath }),
    );
    assert.deepEqual(command, {
      command: "/venv/bin/python",
      args: ["-m", "kenning", "serve"],
      source: "pythonExtension",
      python: "/venv/bin/python",
    });
  });

  it("keeps an interpreter's argv prefix", () => {
    const command = resolved(
      resolveServerCommand({ interpreter: ["conda", "run", "-n", "ml", "python"], which: nowhere }),
    );
    assert.equal(command.command, "conda");
    assert.deepEqual(command.args, ["run", "-n", "ml", "python", "-m", "kenning", "serve"]);
  });

  it("falls back to `kenning serve` from PATH", () => {
    const command = resolved(resolveServerCommand({ command: undefined, pythonPath: null, which: onPath }));
    assert.deepEqual(command, { command: "/usr/bin/kenning", args: ["serve"], source: "path" });
  });

  it("fails with the install command when nothing is found", () => {
    const result = resolveServerCommand({ which: nowhere });
    assert.ok(isFailure(result));
    assert.match(result.error, /not on PATH/);
    assert.match(result.installHint, /pip install kenning/);
  });

  it("ignores blank command entries", () => {
    const command = resolved(
      resolveServerCommand({ command: ["", "  "].map((s) => s.trim()), which: onPath }),
    );
    assert.equal(command.source, "path");
  });

  it("expands variables in settings", () => {
    const command = resolved(
      resolveServerCommand({
        command: ["${workspaceFolder}/.venv/bin/kenning", "serve"],
        which: nowhere,
        variables: { workspaceFolder: "/ws" },
      }),
    );
    assert.equal(command.command, "/ws/.venv/bin/kenning");
    const python = resolved(
      resolveServerCommand({
        pythonPath: "~/venv/bin/python",
        which: nowhere,
        variables: { home: "/home/u" },
      }),
    );
    assert.equal(python.command, "/home/u/venv/bin/python");
  });
});

describe("expandVariables", () => {
  it("expands what it knows and leaves the rest", () => {
    const vars = { home: "/h", workspaceFolder: "/ws", env: { VENV: "/v" } };
    assert.equal(
      expandVariables("${userHome}/x ${workspaceFolder} ${env:VENV} ${env:NOPE}", vars),
      "/h/x /ws /v ",
    );
    assert.equal(expandVariables("${workspaceFolder}/x", {}), "${workspaceFolder}/x");
    assert.equal(expandVariables("~", vars), "/h");
    assert.equal(expandVariables("a~b", vars), "a~b");
  });
});

describe("installHintFor", () => {
  it("names the interpreter to install into", () => {
    const hint = installHintFor({
      command: "/my env/python",
      args: ["-m", "kenning", "serve"],
      source: "pythonPath",
      python: "/my env/python",
    });
    assert.equal(hint, 'Install kenning into that environment: `"/my env/python" -m pip install kenning`.');
  });

  it("points at the setting when the interpreter itself is missing", () => {
    const command: ServerCommand = {
      command: "/nope/python",
      args: ["-m", "kenning", "serve"],
      source: "pythonPath",
      python: "/nope/python",
    };
    assert.match(installHintFor(command, true), /Check kenning\.server\.pythonPath/);
    assert.match(installHintFor({ ...command, source: "pythonExtension" }, true), /Select Interpreter/);
  });

  it("points at the setting for a custom command", () => {
    assert.match(
      installHintFor({ command: "/x/kenning", args: ["serve"], source: "setting" }),
      /kenning\.server\.command/,
    );
  });
});

describe("describeCommand", () => {
  it("quotes parts with spaces", () => {
    assert.equal(
      describeCommand({ command: "/a b/py", args: ["-m", "kenning", "serve"], source: "pythonPath" }),
      '"/a b/py" -m kenning serve',
    );
  });
});

describe("which", () => {
  it("finds the first executable on PATH", () => {
    const files = new Set(["/b/kenning", "/c/kenning"]);
    const found = which("kenning", {
      path: "/a::/b/:/c",
      platform: "linux",
      isExecutable: (f) => files.has(f),
    });
    assert.equal(found, "/b/kenning");
  });

  it("tries PATHEXT on Windows", () => {
    const found = which("kenning", {
      path: "C:\\py\\Scripts;C:\\other",
      pathext: ".COM;.EXE",
      platform: "win32",
      isExecutable: (f) => f === "C:\\py\\Scripts\\kenning.EXE",
    });
    assert.equal(found, "C:\\py\\Scripts\\kenning.EXE");
  });

  it("returns undefined without PATH", () => {
    assert.equal(
      which("kenning", { path: undefined, platform: "linux", isExecutable: () => true }),
      undefined,
    );
  });
});
