"""Cases 15 and 23 under load: a burst of saves, searches during a full re-index, cancel storms.

Bounded in count and time; the server's memory and thread count come from /proc.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests.reliability.client import Client
from tests.reliability.conftest import TOKEN_LINE, StartServer, generate_workspace, module_text

SAVES = 10_000
SAVED_FILES = 50
SEARCHES = 1_000
IN_FLIGHT = 32  # searches outstanding at once (a fast typist with a debounce sends fewer)
# Every thread the server may have: main, reader pool (8), request pool (4), asyncio's default
# pool (6 on 2 cores), indexing, parent watch, onnxruntime's; a leak would pass it in one storm.
MAX_THREADS = 32


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _jobs(client: Client) -> int:
    return sum(s["reindexJobs"] for s in client.command("kenning.status"))


def _settle(client: Client, timeout: float = 60.0) -> int:
    """Wait until every folder is ready with nothing pending and no new job for 0.5 s."""
    deadline = time.monotonic() + timeout
    last = -1
    while True:
        folders = client.command("kenning.status")
        jobs = sum(s["reindexJobs"] for s in folders)
        if jobs == last and all(s["state"] == "ready" and not s["pending"] for s in folders):
            return jobs
        assert time.monotonic() < deadline, f"never settled: {folders}"
        last = jobs
        time.sleep(0.5)


def test_ten_thousand_saves_coalesce(tmp_path: Path, tiny_model: Path, start_server: StartServer) -> None:
    root = tmp_path / "ws"
    tokens = generate_workspace(root, 200, seed=5)
    client = start_server(root, {"model": str(tiny_model)}, watch_files=True)
    client.wait_state("ready")
    saved = sorted(tokens)[:SAVED_FILES]
    for i, rel in enumerate(saved):
        tokens[rel] = f"qzburst{chr(97 + i % 26)}{chr(97 + i // 26)}xq"
        (root / rel).write_text(module_text(i, tokens[rel]))
    jobs_before, rss_before = _jobs(client), client.rss_kib()

    started = time.monotonic()
    burst = b"".join(
        _frame(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didSave",
                "params": {"textDocument": {"uri": (root / saved[n % SAVED_FILES]).as_uri()}},
            }
        )
        for n in range(SAVES)
    )
    client.send_bytes(burst)
    sent = time.monotonic() - started
    # The search sent right behind the burst is answered once the burst is read.
    result = client.search(tokens[saved[-1]], mode="lexical", timeout=60)
    answered = time.monotonic() - started
    assert isinstance(result["results"], list)
    # Every saved file ends up re-indexed, in a bounded number of jobs.
    deadline = time.monotonic() + 60
    while True:
        hits = client.search(tokens[saved[-1]], mode="lexical")["results"]
        if hits:
            break
        assert time.monotonic() < deadline, "the saved files were never re-indexed"
        time.sleep(0.1)
    jobs = _settle(client) - jobs_before
    rss_growth_mib = (client.rss_kib() - rss_before) / 1024
    for rel in saved:
        hit = client.search(tokens[rel], mode="lexical")["results"][0]
        assert hit["uri"].endswith(rel)
        assert hit["range"]["start"]["line"] <= TOKEN_LINE - 1 <= hit["range"]["end"]["line"]
    print(
        f"\n{SAVES} saves: sent in {sent:.2f}s, search answered after {answered:.2f}s, "
        f"{jobs} re-index jobs, RSS {rss_growth_mib:+.1f} MiB",
        file=sys.stderr,
    )
    assert 1 <= jobs <= SAVED_FILES
    assert rss_growth_mib < 64
    assert answered < 30
    assert client.close() == 0


def test_searches_during_a_full_reindex(tmp_path: Path, tiny_model: Path, start_server: StartServer) -> None:
    root = tmp_path / "ws"
    tokens = generate_workspace(root, 300, seed=6)
    client = start_server(root, {"model": str(tiny_model)}, watch_files=True)
    client.wait_state("ready")
    threads_before = client.threads()
    for i, rel in enumerate(sorted(tokens)):  # every file changed: the re-index has real work
        (root / rel).write_text(module_text(i, tokens[rel], functions=5))
    statuses_before = len(client.statuses())
    client.command("kenning.reindex")

    started = time.monotonic()
    rels = sorted(tokens)
    pending: list[int] = []
    answered, errors, states = 0, [], set()
    threads_half = 0
    for n in range(SEARCHES):
        if n == SEARCHES // 2:
            threads_half = client.threads()  # the pools have grown to their size by now
        query = tokens[rels[n % len(rels)]] if n % 2 else "helper items factor total"
        pending.append(client.request("workspace/semanticSearch", {"query": query, "limit": 5}))
        while len(pending) >= IN_FLIGHT or (n == SEARCHES - 1 and pending):
            reply = client.wait_response(pending.pop(0), 60)
            answered += 1
            if "error" in reply:
                errors.append(reply["error"])
            else:
                states.add(reply["result"]["index"]["state"])
    elapsed = time.monotonic() - started
    client.wait_state("ready", after=statuses_before)
    threads_end = client.threads()
    print(
        f"\n{SEARCHES} searches during a re-index: {elapsed:.1f}s, states seen {sorted(states)}, "
        f"threads {threads_before} -> {threads_half} -> {threads_end}",
        file=sys.stderr,
    )
    assert answered == SEARCHES and not errors, errors[:3]
    assert states - {"ready"}, "the searches never overlapped the re-index"
    assert elapsed < 60
    # Pools grow lazily up to their sizes (8 + 4 + asyncio's); a leak grows with the requests.
    assert threads_end - threads_half < 5 and threads_end <= MAX_THREADS, "threads leak"
    assert client.close() == 0


def test_cancelled_searches_answer_once_and_leak_no_threads(
    tmp_path: Path, tiny_model: Path, start_server: StartServer
) -> None:
    root = tmp_path / "ws"
    generate_workspace(root, 100, seed=7)
    client = start_server(root, {"model": str(tiny_model)}, watch_files=True)
    client.wait_state("ready")
    client.search("warm up the pools")
    threads: list[int] = []
    outcomes = {"result": 0, "cancelled": 0}
    for storm in range(3):
        ids = []
        for n in range(100):
            msg_id = client.request("workspace/semanticSearch", {"query": f"helper {storm} {n}"})
            client.notify("$/cancelRequest", {"id": msg_id})
            ids.append(msg_id)
        for msg_id in ids:
            reply = client.wait_response(msg_id, 60)
            if "error" in reply:
                assert reply["error"]["code"] == -32800, reply
                outcomes["cancelled"] += 1
            else:
                outcomes["result"] += 1
        time.sleep(0.3)
        assert all(client.reply_counts[json.dumps(i)] == 1 for i in ids)
        threads.append(client.threads())
    print(f"\n300 cancelled searches: {outcomes}, threads after each storm {threads}", file=sys.stderr)
    assert outcomes["cancelled"] > 0
    assert threads[2] - threads[0] < 5 and max(threads) <= MAX_THREADS, f"threads leak: {threads}"
    assert client.search("helper", mode="lexical")["results"]
    assert client.close() == 0
