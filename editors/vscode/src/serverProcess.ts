// The language-server process itself: spawned here rather than by
// vscode-languageclient so that kenning gets exactly the command line the user
// configured (no transport flag appended) and so that, when the process dies,
// the message can say how (exit code or signal) and why (the last lines the
// server wrote to stderr) instead of the client's "connection got disposed".
// Uses node's child_process; does not import `vscode`.

import { spawn, type ChildProcess } from "node:child_process";

/** How a server process ended. */
export interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** the last non-empty lines the process wrote to stderr, oldest first */
  stderr: string[];
  /** a spawn error such as ENOENT, when the process never ran */
  error?: string;
}

const TAIL_LINES = 20;
const MAX_LINE = 500;

/** Keeps the last lines of a stream that arrives in arbitrary chunks. */
export class LineTail {
  private readonly lines: string[] = [];
  private partial = "";

  constructor(private readonly keep = TAIL_LINES) {}

  push(chunk: string): void {
    const parts = (this.partial + chunk).split(/\r?\n/);
    this.partial = parts.pop() ?? "";
    for (const line of parts) {
      this.add(line);
    }
  }

  /** The kept lines, including an unterminated last one. */
  get all(): string[] {
    return this.partial.trim() === ""
      ? [...this.lines]
      : [...this.lines, this.partial.trim().slice(0, MAX_LINE)];
  }

  private add(line: string): void {
    const trimmed = line.trim();
    if (trimmed === "") {
      return;
    }
    this.lines.push(trimmed.slice(0, MAX_LINE));
    if (this.lines.length > this.keep) {
      this.lines.shift();
    }
  }
}

/** One sentence for the user: how the process ended and the last thing it said. */
export function describeExit(exit: ServerExit): string {
  if (exit.error !== undefined) {
    return `the server could not be started: ${exit.error}`;
  }
  const how =
    exit.signal !== null
      ? `was killed by ${exit.signal}`
      : exit.code === null
        ? "exited"
        : `exited with code ${exit.code}`;
  const last = lastMeaningfulLine(exit.stderr);
  return last === undefined ? `the server ${how}` : `the server ${how}: ${last}`;
}

/**
 * The stderr line that explains a failure. A Python traceback ends with the
 * exception line, argparse with "prog: error: …", so the last line is usually
 * the one; a trailing "During handling…" style line is not special-cased.
 */
export function lastMeaningfulLine(lines: string[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].trim();
    if (line !== "") {
      return line;
    }
  }
  return undefined;
}

export interface SpawnRequest {
  command: string;
  args: string[];
  cwd: string;
}

/**
 * Spawns server processes on request (the language client asks again after a
 * crash) and remembers how the latest one ended.
 */
export class ServerProcesses {
  private current: ChildProcess | undefined;
  private ended: ServerExit | undefined;
  private previous: ServerExit | undefined;
  private readonly exitListeners: ((exit: ServerExit) => void)[] = [];
  /** one-shot listeners of waitForExit */
  private waiters: ((exit: ServerExit) => void)[] = [];

  constructor(private readonly request: SpawnRequest) {}

  /** For vscode-languageclient's ServerOptions: a function that returns the process. */
  spawn(): Promise<ChildProcess> {
    this.kill();
    const tail = new LineTail();
    this.ended = undefined;
    const child = spawn(this.request.command, this.request.args, {
      cwd: this.request.cwd,
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    this.current = child;
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => tail.push(chunk));
    const finish = (exit: ServerExit): void => {
      if (this.current !== child || this.ended !== undefined) {
        return;
      }
      this.ended = exit;
      this.previous = exit;
      const waiters = this.waiters;
      this.waiters = [];
      for (const listener of [...this.exitListeners, ...waiters]) {
        listener(exit);
      }
    };
    // "close" rather than "exit": by then stderr has been read to the end.
    child.on("close", (code, signal) => finish({ code, signal, stderr: tail.all }));
    child.on("error", (error) =>
      finish({ code: null, signal: null, stderr: tail.all, error: error.message }),
    );
    return Promise.resolve(child);
  }

  /** How the latest process ended; undefined while it runs or before any started. */
  get exit(): ServerExit | undefined {
    return this.ended;
  }

  /** How the most recent process that ended ended (the latest may be running again). */
  get lastExit(): ServerExit | undefined {
    return this.previous;
  }

  /** Resolves with how the latest process ended, or undefined if it is still running after `ms`. */
  waitForExit(ms: number): Promise<ServerExit | undefined> {
    if (this.ended !== undefined || this.current === undefined) {
      return Promise.resolve(this.ended);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.ended), ms);
      this.waiters.push((exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
  }

  onExit(listener: (exit: ServerExit) => void): void {
    this.exitListeners.push(listener);
  }

  /** Ends the latest process if it is still running (the client's shutdown normally ends it). */
  kill(): void {
    const child = this.current;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill();
    }
  }
}
