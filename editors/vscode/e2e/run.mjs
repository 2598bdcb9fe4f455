// The kenning extension in a real VS Code, the way users run it: code-server
// (VS Code 1.139 in a browser) on 127.0.0.1 with the .vsix installed, driven
// by Debian's Chromium through puppeteer-core. Each step asserts what the
// user would see and saves a screenshot to e2e/screenshots/ (git-ignored).
//
// Needs: Node 24 on PATH (code-server's engine), `npm ci` here, a Python with
// kenning installed (KENNING_PYTHON, default <repo>/.venv/bin/python), the
// packaged extension (KENNING_VSIX, default ../kenning.vsix) and Chromium
// (KENNING_CHROMIUM, default /usr/bin/chromium). .ci/vscode-e2e sets all up.

import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import puppeteer from "puppeteer-core";

import { FILES } from "./fixture.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..", "..", "..");
const python = process.env.KENNING_PYTHON ?? join(repo, ".venv", "bin", "python");
const vsix = process.env.KENNING_VSIX ?? join(here, "..", "kenning.vsix");
const chromium = process.env.KENNING_CHROMIUM ?? "/usr/bin/chromium";
const codeServer = join(here, "node_modules", ".bin", "code-server");
const shots = join(here, "screenshots");
const started = Date.now();
// Every wait has its own limit; this one bounds the whole run (the issue asks for well under 10 min).
const TOTAL_LIMIT_MS = 8 * 60_000;

function log(message) {
  console.log(`[vscode-e2e ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
}

function check(condition, message) {
  if (!condition) {
    throw new Error(`assertion failed: ${message}`);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what, probe, timeoutMs = 60_000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await probe();
    if (last) {
      return last;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function writeJson(path, value) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

function writeWorkspace(root) {
  for (const [rel, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

/** The work directory of this run; the extension runs its server with its own directory, inside it, as cwd. */
let workDir = "";

/** PIDs of the `kenning serve` processes this run's extension started (other tests may run more). */
function kenningServers() {
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (argv.includes("kenning") && argv.includes("serve") && cwd.startsWith(`${workDir}/`)) {
        pids.push(Number(entry));
      }
    } catch {
      // exited meanwhile
    }
  }
  return pids.sort();
}

// ---------------------------------------------------------------------------
// code-server

class CodeServer {
  constructor(work, userData, extensions, { trust }) {
    this.work = work;
    this.userData = userData;
    this.extensions = extensions;
    this.trust = trust;
    this.output = "";
  }

  async start() {
    this.port = await freePort();
    const config = join(this.work, "code-server.yaml");
    // Only 127.0.0.1, no password: the test's browser is the only client.
    writeFileSync(config, `bind-addr: 127.0.0.1:${this.port}\nauth: none\ncert: false\n`);
    const args = [
      "--config",
      config,
      "--user-data-dir",
      this.userData,
      "--extensions-dir",
      this.extensions,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-getting-started-override",
      "--ignore-last-opened",
    ];
    if (!this.trust) {
      args.push("--disable-workspace-trust");
    }
    this.process = spawn(codeServer, args, {
      cwd: this.work,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PASSWORD: "", HOME: this.work },
    });
    this.process.stdout.on("data", (d) => (this.output += d));
    this.process.stderr.on("data", (d) => (this.output += d));
    await until(
      "code-server to listen",
      async () => {
        check(this.process.exitCode === null, `code-server exited:\n${this.output}`);
        try {
          return (await fetch(`http://127.0.0.1:${this.port}/healthz`)).ok;
        } catch {
          return false;
        }
      },
      60_000,
      250,
    );
    log(`code-server listening on 127.0.0.1:${this.port}`);
  }

  url(folder) {
    return `http://127.0.0.1:${this.port}/?folder=${encodeURIComponent(folder)}`;
  }

  async stop() {
    if (this.process?.exitCode === null) {
      try {
        process.kill(-this.process.pid, "SIGTERM");
      } catch {
        // gone
      }
      await until(
        "code-server to exit",
        () => this.process.exitCode !== null || this.process.signalCode !== null,
        15_000,
      ).catch(() => process.kill(-this.process.pid, "SIGKILL"));
    }
  }
}

/** The extension host's log lines (they hold unhandled rejections), from every session so far. */
function extensionHostLog(userData) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else if (/^(remote)?exthost\.log$/i.test(entry.name)) {
        found.push(readFileSync(path, "utf8"));
      }
    }
  };
  if (existsSync(join(userData, "logs"))) {
    walk(join(userData, "logs"));
  }
  return found.join("\n");
}

// ---------------------------------------------------------------------------
// The window

let shotCount = 0;

class Window {
  constructor(page) {
    this.page = page;
  }

  async shot(name) {
    shotCount += 1;
    const file = join(shots, `${String(shotCount).padStart(2, "0")}-${name}.png`);
    await this.page.screenshot({ path: file });
    log(`screenshot ${file}`);
  }

  /** The kenning status-bar item: its text, its icons and its accessible label. */
  status() {
    return this.page.evaluate(() => {
      for (const item of document.querySelectorAll(".statusbar-item")) {
        const label = item.querySelector("a, .statusbar-item-label") ?? item;
        const text = (label.textContent ?? "").replace(/\s+/g, " ").trim();
        if (/\bkenning\b/.test(text) || /kenning\.indexStatus/.test(item.id)) {
          const icons = [...item.querySelectorAll(".codicon")].map((i) =>
            [...i.classList].find((c) => c.startsWith("codicon-") && c !== "codicon-modifier-spin"),
          );
          return { text, icons, aria: label.getAttribute("aria-label") ?? "", id: item.id };
        }
      }
      return undefined;
    });
  }

  async waitStatus(what, predicate, timeoutMs = 120_000) {
    return until(
      `the status bar: ${what}`,
      async () => {
        const status = await this.status();
        return status !== undefined && predicate(status) ? status : undefined;
      },
      timeoutMs,
    );
  }

  waitReady(timeoutMs = 180_000) {
    return this.waitStatus(
      "ready",
      (s) => s.icons.includes("codicon-check") && /chunks?/.test(s.text),
      timeoutMs,
    );
  }

  /** The quick input's rows as the user sees them. */
  rows() {
    return this.page.evaluate(() => {
      const widget = document.querySelector(".quick-input-widget");
      if (widget === null || widget.style.display === "none") {
        return undefined;
      }
      const title = widget.querySelector(".quick-input-title")?.textContent ?? "";
      const rows = [...widget.querySelectorAll(".quick-input-list .monaco-list-row")].map((row) => ({
        label: row.querySelector(".label-name")?.textContent ?? "",
        description: row.querySelector(".label-description")?.textContent ?? "",
        aria: row.getAttribute("aria-label") ?? "",
        focused: row.classList.contains("focused"),
      }));
      return { title, rows };
    });
  }

  async closeQuickInput() {
    if ((await this.rows()) !== undefined) {
      await this.page.keyboard.press("Escape");
      await until("the quick input to close", async () => (await this.rows()) === undefined, 10_000);
    }
  }

  /** Runs a command from the palette by its title, as a user types it. */
  async palette(title) {
    await this.closeQuickInput();
    const input = await this.openQuickInput("F1");
    await input.type(title);
    await until(
      `"${title}" in the command palette`,
      async () => {
        const view = await this.rows();
        return view?.rows[0]?.label.replace(/\s+/g, " ").trim() === title;
      },
      30_000,
    );
    await this.page.keyboard.press("Enter");
  }

  /** Presses `key` (with Control for "Control+P") until the quick input shows; its text box. */
  async openQuickInput(key) {
    for (let attempt = 0; attempt < 5; attempt++) {
      // A click would move the cursor and lose a selection: only when focus is not in the workbench.
      const focused = await this.page.evaluate(
        () =>
          document.activeElement?.closest(".monaco-workbench") !== null &&
          document.activeElement !== document.body,
      );
      if (!focused || attempt > 0) {
        await this.focusWorkbench();
      }
      const [modifier, main] = key.includes("+") ? key.split("+") : [undefined, key];
      if (modifier !== undefined) {
        await this.page.keyboard.down(modifier);
      }
      await this.page.keyboard.press(main);
      if (modifier !== undefined) {
        await this.page.keyboard.up(modifier);
      }
      const input = await this.page
        .waitForSelector(".quick-input-widget .quick-input-box input", { visible: true, timeout: 5_000 })
        .catch(() => null);
      if (input !== null) {
        return input;
      }
    }
    throw new Error(`${key} did not open the quick input`);
  }

  /** Keyboard focus in the active editor, or the workbench when no editor is open. */
  async focusWorkbench() {
    const line = await this.page.$(".editor-group-container.active .monaco-editor .view-line");
    if (line !== null) {
      await line.click();
    } else {
      await this.page.click(".monaco-workbench .part.editor");
    }
  }

  /**
   * Semantic Search from the palette, then `text` typed once kenning's picker is the one shown
   * (by its placeholder): the palette's input closes and kenning's opens in the same widget, and
   * keys typed in between (a server just restarted makes the command slower) land in the palette.
   */
  async search(text) {
    await this.palette("Kenning: Semantic Search");
    await until(
      "kenning's search picker",
      async () => /^Describe the code/.test((await this.quickInput("placeholder")) ?? ""),
      30_000,
    );
    await this.typeQuery(text);
  }

  /** A property of the quick input's text box (`value`, `placeholder`); undefined when none shows. */
  quickInput(property) {
    return this.page
      .$eval(".quick-input-widget .quick-input-box input", (element, name) => element[name], property)
      .catch(() => undefined);
  }

  /** Types into the open quick input after clearing it, until the input holds exactly `text`. */
  async typeQuery(text) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const input = await this.page.waitForSelector(".quick-input-widget .quick-input-box input", {
        visible: true,
      });
      // Select all and delete, as a user clears it (a triple click on a loaded machine can
      // arrive as single clicks and delete one character).
      await input.focus();
      await this.page.keyboard.down("Control");
      await this.page.keyboard.press("KeyA");
      await this.page.keyboard.up("Control");
      await this.page.keyboard.press("Backspace");
      const cleared = await input.evaluate((element) => element.value);
      if (cleared !== "") {
        log(`the quick input still holds "${cleared}" after select-all and delete`);
        continue;
      }
      await input.type(text);
      const typed = await input.evaluate((element) => element.value);
      if (typed === text) {
        return;
      }
      log(`the quick input holds "${typed}", not "${text}": typing again`);
    }
    throw new Error(`could not type "${text}" into the quick input`);
  }

  /** Rows of a kenning picker once they answer `query` (the extension searches as you type). */
  async results(what, predicate, timeoutMs = 60_000) {
    let last;
    try {
      return await until(
        what,
        async () => {
          const view = await this.rows();
          const rows = view?.rows.filter((r) => !/^\s*$/.test(r.label)) ?? [];
          last = view;
          return view !== undefined && predicate(rows, view) ? { rows, title: view.title } : undefined;
        },
        timeoutMs,
      );
    } catch (error) {
      // What the picker showed instead says which step went wrong.
      const input = (await this.quickInput("value")) ?? "(no input)";
      throw new Error(`${error.message}; the quick input held "${input}" and showed ${JSON.stringify(last)}`);
    }
  }

  /** Toast notifications currently shown: their message and their buttons. */
  toasts() {
    return this.page.evaluate(() =>
      [...document.querySelectorAll(".notifications-toasts .notification-list-item")].map((toast) => ({
        message: (toast.querySelector(".notification-list-item-message")?.textContent ?? "").trim(),
        buttons: [...toast.querySelectorAll(".monaco-button")].map((b) => (b.textContent ?? "").trim()),
      })),
    );
  }

  async clearToasts() {
    await this.page.evaluate(() => {
      for (const button of document.querySelectorAll(".notifications-toasts .codicon-notifications-clear")) {
        button.click();
      }
    });
  }

  /** The editor's selection as the status bar shows it, e.g. "Ln 4, Col 1 (250 selected)". */
  selection() {
    return this.page.evaluate(() => {
      const item = document.getElementById("status.editor.selection");
      return item === null ? "" : (item.textContent ?? "").trim();
    });
  }

  activeTab() {
    return this.page.evaluate(() => {
      const tab = document.querySelector(".tabs-container .tab.active");
      return tab === null ? "" : (tab.getAttribute("aria-label") ?? tab.textContent ?? "");
    });
  }
}

async function openWindow(browser, server, folder) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 900 });
  page.on("pageerror", (error) => log(`page error: ${error.message}`));
  await page.goto(server.url(folder), { waitUntil: "domcontentloaded" });
  await page.waitForSelector(".monaco-workbench .part.statusbar", { timeout: 120_000 });
  // Keyboard focus in the workbench, not the browser chrome.
  await page.click(".monaco-workbench .part.editor");
  return new Window(page);
}

function userSettings(trust) {
  return {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "update.mode": "none",
    "git.enabled": false,
    "chat.disableAIFeatures": true,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "security.workspace.trust.enabled": trust,
    // An untrusted folder opens in Restricted Mode without the modal question.
    "security.workspace.trust.startupPrompt": "never",
  };
}

// ---------------------------------------------------------------------------
// The scenario

async function scenario(browser, work) {
  const userData = join(work, "user-data");
  const extensions = join(work, "extensions");
  const machineSettings = join(userData, "Machine", "settings.json");
  writeJson(join(userData, "User", "settings.json"), userSettings(false));
  // In a remote window (code-server, Remote-SSH, WSL, containers) machine-scoped settings such as
  // kenning.server.pythonPath are read from the Machine settings, not the User settings.
  writeJson(machineSettings, { "kenning.server.pythonPath": python });

  log(`installing ${vsix}`);
  const install = spawnSync(
    codeServer,
    ["--user-data-dir", userData, "--extensions-dir", extensions, "--install-extension", vsix, "--force"],
    { encoding: "utf8", timeout: 120_000, env: { ...process.env, HOME: work } },
  );
  check(
    install.status === 0 && /successfully installed/i.test(install.stdout + install.stderr),
    `install failed:\n${install.stdout}\n${install.stderr}`,
  );

  const ws = writeWorkspace(join(work, "ws"));
  const server = new CodeServer(work, userData, extensions, { trust: false });
  await server.start();
  let window;
  try {
    window = await openWindow(browser, server, ws);
    await window.waitStatus("the kenning item", () => true, 120_000);
    await window.shot("window-opened");

    // 1. The server starts and indexes: the status bar reaches ready.
    const ready = await window.waitReady();
    log(`status bar: ${ready.text}`);
    check(existsSync(join(ws, ".kenning")), "the index lives in <folder>/.kenning");
    const explorerShowsStore = await window.page.evaluate(() =>
      [...document.querySelectorAll(".explorer-folders-view .monaco-list-row")].some((row) =>
        (row.getAttribute("aria-label") ?? "").startsWith(".kenning"),
      ),
    );
    check(!explorerShowsStore, ".kenning is hidden in the Explorer (configurationDefaults files.exclude)");
    await window.shot("status-ready");

    // 2. Semantic Search from the command palette: the expected definition is the first row.
    await window.search("open a database connection");
    const search = await window.results("OpenDatabase as the first row", (rows) =>
      /OpenDatabase/.test(rows[0]?.label ?? ""),
    );
    check(
      /db\.go/.test(search.rows[0].label + search.rows[0].description + search.rows[0].aria),
      "the first row names db.go",
    );
    await window.shot("semantic-search");

    // 3. Enter opens the file with the hit's range selected.
    await window.page.keyboard.press("Enter");
    await until("db.go to open", async () => /db\.go/.test(await window.activeTab()), 30_000);
    const selected = await until(
      "a selection",
      async () => {
        const text = await window.selection();
        return /selected/.test(text) ? text : undefined;
      },
      15_000,
    );
    check(
      /Ln [56],/.test(selected) || /Ln 1[0-2],/.test(selected),
      `the selection is OpenDatabase's range (${selected})`,
    );
    await window.shot("opened-at-range");

    // 4. A lang: filter narrows the rows to that language.
    await window.search("connection headers upload");
    const unfiltered = await window.results("rows from several files", (rows) => rows.length >= 3);
    const files = (rows) => rows.map((r) => `${r.label} ${r.description}`);
    check(
      files(unfiltered.rows).some((f) => !/\.go\b/.test(f)),
      "unfiltered rows include other languages",
    );
    await window.typeQuery("connection headers upload lang:go");
    const filtered = await window.results(
      "only Go rows",
      (rows) => rows.length > 0 && files(rows).every((f) => /\.go\b/.test(f)),
    );
    check(filtered.rows.length < unfiltered.rows.length, "the filter narrows the rows");
    await window.shot("lang-filter");
    await window.closeQuickInput();
    // Escape goes back to the editor the search started from (the extension restores it).
    await until("db.go to be restored", async () => /db\.go/.test(await window.activeTab()), 15_000);
    await sleep(500);

    // 5. Find Similar Code on a selection.
    const explorerRow = await window.page.waitForSelector(
      '.explorer-folders-view .monaco-list-row[aria-label^="geometry.py"]',
      { visible: true },
    );
    await until(
      "geometry.py to open",
      async () => {
        await explorerRow.click({ count: 2 });
        await sleep(1_000);
        return /geometry\.py/.test(await window.activeTab());
      },
      30_000,
    );
    await window.focusWorkbench();
    await window.page.keyboard.down("Control");
    await window.page.keyboard.press("Home");
    await window.page.keyboard.up("Control");
    for (let i = 0; i < 3; i++) {
      await window.page.keyboard.press("ArrowDown");
    }
    await window.page.keyboard.down("Shift");
    for (let i = 0; i < 2; i++) {
      await window.page.keyboard.press("ArrowDown");
    }
    await window.page.keyboard.up("Shift");
    const lines = await until(
      "a selection in geometry.py",
      async () => {
        const text = await window.selection();
        return /selected/.test(text) ? text : undefined;
      },
      10_000,
    );
    check(/geometry\.py/.test(await window.activeTab()), `lines of geometry.py are selected (${lines})`);
    await window.palette("Kenning: Find Similar Code");
    const similar = await window.results(
      "similar code rows",
      (rows, view) => rows.length > 0 && /similar to .*geometry\.py:\d/i.test(view.title),
    );
    check(
      similar.rows.some((r) => !/geometry\.py/.test(r.label)),
      "similar code from other files is offered",
    );
    await window.shot("find-similar");
    await window.closeQuickInput();

    // 6. Show Index Status: one row for the folder, ready.
    await window.palette("Kenning: Show Index Status");
    const statusRows = await window.results("the folder's status row", (rows) =>
      rows.some((r) => /\bws\b/.test(r.label)),
    );
    const row = statusRows.rows.find((r) => /\bws\b/.test(r.label));
    check(
      /ready — \d+ chunks in 4 files/.test(row.description + row.aria),
      `the folder is ready with 4 files (${row.description})`,
    );
    await window.shot("index-status");
    await window.closeQuickInput();

    // 7. Restart Server: a new server process, and the status bar is ready again.
    const before = kenningServers();
    check(before.length === 1, `one kenning server runs (${before})`);
    await window.palette("Kenning: Restart Server");
    const after = await until(
      "a new server process",
      () => {
        const now = kenningServers();
        return now.length === 1 && now[0] !== before[0] ? now : undefined;
      },
      60_000,
    );
    await window.waitReady();
    log(`restarted: server pid ${before[0]} -> ${after[0]}`);
    await window.search("parse an HTTP header");
    await window.results("parseHttpHeader after the restart", (rows) =>
      /parseHttpHeader/.test(rows[0]?.label ?? ""),
    );
    await window.shot("restarted");
    await window.closeQuickInput();

    // 8. A Python without kenning: an actionable toast (what to install where, Open Settings).
    const bare = join(work, "bare-venv");
    const venv = spawnSync("python3", ["-m", "venv", "--without-pip", bare], { encoding: "utf8" });
    check(venv.status === 0, `python3 -m venv: ${venv.stderr}`);
    const barePython = join(bare, "bin", "python");
    await window.clearToasts();
    writeJson(machineSettings, { "kenning.server.pythonPath": barePython });
    const missing = await until("the not-installed toast", async () =>
      (await window.toasts()).find((t) => /kenning is not installed/.test(t.message)),
    );
    check(
      missing.message.includes(`${barePython} -m pip install`),
      `the toast names the install command (${missing.message})`,
    );
    check(missing.buttons.includes("Open Settings"), `the toast offers Open Settings (${missing.buttons})`);
    await sleep(1_000); // toasts slide in
    await window.waitStatus("the error item", (s) => s.icons.includes("codicon-error"));
    await window.shot("python-without-kenning");

    // 9. A server that exits non-zero: its exit code and last stderr line, not -32097; a restart
    //    after the failed start leaves no unhandled rejection behind.
    await window.clearToasts();
    writeJson(machineSettings, {
      "kenning.server.pythonPath": python,
      "kenning.server.command": [python, "-m", "kenning", "serve", "--no-such-option"],
    });
    const exited = await until("the exited toast", async () =>
      (await window.toasts()).find((t) => /did not start/.test(t.message)),
    );
    check(
      /exited with code 2: .*unrecognized arguments: --no-such-option/.test(exited.message),
      `the toast quotes the server (${exited.message})`,
    );
    await sleep(1_000); // toasts slide in
    const others = (await window.toasts()).filter((t) =>
      /-32097|connection got disposed|couldn't create connection/.test(t.message),
    );
    check(others.length === 0, `no toast of the client's own (${others.map((t) => t.message)})`);
    const tooltip = await window.page.evaluate(() => {
      const item = [...document.querySelectorAll(".statusbar-item")].find((i) =>
        /kenning/.test(i.textContent ?? ""),
      );
      return item?.querySelector("a")?.getAttribute("aria-label") ?? "";
    });
    check(!/kenning: kenning:/.test(tooltip), `no doubled prefix (${tooltip})`);
    await window.shot("server-exit-code");
    await window.clearToasts();
    await window.palette("Kenning: Restart Server");
    await until("the exited toast again", async () =>
      (await window.toasts()).some((t) => /exited with code 2/.test(t.message)),
    );

    // Back to the working interpreter: the server recovers.
    writeJson(machineSettings, { "kenning.server.pythonPath": python });
    await window.waitReady();
    await sleep(1_500); // the extension host logs a rejection not handled within 1 s
    const hostLog = extensionHostLog(userData);
    check(hostLog.length > 0, "the extension host log was found");
    check(
      !/can't be stopped|rejected promise not handled/i.test(hostLog),
      `no unhandled rejection in the extension host log:\n${hostLog
        .split("\n")
        .filter((l) => /rejected|stopped/i.test(l))
        .join("\n")}`,
    );
    await window.shot("recovered");
  } catch (error) {
    await window?.shot("failure").catch(() => undefined);
    log(`extension host log:\n${extensionHostLog(userData).slice(-4000)}`);
    throw error;
  } finally {
    await window?.page.close().catch(() => undefined);
    await server.stop();
  }
  return { userData, extensions };
}

async function trustScenario(browser, work, extensions) {
  // A fresh profile with Workspace Trust on: the folder has never been trusted.
  const userData = join(work, "user-data-trust");
  writeJson(join(userData, "User", "settings.json"), userSettings(true));
  writeJson(join(userData, "Machine", "settings.json"), { "kenning.server.pythonPath": python });
  const ws = writeWorkspace(join(work, "untrusted", "ws"));
  const server = new CodeServer(work, userData, extensions, { trust: true });
  await server.start();
  let window;
  try {
    window = await openWindow(browser, server, ws);
    const shield = await window.waitStatus("Restricted Mode", (s) => s.icons.includes("codicon-shield"));
    check(/Restricted Mode/.test(shield.aria), `the item says why (${shield.aria})`);
    await sleep(3_000);
    check(!existsSync(join(ws, ".kenning")), "nothing is indexed in an untrusted workspace");
    check(kenningServers().length === 0, "no server runs in an untrusted workspace");
    await window.shot("untrusted-restricted-mode");

    // Granting trust (the status item opens Manage Workspace Trust) starts the server.
    await window.page.evaluate(() => {
      const item = [...document.querySelectorAll(".statusbar-item")].find((i) =>
        /kenning/.test(i.textContent ?? ""),
      );
      item?.querySelector("a")?.click();
    });
    const trustButton = await until(
      "the Trust button",
      () =>
        window.page
          .evaluateHandle(
            () =>
              [...document.querySelectorAll(".workspace-trust-editor .monaco-button")].find((b) =>
                /^Trust( Folder)?$/.test((b.textContent ?? "").trim()),
              ) ?? null,
          )
          .then((h) => (h.asElement() === null ? undefined : h.asElement())),
      30_000,
    );
    await window.shot("manage-workspace-trust");
    await trustButton.click();
    await window.waitReady();
    check(existsSync(join(ws, ".kenning")), "the trusted workspace is indexed");
    await window.shot("trusted-ready");
  } catch (error) {
    await window?.shot("failure-trust").catch(() => undefined);
    log(`extension host log:\n${extensionHostLog(userData).slice(-4000)}`);
    throw error;
  } finally {
    await window?.page.close().catch(() => undefined);
    await server.stop();
  }
}

async function main() {
  check(existsSync(python), `no Python with kenning at ${python} (set KENNING_PYTHON)`);
  check(existsSync(vsix), `no ${vsix}: run \`npm run package\` in editors/vscode (or set KENNING_VSIX)`);
  check(
    existsSync(chromium),
    `no Chromium at ${chromium} (apt-get install chromium, or set KENNING_CHROMIUM)`,
  );
  check(existsSync(codeServer), "no code-server: run `npm ci` in editors/vscode/e2e with Node 24 on PATH");
  rmSync(shots, { recursive: true, force: true });
  mkdirSync(shots, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), "kenning-vscode-e2e-"));
  workDir = work;
  log(`work dir ${work}; python ${python}`);
  const timer = setTimeout(() => {
    console.error(`vscode-e2e: over ${TOTAL_LIMIT_MS / 60_000} minutes, giving up`);
    process.exit(1);
  }, TOTAL_LIMIT_MS);
  timer.unref();
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    // root in a container has no user namespaces for Chromium's sandbox
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,900"],
  });
  let ok = false;
  try {
    const { extensions } = await scenario(browser, work);
    await trustScenario(browser, work, extensions);
    ok = true;
  } finally {
    await browser.close().catch(() => undefined);
    if (ok) {
      rmSync(work, { recursive: true, force: true });
    } else {
      log(`kept ${work} for inspection`);
    }
    log(`screenshots in ${shots}`);
  }
  log(`passed in ${((Date.now() - started) / 1000).toFixed(0)}s`);
}

main().catch((error) => {
  console.error(`vscode-e2e FAILED: ${error.stack ?? error}`);
  process.exit(1);
});
