// The interpreter selected in the Python extension (ms-python.python), through
// its public `environments` API, typed here with only what kenning reads
// instead of depending on @vscode/python-extension. Also: notice when the user
// picks another interpreter, so the server can restart on it.

import * as vscode from "vscode";

const PYTHON_EXTENSION_ID = "ms-python.python";
/** Activating ms-python can be slow; fall back to the next candidate after this. */
const ACTIVATION_TIMEOUT_MS = 10_000;

interface EnvironmentPath {
  id: string;
  path: string;
}

interface ResolvedEnvironment {
  executable: { uri: vscode.Uri | undefined };
}

interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
  resolveEnvironment(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
  readonly onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

interface PythonExtensionApi {
  readonly ready?: Promise<void>;
  readonly environments?: PythonEnvironmentsApi;
}

function timeout<T>(ms: number): Promise<T | undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}

async function environmentsApi(): Promise<PythonEnvironmentsApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  const api = extension.isActive
    ? extension.exports
    : await Promise.race([extension.activate(), timeout<PythonExtensionApi>(ACTIVATION_TIMEOUT_MS)]);
  if (api?.ready !== undefined) {
    await Promise.race([api.ready, timeout<void>(ACTIVATION_TIMEOUT_MS)]);
  }
  return api?.environments;
}

/**
 * The selected interpreter for `resource` as an argv prefix (["/venv/bin/python"]),
 * or undefined when the Python extension is missing or has none.
 */
export async function selectedInterpreter(
  resource: vscode.Uri | undefined,
  log: (message: string) => void,
): Promise<string[] | undefined> {
  try {
    const environments = await environmentsApi();
    if (environments === undefined) {
      return undefined;
    }
    const active = environments.getActiveEnvironmentPath(resource);
    const resolved = await environments.resolveEnvironment(active);
    const executable = resolved?.executable.uri?.fsPath ?? active.path;
    return executable ? [executable] : undefined;
  } catch (error) {
    log(`could not ask the Python extension for its interpreter: ${String(error)}`);
    return undefined;
  }
}

/** Calls `listener` when the user selects another interpreter; undefined without ms-python. */
export async function onDidChangeInterpreter(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    const environments = await environmentsApi();
    return environments?.onDidChangeActiveEnvironmentPath(() => listener());
  } catch {
    return undefined;
  }
}
