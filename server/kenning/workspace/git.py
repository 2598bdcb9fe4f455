"""The hardened git runner: ``git ls-files`` (what git itself would show under a root) and
``git check-ignore`` (why it shows nothing), run so that a repository cannot make git run a
program, redirect it to another repository, take the user's index lock or prompt.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Sequence

from kenning.config import STORE_DIRNAME

log = logging.getLogger("kenning.workspace")

GIT_TIMEOUT_S = 60.0
# Roots where git ran out of GIT_TIMEOUT_S: walked from then on, for the life of the process.
# A repository can make git's matcher take exponential time: a `.gitignore` line of ten `**/`
# held `git ls-files` past 20 s on one path 30 directories deep, and without this every save
# there would wait the whole timeout again. The walk matches such lines in linear time (RE2).
_too_slow_roots: set[str] = set()
# Variables that would point git at another repository or index than the root's own (they are
# set, for instance, when kenning runs from inside a git hook).
_GIT_REDIRECTS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)


# Configuration a repository can carry that makes git run a program: forced off on the command
# line, which overrides every config file. ``ls-files`` runs no hooks, filters or diff drivers,
# but an fsmonitor hook it does run; the rest are off so a later change of command stays safe.
_GIT_SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "core.pager=cat",
    "core.sshCommand=false",
    "core.askPass=",
    "credential.helper=",
    "diff.external=",
    "protocol.allow=never",
    "safe.bareRepository=explicit",
)


def _git_env(*, literal: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_REDIRECTS and not k.startswith("GIT_CONFIG")}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # never take index.lock away from the user's own git
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    if literal:
        env["GIT_LITERAL_PATHSPECS"] = "1"  # a path given to git is a name, never a glob
    return env


def _git_command(git: str, root: str, *args: str) -> list[str]:
    cmd = [git, "--no-pager"]
    for item in _GIT_SAFE_CONFIG:
        cmd += ["-c", item]
    return [*cmd, "-C", root, *args]


def _git_run(
    args: list[str], root: str, feed: bytes | None = None
) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run(
            args,
            input=feed,
            stdin=subprocess.DEVNULL if feed is None else None,
            capture_output=True,
            env=_git_env(literal=feed is None),  # check-ignore takes names as they are
            cwd=root,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        _too_slow_roots.add(root)
        log.warning("git in %s took longer than %.0f s; walking it instead from now on", root, GIT_TIMEOUT_S)
        return None
    except OSError as exc:
        log.warning("git in %s failed (%s); walking instead", root, exc)
        return None


def git_ls_files(root: str, paths: Sequence[str] | None = None) -> list[str] | None:
    """What git would show under ``root`` (or under ``paths`` in it), relative to the root;
    None (logged) if git cannot tell."""
    if root in _too_slow_roots:
        return None
    git = shutil.which("git")
    if git is None:
        log.info("git not found on PATH; walking %s", root)
        return None
    base = _git_command(git, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    tail = ["--", *(os.fsencode(p).decode("utf-8", "surrogateescape") for p in paths)] if paths else []
    attempts = [[*base, "--deduplicate", *tail], [*base, *tail]]  # --deduplicate needs git 2.31
    for i, args in enumerate(attempts):
        proc = _git_run(args, root)
        if proc is None:
            return None
        if proc.returncode == 0:
            # Paths are bytes; surrogateescape keeps names that are not UTF-8 usable as paths.
            return [os.fsdecode(p) for p in proc.stdout.split(b"\0") if p]
        message = proc.stderr.decode("utf-8", "replace").strip()
        if proc.returncode == 129 and i == 0:
            continue  # usage error: an older git without --deduplicate
        if "not a git repository" in message:
            log.debug("%s is not in a git work tree; walking it", root)
        else:
            log.warning(
                "git ls-files in %s failed (exit %d: %s); walking instead",
                root,
                proc.returncode,
                message[:500],
            )
        return None
    return None


def git_explain_ignored(root: str) -> str | None:
    """Why git lists nothing under ``root``: the ignore rule that excludes it, if one does."""
    git = shutil.which("git")
    if git is None or root in _too_slow_roots:
        return None
    try:
        with os.scandir(root) as it:
            sample = [e.name for e in it if e.name not in (".git", STORE_DIRNAME)][:20]
    except OSError:
        return None
    if not sample:
        return None
    feed = b"".join(os.fsencode(name) + b"\0" for name in sample)
    proc = _git_run(_git_command(git, root, "check-ignore", "-v", "-z", "--stdin"), root, feed)
    if proc is None or proc.returncode != 0:
        return None
    fields = proc.stdout.split(b"\0")
    if len(fields) < 4:
        return None
    source, line, pattern = (f.decode("utf-8", "backslashreplace") for f in fields[:3])
    return (
        f"git ignores the files of this folder: pattern {pattern!r} at {source}:{line} "
        "(an ignore file of the repository it lives in); add '!' rules there, or index it "
        "outside that repository"
    )
