// Checks, before the language client starts, that the resolved server command
// can run at all: the executable exists, and for `python -m kenning` that the
// interpreter can find the kenning package. One clear message ("install it
// with …") beats the client's generic "couldn't create connection" plus a
// restart loop. Uses node's child_process and fs; does not import `vscode`.

import { execFile } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { isAbsolute } from "node:path";

import type { ServerCommand } from "./serverCommand";

export type PreflightResult =
  | { ok: true }
  | { ok: false; reason: "missing-executable" | "missing-package" | "broken-python"; detail: string };

/** Exit status of the probe when kenning is not importable. */
const NOT_INSTALLED = 3;
const PROBE = `import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("kenning") else ${NOT_INSTALLED})`;

export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) {
      return false;
    }
    accessSync(file, process.platform === "win32" ? constants.F_OK : constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface PreflightOptions {
  /** where the probe runs; never the workspace (python puts cwd on sys.path) */
  cwd?: string;
  timeoutMs?: number;
  which: (name: string) => string | undefined;
}

function hasPathSeparator(command: string): boolean {
  return command.includes("/") || command.includes("\\");
}

export async function preflight(command: ServerCommand, options: PreflightOptions): Promise<PreflightResult> {
  const executable = command.command;
  if (isAbsolute(executable) || hasPathSeparator(executable)) {
    if (!isExecutableFile(executable)) {
      return {
        ok: false,
        reason: "missing-executable",
        detail: `${executable} does not exist or is not executable`,
      };
    }
  } else if (options.which(executable) === undefined) {
    return { ok: false, reason: "missing-executable", detail: `${executable} is not on PATH` };
  }
  if (command.source !== "pythonPath" && command.source !== "pythonExtension") {
    return { ok: true };
  }
  // argv prefix before "-m kenning serve", e.g. ["conda", "run", "-n", "x", "python"]
  const prefix = command.args.slice(0, Math.max(0, command.args.length - 3));
  return new Promise((resolve) => {
    execFile(
      executable,
      [...prefix, "-c", PROBE],
      { cwd: options.cwd, timeout: options.timeoutMs ?? 20_000, windowsHide: true },
      (error, _stdout, stderr) => {
        if (error === null) {
          resolve({ ok: true });
          return;
        }
        // a number (exit status) or a string (spawn error such as ENOENT)
        const code: unknown = (error as { code?: unknown }).code;
        if (code === NOT_INSTALLED) {
          resolve({
            ok: false,
            reason: "missing-package",
            detail: `kenning is not installed for ${command.python ?? executable}`,
          });
        } else if (code === "ENOENT") {
          resolve({ ok: false, reason: "missing-executable", detail: `${executable} was not found` });
        } else {
          const message = String(stderr).trim() || error.message;
          resolve({ ok: false, reason: "broken-python", detail: `${executable} failed: ${message}` });
        }
      },
    );
  });
}
