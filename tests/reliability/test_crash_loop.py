"""Case 1 and 2: kill -9 at a random moment of indexing, again and again, and restart.

The server runs on a generated workspace with the tiny model (so a round costs about a second);
between rounds half the files are rewritten, a few deleted and a few added, so that every
restart has work to do. After each kill a checker process inspects the store exactly as the kill
left it; every third round it also restarts the index the way the server does and checks what
was redone. The last round lets the server finish and searches through it.
"""

from __future__ import annotations

import json
import queue
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

from tests.reliability.conftest import (
    TOKEN_LINE,
    StartServer,
    generate_workspace,
    module_text,
    token_for,
)

SEED = 20240611
FILES = 400
ROUNDS = 20
SLOW_ROUNDS = 60
# Kill at a uniformly random moment of the index job: between its start and this much of its
# duration, measured on this machine before the loop (a full index, a round of changes).
KILL_WINDOW = 1.1
REPO = Path(__file__).resolve().parents[2]


class Checker:
    """The checker subprocess (tests/reliability/checker.py), one request at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.checker"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)

    def ask(self, request: dict[str, Any], timeout: float = 120.0) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"checker silent for {timeout}s (exit code {self.proc.poll()})") from None
        answer: dict[str, Any] = json.loads(line)
        assert "error" not in answer, answer["error"]
        return answer

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=20)
        stderr = self.proc.stderr.read() if self.proc.stderr else ""
        if self.proc.returncode not in (0, -signal.SIGKILL):
            raise AssertionError(f"checker died with {self.proc.returncode}: {stderr[-2000:]}")


def mutate(root: Path, tokens: dict[str, str], rng: random.Random, version: int) -> list[str]:
    """Rewrite half the files, delete three, add three; return the paths written."""
    paths = sorted(tokens)
    written = rng.sample(paths, k=len(paths) // 2)
    for rel in written:
        index = int(rel.rsplit("_", 1)[1].split(".")[0])
        tokens[rel] = token_for(index, version)
        (root / rel).write_text(module_text(index, tokens[rel], functions=rng.randrange(1, 5)))
    for rel in rng.sample([p for p in paths if p not in written], k=3):
        (root / rel).unlink()
        del tokens[rel]
    for n in range(3):
        index = 100_000 + version * 10 + n
        rel = f"new/mod_{index}.py"
        (root / rel).parent.mkdir(exist_ok=True)
        tokens[rel] = token_for(index, version)
        (root / rel).write_text(module_text(index, tokens[rel]))
        written.append(rel)
    return written


def check_round(answer: dict[str, Any], embedded_before: set[int]) -> list[str]:
    """Every broken invariant of one round, as readable lines (empty: consistent)."""
    bad: list[str] = []
    ins = answer["inspect"]
    if ins["integrity"] != ["ok"]:
        bad.append(f"integrity_check: {ins['integrity'][:3]}")
    if ins["fts"] != "ok":
        bad.append(f"fts5 integrity-check: {ins['fts']}")
    rec = ins["recorded_vectors"]
    if rec is not None and not (rec["exists"] and rec["size_ok"] and rec["hash_ok"]):
        bad.append(f"the recorded vector file is not the one on disk: {rec}")
    # A chunk embedded before the restart and still there is still embedded (not redone).
    lost = (embedded_before & set(ins["chunk_ids"])) - set(ins["embedded_ids"])
    if lost:
        bad.append(f"{len(lost)} chunks lost their vectors across the restart")
    done = answer.get("complete")
    if done is None:
        return bad
    if done["tmp_files_after_open"]:
        bad.append(f"temp files survived a restart: {done['tmp_files_after_open']}")
    if done["files_changed"] != len(ins["expected_changed"]):
        bad.append(
            f"re-chunked {done['files_changed']} files, {len(ins['expected_changed'])} were not committed"
        )
    if done["files_deleted"] != len(ins["expected_deleted"]):
        bad.append(f"deleted {done['files_deleted']} rows, expected {len(ins['expected_deleted'])}")
    if done["embedded"] != done["pending_keys"]:
        bad.append(f"embedded {done['embedded']} texts, only {done['pending_keys']} lacked a vector")
    for key in (
        "vector_keys_without_chunk",
        "embedded_chunks_without_vector",
        "saved_keys_without_chunk",
        "embedded_chunks_not_saved",
        "pending_after",
    ):
        if done[key]:
            bad.append(f"{key}: {done[key]}")
    if done["problems"]:
        bad.append(f"integrity after restart: {done['problems']}")
    for rel, found in done["found"].items():
        lexical = found["lexical"]
        if not lexical or lexical[0][0] != rel or not lexical[0][1] <= TOKEN_LINE <= lexical[0][2]:
            bad.append(f"lexical search for {rel}'s token found {lexical}")
        if not found.get("dense_first"):
            bad.append(f"semantic search with {rel}'s chunk text did not rank that chunk first")
    return bad


def _index_seconds(start_server: StartServer, root: Path, options: dict[str, Any]) -> float:
    """How long an index job takes here: from its first status to ready, uninterrupted."""
    client = start_server(root, options)
    client.wait_state("scanning")
    started = time.monotonic()
    client.wait_state("ready", timeout=120)
    took = time.monotonic() - started
    assert client.close() == 0
    return took


def test_kill_during_indexing_then_restart(
    tmp_path: Path, tiny_model: Path, start_server: StartServer, slow: bool
) -> None:
    rng = random.Random(SEED)
    root = tmp_path / "ws"
    tokens = generate_workspace(root, FILES, seed=SEED)
    rounds = SLOW_ROUNDS if slow else ROUNDS
    options = {"model": str(tiny_model)}
    # Calibrate the kill window, then start over from an empty store.
    full_s = _index_seconds(start_server, root, options)
    mutate(root, tokens, random.Random(SEED + 1), SLOW_ROUNDS + 1)
    changes_s = _index_seconds(start_server, root, options)
    shutil.rmtree(root / ".kenning")
    checker = Checker()
    figures: dict[str, Any] = {
        "rounds": rounds,
        "killed_in": {},
        "inconsistent_rounds": 0,
        "index_seconds": [round(full_s, 2), round(changes_s, 2)],
    }
    timing = {"start": 0.0, "check": 0.0}
    embedded_before: set[int] = set()
    problems: list[str] = []
    try:
        for r in range(rounds):
            written = mutate(root, tokens, rng, r) if r else sorted(tokens)
            started = time.monotonic()
            client = start_server(root, options)
            # Restarting works, and the restarted server answers at once (lexically at least).
            assert "results" in client.search(tokens[written[0]], mode="lexical")
            client.wait_state("scanning")
            timing["start"] += time.monotonic() - started
            time.sleep(rng.uniform(0.0, KILL_WINDOW * (changes_s if r else full_s)))
            states = client.statuses()
            phase = states[-1]["state"] if states else "starting"
            client.kill()
            figures["killed_in"][phase] = figures["killed_in"].get(phase, 0) + 1
            complete = r % 3 == 2 or r == rounds - 1
            probes = rng.sample(written, k=min(3, len(written)))
            started = time.monotonic()
            answer = checker.ask(
                {
                    "root": str(root),
                    "model": str(tiny_model),
                    "tokens": tokens,
                    "probes": probes,
                    "complete": complete,
                }
            )
            timing["check"] += time.monotonic() - started
            bad = check_round(answer, embedded_before)
            if bad:
                figures["inconsistent_rounds"] += 1
                problems += [f"round {r} (killed while {phase}): {line}" for line in bad]
            embedded_before = set(answer.get("complete", answer["inspect"])["embedded_ids"])
        # The last restart runs to the end: the server itself finds a token at its line.
        client = start_server(root, options)
        status = client.wait_state("ready", timeout=120)
        assert status["pending"] == 0 and status["files"] == len(tokens)
        rel = sorted(tokens)[len(tokens) // 2]
        hit = client.search(tokens[rel], mode="lexical")["results"][0]
        assert hit["uri"] == (root / rel).resolve().as_uri()
        assert hit["range"]["start"]["line"] <= TOKEN_LINE - 1 <= hit["range"]["end"]["line"]
        assert client.close() == 0
    finally:
        checker.close()
    figures["seconds"] = {k: round(v, 1) for k, v in timing.items()}
    print(f"\ncrash loop: {json.dumps(figures)}", file=sys.stderr)
    assert not problems, "\n".join(problems)
    during = sum(n for phase, n in figures["killed_in"].items() if phase != "ready")
    assert during >= rounds // 2, f"too few kills landed during indexing: {figures['killed_in']}"


# -- case 2: a kill while the HNSW file is being written ------------------------------------------

_KILL_IN_SAVE = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import kenning.store.vectors as vectors
    from kenning.config import Config
    from kenning.engine import Engine
    from kenning.indexer import update

    root, model = Path(sys.argv[1]), sys.argv[2]
    with Engine(root, Config(model=model)) as engine:
        update(engine)
    (root / "late.py").write_text("def late_arrival_marker():\\n    return 1\\n")

    real_replace = os.replace
    def replace(src, dst):
        if str(src).endswith(".usearch.tmp"):
            sys.stdout.write("tmp written: " + Path(src).name + "\\n")
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)  # the tmp file is complete, not yet renamed
        return real_replace(src, dst)
    vectors.os.replace = replace
    engine = Engine(root, Config(model=model)).open()
    update(engine)
""")


def test_kill_while_saving_vectors_keeps_the_old_generation(
    tmp_path: Path, tiny_model: Path, start_server: StartServer
) -> None:
    root = tmp_path / "ws"
    tokens = generate_workspace(root, 40, seed=3)
    proc = subprocess.run(
        [sys.executable, "-c", _KILL_IN_SAVE, str(root), str(tiny_model)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    assert "tmp written: vectors." in proc.stdout
    store = root / ".kenning"
    (current,) = store.glob("vectors.*.usearch")
    (tmp,) = store.glob("vectors.*.usearch.tmp")
    assert int(tmp.name.split(".")[1]) == int(current.name.split(".")[1]) + 1
    answer = Checker()
    try:
        got = answer.ask(
            {
                "root": str(root),
                "model": str(tiny_model),
                "tokens": tokens | {"late.py": "late_arrival_marker"},
                "probes": ["late.py"],
                "complete": False,
            }
        )
    finally:
        answer.close()
    assert got["inspect"]["recorded_vectors"] == {"exists": True, "size_ok": True, "hash_ok": True}
    # The restarted server removes the temp file, keeps serving, and catches up.
    client = start_server(root, {"model": str(tiny_model)})
    client.wait_state("ready")
    assert not list(store.glob("*.tmp"))
    hit = client.search("late_arrival_marker", mode="lexical")["results"][0]
    assert hit["uri"].endswith("/late.py")
    assert client.close() == 0
    (saved,) = store.glob("vectors.*.usearch")
    assert int(saved.name.split(".")[1]) > int(current.name.split(".")[1])
