"""The OpenAI-compatible endpoint backend against a real HTTP server over real sockets.

The server (``tests/embedserver.py``) runs in its own process and computes its vectors with the
real local model, so these tests check search quality through the endpoint as well as the
plumbing, and inject each fault the backend must survive.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kenning.config import Config
from kenning.embedding import EmbeddingCancelled, Encoder
from kenning.embedding.endpoint import (
    EndpointEmbedder,
    EndpointError,
    EndpointResponseInvalid,
    EndpointUnavailable,
    endpoint_model_id,
)
from kenning.embedding.endpoint_config import EndpointSettings, SettingsError, parse_endpoint_settings
from kenning.engine import Engine
from kenning.indexer import embed_pending, update
from kenning.search import SearchQuery, search

REPO = Path(__file__).resolve().parent.parent
KEY = "sk-test-0123456789abcdef-never-logged"


class EmbedServer:
    """The test server in a subprocess: its URL, its fault switch, its counters."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, port: int = 0) -> None:
        self.args = args
        self.env = env
        self.proc = self._start(port)

    def _start(self, port: int) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.embedserver", "--port", str(port), *self.args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, **(self.env or {})},
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening on"), line
        self.port = int(line.split()[-1])
        return proc

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _call(self, method: str, path: str, doc: Any = None) -> Any:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            body = json.dumps(doc).encode() if doc is not None else None
            conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
            return json.loads(conn.getresponse().read())
        finally:
            conn.close()

    def fault(self, name: str | None, count: int = -1, **args: Any) -> None:
        self._call("POST", "/_control", {"fault": name, "count": count, **args})

    def stats(self) -> dict[str, Any]:
        return dict(self._call("GET", "/_stats"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def restart(self) -> None:
        self.stop()
        self.proc = self._start(self.port)


@pytest.fixture(scope="module")
def server() -> Iterator[EmbedServer]:
    srv = EmbedServer("--workers", "2")
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def _no_fault(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "server" in request.fixturenames:
        request.getfixturevalue("server").fault(None)


@pytest.fixture(scope="module")
def local() -> Encoder:
    # The test server runs this model itself and returns its own vectors for queries too; the
    # query adapter maps only the local model's queries (docs/embedding-servers.md).
    return Encoder.load(query_adapter=False)


def settings(server: EmbedServer, **extra: Any) -> EndpointSettings:
    raw = {"url": server.url, "model": "minilm", "retries": 2, "batchSize": 8, "inFlight": 2, **extra}
    parsed, problems = parse_endpoint_settings(raw, strict=True)
    assert parsed is not None and not problems
    return parsed


def embedder(server: EmbedServer, **extra: Any) -> EndpointEmbedder:
    # Short backoff and outage pauses: the schedule is the same, only the unit is smaller.
    return EndpointEmbedder(settings(server, **extra), backoff_base=0.01, outage_retry=0.3)


def engine_for(root: Path, server: EmbedServer, **extra: Any) -> Engine:
    config = Config(embedding=settings(server, **extra))
    return Engine(
        root,
        config,
        encoder_factory=lambda c: EndpointEmbedder(c.embedding, backoff_base=0.01, outage_retry=0.3),  # type: ignore[arg-type]
    )


TEXTS = [
    "def parse_header(line):\n    name, _, value = line.partition(':')\n    return name, value",
    "retry the request with exponential backoff",
    "SELECT name, count(*) FROM users GROUP BY name",
    "## Installation\n\nRun pip install kenning",
    "class LRUCache:\n    def get(self, key): ...",
]


# -- vectors and identity ----------------------------------------------------------------------


def test_vectors_are_the_models_vectors(server: EmbedServer, local: Encoder) -> None:
    emb = embedder(server)
    emb.connect()
    assert emb.dim == local.dim == 384
    got = emb.embed_documents(TEXTS)
    want = local.embed_documents(TEXTS)
    assert got.shape == want.shape
    assert float((got * want).sum(axis=1).min()) > 0.999
    assert float(emb.embed_query("retry upload") @ local.embed_query("retry upload")) > 0.999
    emb.close()


def test_model_identity_is_name_dimension_and_prefixes_not_the_host(server: EmbedServer) -> None:
    a = settings(server)
    b = EndpointSettings(**{**_fields(a), "url": f"http://localhost:{server.port}/v1"})
    assert endpoint_model_id(a, 384) == endpoint_model_id(b, 384)
    assert str(server.port) not in endpoint_model_id(a, 384)
    assert endpoint_model_id(a, 384) != endpoint_model_id(a, 768)
    for field in ("model", "query_prefix", "document_prefix", "max_chars"):
        other = EndpointSettings(**{**_fields(a), field: 77 if field == "max_chars" else "x"})
        assert endpoint_model_id(other, 384) != endpoint_model_id(a, 384), field


def _fields(s: EndpointSettings) -> dict[str, Any]:
    return {f: getattr(s, f) for f in s.__slots__}  # type: ignore[attr-defined]


def test_index_and_search_through_the_endpoint(server: EmbedServer, workspace: Path) -> None:
    with engine_for(workspace, server) as engine:
        _, report = update(engine)
        assert report.embedded > 0 and report.unavailable is None
        st = engine.status()
        assert st.embedded == st.chunks > 0 and st.embedder == f"http://127.0.0.1:{server.port}"
        response = search(engine, SearchQuery("how long to wait before sending a failed upload again"))
        assert not response.lexical_only
        assert response.hits[0].path == "uploads.py"
        assert response.hits[0].dense_rank is not None
    # The same model on another host name: nothing is embedded again.
    before = server.stats()["inputs"]
    moved = Engine(
        workspace,
        Config(embedding=settings(server, url=f"http://localhost:{server.port}/v1")),
    )
    with moved:
        report = embed_pending(moved)
        assert report.embedded == 0 and moved.status().embedded == moved.status().chunks
    assert server.stats()["inputs"] == before + 1  # the probe only


def test_a_swapped_model_is_found_by_the_probe_and_re_embedded(
    server: EmbedServer, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with engine_for(workspace, server) as engine:
        update(engine)
        chunks = engine.status().chunks
    server.fault("swap_model")
    with caplog.at_level(logging.WARNING), engine_for(workspace, server) as engine:
        report = embed_pending(engine)
        assert engine.db is not None
        distinct = len(engine.db.reader().execute("SELECT DISTINCT embed_key FROM chunks").fetchall())
        assert report.embedded == distinct  # everything again, nothing kept from the old model
        assert engine.status().embedded == chunks
        assert "probe vector moved" in caplog.text and "re-embedding" in caplog.text
        emb = embedder(server)
        emb.connect()
        assert emb.probe_mismatch(engine.db.get_meta("model_probe") or "") is None


# -- responses that must be refused ------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "field"),
    [
        ("wrong_dim", "data[4].embedding has 383 dimensions, expected 384"),
        ("nan", "data[0].embedding holds NaN"),
        ("zero", "data[4].embedding is all zeros"),
        ("count", "'data' has 4 items for 5 inputs"),
        ("bad_index", "data[1].index is 0"),
    ],
)
def test_an_invalid_answer_is_refused_naming_endpoint_and_field(
    server: EmbedServer, fault: str, field: str
) -> None:
    emb = embedder(server)
    emb.connect()
    server.fault(fault)
    with pytest.raises(EndpointResponseInvalid) as info:
        emb.embed_documents(TEXTS)
    assert field in str(info.value)
    assert f"127.0.0.1:{server.port}/v1/embeddings" in str(info.value)
    emb.close()


def test_an_invalid_answer_writes_nothing(server: EmbedServer, workspace: Path) -> None:
    with engine_for(workspace, server) as engine:
        engine.bind_model()  # connects (the probe) while the server is fine
        server.fault("wrong_dim")
        with pytest.raises(EndpointResponseInvalid):
            update(engine)
        st = engine.status()
        assert st.embedded == 0 and st.pending == st.chunks > 0
        assert engine.vectors is not None and len(engine.vectors) == 0


def test_reordered_items_with_right_indexes_are_put_back_in_order(server: EmbedServer) -> None:
    emb = embedder(server)
    emb.connect()
    straight = emb.embed_documents(TEXTS)
    server.fault("shuffle")
    assert np.allclose(emb.embed_documents(TEXTS), straight, atol=1e-6)
    assert server.stats()["faults_served"] >= 1
    emb.close()


# -- faults that are retried -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "args"),
    [
        ("500", {}),
        ("503", {}),
        ("503", {"retry_after": 0}),
        ("429", {"retry_after": "1"}),
        ("429", {}),
        ("reset", {}),
        ("truncated", {}),
        ("invalid_json", {}),
        ("slow", {"delay": 1.5}),
    ],
)
def test_transient_faults_are_retried(server: EmbedServer, fault: str, args: dict[str, Any]) -> None:
    emb = embedder(server, timeout=0.5)
    emb.connect()
    before = server.stats()["faults_served"]
    server.fault(fault, count=2, **args)
    vectors = emb.embed_documents(TEXTS[:3])
    assert vectors.shape == (3, 384)
    assert server.stats()["faults_served"] - before == 2
    emb.close()


def test_retry_after_is_honoured(server: EmbedServer) -> None:
    emb = embedder(server)
    emb.connect()
    server.fault("429", count=1, retry_after=1)
    started = time.monotonic()
    emb.embed_documents(TEXTS[:1])
    assert time.monotonic() - started >= 0.9  # the server's pause, not our 10 ms backoff
    emb.close()


def test_past_the_retries_it_is_an_outage_and_queries_do_not_wait(server: EmbedServer) -> None:
    emb = embedder(server, retries=1)
    emb.connect()
    cached = emb.embed_query("retry upload")
    server.fault("503")
    with pytest.raises(EndpointUnavailable) as info:
        emb.embed_documents(TEXTS)
    message = str(info.value)
    assert "HTTP 503" in message and f"127.0.0.1:{server.port}" in message
    assert info.value.retry_at > time.time()
    served = server.stats()["requests"] + server.stats()["faults_served"]
    with pytest.raises(EndpointUnavailable):
        emb.embed_query("a new query")  # answered at once: no request during the outage
    assert np.array_equal(emb.embed_query("retry upload"), cached)  # the LRU still answers
    assert server.stats()["requests"] + server.stats()["faults_served"] == served
    emb.close()


def test_connection_refused_dns_failure_and_tls_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    cases = {
        f"http://127.0.0.1:{port}/v1": "connection refused",
        "http://kenning-test.invalid/v1": "cannot resolve",
    }
    for url, words in cases.items():
        emb = EndpointEmbedder(EndpointSettings(url=url, model="m", retries=1), backoff_base=0.01)
        with pytest.raises(EndpointUnavailable) as info:
            emb.connect()
        assert words in str(info.value), str(info.value)
        emb.close()


def test_tls_error_against_a_plain_http_server(server: EmbedServer) -> None:
    url = f"https://127.0.0.1:{server.port}/v1"
    emb = EndpointEmbedder(EndpointSettings(url=url, model="m", retries=1), backoff_base=0.01)
    with pytest.raises(EndpointUnavailable) as info:
        emb.connect()
    assert "TLS" in str(info.value)
    emb.close()


# -- outage and resume through the engine ------------------------------------------------------


def test_outage_serves_lexical_results_keeps_vectors_and_resumes(
    server: EmbedServer, workspace: Path
) -> None:
    with engine_for(workspace, server, retries=1, batchSize=2, inFlight=1) as engine:
        engine.bind_model()
        served_before = server.stats()["inputs"]
        server.fault("500", after=2)  # two batches answer, then the server fails
        _, report = update(engine)
        assert report.unavailable is not None and "HTTP 500" in report.unavailable
        st = engine.status()
        assert 0 < st.embedded < st.chunks  # what was stored is kept
        # A query now: lexical results, flagged, with a note that says what failed.
        response = search(engine, SearchQuery("upload retry policy"))
        assert response.lexical_only and response.hits
        assert any("HTTP 500" in n and "retrying at" in n for n in response.notes)
        # The endpoint returns; after the outage's pause the indexer resumes where it stopped.
        server.fault(None)
        assert report.retry_at is not None
        time.sleep(max(0.0, report.retry_at - time.time()))
        again = embed_pending(engine)
        assert again.unavailable is None
        st = engine.status()
        assert st.embedded == st.chunks
        # Each input was sent once: nothing already stored was embedded again.
        distinct = len(engine.db.reader().execute("SELECT DISTINCT embed_key FROM chunks").fetchall())  # type: ignore[union-attr]
        assert server.stats()["inputs"] - served_before == distinct
        assert not search(engine, SearchQuery("upload retry policy")).lexical_only


def test_endpoint_down_at_open_leaves_lexical_search_working(workspace: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = Config(embedding=EndpointSettings(url=f"http://127.0.0.1:{port}/v1", model="m", retries=0))
    with Engine(workspace, config) as engine:
        _, report = update(engine)
        assert report.unavailable is not None and "connection refused" in report.unavailable
        assert engine.model_error is None  # not permanent: it retries
        response = search(engine, SearchQuery("upload retry policy"))
        assert response.lexical_only and response.hits
        assert "retrying at" in (engine.status().message or "")


# -- cancellation ------------------------------------------------------------------------------


def test_cancellation_stops_requests_in_flight(server: EmbedServer) -> None:
    emb = embedder(server, queryTimeout=25)
    emb.connect()
    server.fault("slow", delay=30)
    stop = threading.Event()
    job = emb.submit_documents(TEXTS, stop.is_set)
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with pytest.raises(EmbeddingCancelled):
        job.result()
    assert time.monotonic() - started < 10  # long before the server's 30 s answer
    # A query superseded by a newer one (its should_stop turns true) stops waiting at once.
    stop_query = threading.Event()
    threading.Timer(0.3, stop_query.set).start()
    started = time.monotonic()
    with pytest.raises(EmbeddingCancelled):
        emb.embed_query("a query the slow server holds", stop_query.is_set)
    assert time.monotonic() - started < 10  # long before the 25 s query timeout
    # close() aborts what is still in flight too.
    job2 = emb.submit_documents(TEXTS)
    threading.Timer(0.3, emb.close).start()
    with pytest.raises((EmbeddingCancelled, EndpointUnavailable)):
        job2.result(timeout=10)


# -- the key and the settings ------------------------------------------------------------------


def test_the_key_is_sent_but_never_logged_or_stored(
    workspace: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    srv = EmbedServer("--key-env", "EMBED_SERVER_KEY", env={"EMBED_SERVER_KEY": KEY})
    try:
        monkeypatch.setenv("KENNING_TEST_KEY", KEY)
        monkeypatch.setenv("KENNING_WRONG_KEY", KEY + "-wrong")
        caplog.set_level(logging.DEBUG)
        with engine_for(workspace, srv, keyEnv="KENNING_TEST_KEY") as engine:
            _, report = update(engine)
            assert report.embedded > 0
            assert KEY not in repr(engine._encoder) and KEY not in repr(vars(engine._encoder))
        wrong = embedder(srv, keyEnv="KENNING_WRONG_KEY")
        with pytest.raises(EndpointError) as info:
            wrong.connect()
        assert "401" in str(info.value) and "KENNING_WRONG_KEY" in str(info.value)
        none = embedder(srv)
        with pytest.raises(EndpointError) as info:
            none.connect()
        assert "keyEnv" in str(info.value)
        assert KEY not in caplog.text and KEY not in str(info.value)
        for path in (workspace / ".kenning").rglob("*"):
            if path.is_file():
                assert KEY.encode() not in path.read_bytes(), path
    finally:
        srv.stop()


def test_settings_are_checked_and_never_echo_a_key() -> None:
    with pytest.raises(SettingsError, match="NAME of an environment variable"):
        parse_endpoint_settings({"url": "http://h/v1", "model": "m", "keyEnv": "sk-live-123"}, strict=True)
    _, problems = parse_endpoint_settings({"url": "http://h/v1", "model": "m", "keyEnv": "sk-live-123"})
    assert problems and "sk-live-123" not in " ".join(problems)
    with pytest.raises(SettingsError, match="credentials"):
        parse_endpoint_settings({"url": "https://u:secret@h/v1", "model": "m"}, strict=True)
    with pytest.raises(SettingsError, match="http:// or https://"):
        parse_endpoint_settings({"url": "ftp://h/v1", "model": "m"}, strict=True)
    with pytest.raises(SettingsError, match=r"embedding\.model"):
        parse_endpoint_settings({"url": "http://h/v1"}, strict=True)
    s, problems = parse_endpoint_settings({"url": "http://h/v1/embeddings", "model": "m", "batchSize": 0})
    assert s is not None and s.batch_size == 32 and "embedding.batchSize" in problems[0]
    assert s.endpoint == "http://h/v1/embeddings" and s.receiver == "http://h"
    assert parse_endpoint_settings({"url": ""}) == (None, [])
    assert parse_endpoint_settings(None) == (None, [])


def test_plain_http_to_another_host_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    EndpointEmbedder(EndpointSettings(url="http://gpu-box.example:8080/v1", model="m"))
    assert "unencrypted" in caplog.text and "http://gpu-box.example:8080" in caplog.text
    caplog.clear()
    for url in ("http://127.0.0.1:8080/v1", "http://localhost:1/v1", "https://gpu-box.example/v1"):
        EndpointEmbedder(EndpointSettings(url=url, model="m"))
    assert "unencrypted" not in caplog.text


def test_cli_flags_and_stats_name_the_receiver(server: EmbedServer, workspace: Path) -> None:
    flags = ["--embed-url", server.url, "--embed-model", "minilm", "--embed-batch-size", "8"]
    kenning = [sys.executable, "-m", "kenning"]
    done = subprocess.run(
        [*kenning, "index", str(workspace), *flags], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert f"http://127.0.0.1:{server.port}" in done.stderr  # the log names who receives code
    stats = subprocess.run(
        [*kenning, "stats", "--json", "--root", str(workspace), *flags], capture_output=True, text=True
    )
    data = json.loads(stats.stdout)
    assert data["embedding_endpoint"] == f"http://127.0.0.1:{server.port}"
    assert data["model"].startswith("endpoint:minilm:384:") and data["embedded"] == data["chunks"]
    bad_key = [*flags, "--embed-key-env", "sk-a-b"]
    bad = subprocess.run(
        [*kenning, "search", "x", "--root", str(workspace), *bad_key], capture_output=True, text=True
    )
    assert bad.returncode != 0 and "--embed-key-env must be the NAME" in bad.stderr
    assert "sk-a-b" not in bad.stderr


def test_the_lsp_option_is_the_same_object() -> None:
    from kenning.lsp.options import parse_options

    options, problems = parse_options(
        {"embedding": {"url": "http://127.0.0.1:9/v1", "model": "m", "inFlight": 8, "batchSize": "x"}}
    )
    assert options.embedding is not None and options.embedding.in_flight == 8
    assert options.embedding.batch_size == 32 and any("embedding.batchSize" in p for p in problems)
    config = options.config_for(Path("/tmp"), several_folders=False)
    assert config.embedding == options.embedding
    none, problems = parse_options({"embedding": {"url": "http://127.0.0.1:9/v1"}})
    assert none.embedding is None and any("embedding.model" in p for p in problems)
    assert parse_options({"maxResults": 5})[0].embedding is None
