// Which process to start as the kenning language server, and what to tell the
// user when there is none. Pure: the caller injects the settings, the Python
// extension's interpreter, a PATH lookup and the environment; nothing here
// touches `vscode`, the file system or child processes.
//
// Order (first that applies wins):
//   1. `kenning.server.command`   — used as is, e.g. ["/path/kenning", "serve"]
//   2. `kenning.server.pythonPath` — `<python> -m kenning serve`
//   3. the interpreter selected in the Python extension — `<python> -m kenning serve`
//   4. `kenning` on PATH          — `kenning serve`
// The explicit setting (2) outranks the Python extension (3): otherwise the
// setting could never take effect in a workspace where ms-python is installed.

export type CommandSource = "setting" | "pythonPath" | "pythonExtension" | "path";

export interface ServerCommand {
  command: string;
  args: string[];
  source: CommandSource;
  /** the Python interpreter, when the server runs as `python -m kenning` */
  python?: string;
}

export interface ServerCommandFailure {
  error: string;
  installHint: string;
}

export interface ResolveInput {
  /** `kenning.server.command`; empty or undefined when unset */
  command?: readonly string[] | null;
  /** `kenning.server.pythonPath`; empty or undefined when unset */
  pythonPath?: string | null;
  /** the Python extension's interpreter (argv prefix, e.g. ["/venv/bin/python"]) */
  interpreter?: readonly string[];
  /** PATH lookup: the full path of an executable, or undefined */
  which: (name: string) => string | undefined;
  /** for `~` and `${workspaceFolder}`/`${userHome}`/`${env:NAME}` in settings */
  variables?: Variables;
}

export interface Variables {
  home?: string;
  workspaceFolder?: string;
  env?: Readonly<Record<string, string | undefined>>;
}

export const INSTALL_COMMAND = "pip install kenning";

/** Expands `~`, `${userHome}`, `${workspaceFolder}` and `${env:NAME}` in a setting value. */
export function expandVariables(value: string, variables: Variables = {}): string {
  let result = value.replace(
    /\$\{(userHome|workspaceFolder|env:([^}]+))\}/g,
    (whole, name: string, envName?: string) => {
      if (name === "userHome") {
        return variables.home ?? whole;
      }
      if (name === "workspaceFolder") {
        return variables.workspaceFolder ?? whole;
      }
      return variables.env?.[envName ?? ""] ?? "";
    },
  );
  if (
    variables.home !== undefined &&
    (result === "~" || result.startsWith("~/") || result.startsWith("~\\"))
  ) {
    result = variables.home + result.slice(1);
  }
  return result;
}

function nonEmpty(value: string | null | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

export function pythonInstallHint(python: string): string {
  const quoted = /\s/.test(python) ? `"${python}"` : python;
  return `${quoted} -m ${INSTALL_COMMAND}`;
}

export function resolveServerCommand(input: ResolveInput): ServerCommand | ServerCommandFailure {
  const expand = (value: string): string => expandVariables(value, input.variables);

  const argv = (input.command ?? []).map((part) => expand(part)).filter((part) => part.length > 0);
  if (argv.length > 0) {
    return { command: argv[0], args: argv.slice(1), source: "setting" };
  }

  const pythonPath = nonEmpty(input.pythonPath);
  if (pythonPath !== undefined) {
    const python = expand(pythonPath);
    return { command: python, args: ["-m", "kenning", "serve"], source: "pythonPath", python };
  }

  const interpreter = (input.interpreter ?? []).filter((part) => part.length > 0);
  if (interpreter.length > 0) {
    return {
      command: interpreter[0],
      args: [...interpreter.slice(1), "-m", "kenning", "serve"],
      source: "pythonExtension",
      python: interpreter[interpreter.length - 1],
    };
  }

  const onPath = input.which("kenning");
  if (onPath !== undefined) {
    return { command: onPath, args: ["serve"], source: "path" };
  }

  return {
    error:
      "kenning: no language server found — `kenning` is not on PATH and no Python interpreter is configured.",
    installHint: `Install it with \`${INSTALL_COMMAND}\` (or \`python -m pip install <path-to-kenning-repo>\`), or set kenning.server.command / kenning.server.pythonPath.`,
  };
}

export function isFailure(value: ServerCommand | ServerCommandFailure): value is ServerCommandFailure {
  return "error" in value;
}

/**
 * What to do about a command that cannot start: install kenning into that
 * interpreter, or — when the executable itself is missing — fix the setting
 * that named it.
 */
export function installHintFor(command: ServerCommand, missingExecutable = false): string {
  switch (command.source) {
    case "setting":
      return `Check kenning.server.command (${describeCommand(command)}).`;
    case "pythonPath":
      return missingExecutable
        ? "Check kenning.server.pythonPath: it should name a Python interpreter with kenning installed."
        : `Install kenning into that environment: \`${pythonInstallHint(command.python ?? command.command)}\`.`;
    case "pythonExtension":
      return missingExecutable
        ? "Select another interpreter (Python: Select Interpreter) or set kenning.server.pythonPath."
        : `Install kenning into that environment: \`${pythonInstallHint(command.python ?? command.command)}\`, or set kenning.server.pythonPath.`;
    case "path":
      return `Reinstall it with \`${INSTALL_COMMAND}\`.`;
  }
}

/** The command line for messages and the log: `"/a b/python" -m kenning serve`. */
export function describeCommand(command: ServerCommand): string {
  return [command.command, ...command.args].map((part) => (/\s/.test(part) ? `"${part}"` : part)).join(" ");
}

// ---------------------------------------------------------------------------
// PATH lookup, with the file system injected.

export interface WhichEnvironment {
  path: string | undefined;
  /** Windows PATHEXT, e.g. ".COM;.EXE;.BAT" */
  pathext?: string;
  platform: string;
  isExecutable: (file: string) => boolean;
}

export function which(name: string, env: WhichEnvironment): string | undefined {
  const windows = env.platform === "win32";
  const separator = windows ? ";" : ":";
  const slash = windows ? "\\" : "/";
  const extensions = windows
    ? ["", ...(env.pathext ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)]
    : [""];
  for (const dir of (env.path ?? "").split(separator)) {
    if (dir.length === 0) {
      continue;
    }
    const base = dir.endsWith(slash) || dir.endsWith("/") ? dir : dir + slash;
    for (const ext of extensions) {
      const candidate = base + name + ext;
      if (env.isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}
