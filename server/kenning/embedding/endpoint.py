"""Embeddings from an OpenAI-compatible server (TEI, vLLM, Ollama, llama.cpp, Infinity, ...).

Owns :class:`EndpointEmbedder`, the second embedding backend beside the local ONNX encoder,
and the errors it raises. One ``POST <url>/embeddings`` per batch of ``batch_size`` inputs,
``in_flight`` of them outstanding at once on persistent (keep-alive) connections, one per
worker thread. The standard library's ``http.client`` does the HTTP: one small JSON request
shape does not earn a dependency, and owning the socket lets a cancelled call shut it down
mid-response, which a pooled client hides.

What comes back is checked before anything is returned, so nothing invalid is ever stored:
the number of items, their ``index`` fields (a permutation of the inputs' positions; a
reordered but complete set is put back in order), the dimension, NaN/infinite values and
all-zero vectors. A failure names the endpoint and the field.

Faults (refused or reset connections, DNS and TLS errors, timeouts, 408/429/5xx with or without
``Retry-After``, truncated or invalid JSON) are retried ``retries`` times with exponential
backoff and full jitter. Past that the call raises :class:`EndpointUnavailable` and the
embedder stays "down" until its ``retry_at``: queries then fail at once (the search answers
lexically) instead of each waiting for a timeout, unless their vector is in the small LRU.

The API key is read from the environment variable the settings name, kept in an object whose
``repr`` hides it, and only ever put in the ``Authorization`` header.
"""

from __future__ import annotations

import base64
import collections
import concurrent.futures
import contextlib
import email.utils
import hashlib
import http.client
import json
import logging
import math
import os
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from kenning.embedding.backend import EmbeddingUnavailable
from kenning.embedding.encoder import EmbeddingCancelled
from kenning.embedding.endpoint_config import EndpointSettings
from kenning.types import ShouldStop

__all__ = [
    "PROBE_TEXT",
    "EndpointEmbedder",
    "EndpointError",
    "EndpointResponseInvalid",
    "EndpointUnavailable",
    "endpoint_model_id",
]

log = logging.getLogger(__name__)

#: Embedded on every open and compared with the vector recorded for the model: a server that
#: swapped the model behind the same name gives another vector.
PROBE_TEXT = (
    "kenning probe\ndef retry_upload(path, attempts=3):\n"
    "    # send the file again with exponential backoff\n    return upload(path)"
)
#: Cosine below which the probe says another model answers. Same model, other hardware or
#: batch: > 0.999 measured (fp16 on GPUs drifts in the 4th digit); another model: near 0.
PROBE_MIN_COSINE = 0.98
#: Queries cached (typing repeats them: "retry", "retry up", "retry upload" ... and back).
QUERY_CACHE_SIZE = 256
#: First backoff delay and its cap, in seconds; each retry doubles it, full jitter.
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 8.0
#: A Retry-After longer than this ends the retries now: the outage retries at that time.
RETRY_AFTER_CAP_S = 30.0
#: After an outage, the first retry of the whole endpoint comes this long after; doubling per
#: consecutive outage up to the cap.
OUTAGE_RETRY_S = 15.0
OUTAGE_RETRY_CAP_S = 300.0
#: Connecting cannot be interrupted by a stop (shutdown waits for it), so it gets less time.
CONNECT_TIMEOUT_S = 5.0
_RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
_ERROR_BODY_CHARS = 300


class EndpointError(Exception):
    """The endpoint refused the request for a reason retrying will not fix (401, 404, 413, a
    bad model name) or is misconfigured; the message names the endpoint and what to change."""


class EndpointResponseInvalid(EndpointError):
    """A 200 answer that cannot be used (wrong count, dimension, order, NaN or zero vectors)."""


class EndpointUnavailable(EmbeddingUnavailable):
    """The endpoint did not answer usefully after every retry; try again at ``retry_at``."""


class _Secret:
    """The API key: usable, but never shown by repr/str (logs, tracebacks with locals)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "<secret>"

    __str__ = __repr__


def endpoint_model_id(settings: EndpointSettings, dim: int) -> str:
    """The store's model identity for vectors from an endpoint.

    The model name, the dimension and everything that shapes the text the model sees (the
    prefixes and the character cap), but not the URL: the same model moved to another host
    gives the same vectors and must not re-embed. A server that swaps the model behind the same
    name is caught by the probe (see :meth:`EndpointEmbedder.probe_mismatch`), not here.
    """
    shaping = json.dumps(
        {
            "query_prefix": settings.query_prefix,
            "document_prefix": settings.document_prefix,
            "max_chars": settings.max_chars,
        },
        sort_keys=True,
    )
    digest = hashlib.sha256(shaping.encode()).hexdigest()[:8]
    return f"endpoint:{settings.model}:{dim}:{digest}"


class _Call:
    """One caller's requests: what ``abort`` shuts down when the caller stops waiting."""

    def __init__(self, should_stop: ShouldStop | None) -> None:
        self.should_stop = should_stop
        self.aborted = threading.Event()
        self._lock = threading.Lock()
        self._socks: set[socket.socket] = set()

    def stopped(self) -> bool:
        if self.aborted.is_set():
            return True
        if self.should_stop is not None and self.should_stop():
            self.abort()
            return True
        return False

    def attach(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._socks.add(sock)
        if self.aborted.is_set():
            self._shut(sock)

    def detach(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._socks.discard(sock)

    def abort(self) -> None:
        self.aborted.set()
        with self._lock:
            socks = list(self._socks)
        for sock in socks:
            self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        # shutdown (not close) wakes a thread blocked in recv on this socket at once.
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def sleep(self, seconds: float) -> bool:
        """Wait, polling for a stop; False if stopped."""
        deadline = time.monotonic() + seconds
        while True:
            if self.stopped():
                return False
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            self.aborted.wait(min(left, 0.05))


class _Attempt(Exception):
    """One failed attempt that may be retried: what failed, and the server's Retry-After."""

    def __init__(self, what: str, retry_after: float | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.retry_after = retry_after


class DocumentsJob:
    """Embeddings of one list of documents, requested in the background (see ``submit``)."""

    def __init__(self, call: _Call, parts: list[concurrent.futures.Future[np.ndarray]]) -> None:
        self._call = call
        self._parts = parts

    def result(self, timeout: float | None = None) -> np.ndarray:
        """The ``(n, dim)`` vectors in input order; raises what the requests raised."""
        deadline = None if timeout is None else time.monotonic() + timeout
        out: list[np.ndarray] = []
        for part in self._parts:
            while True:
                if self._call.stopped():
                    self.cancel()
                    raise EmbeddingCancelled("embedding cancelled")
                wait = 0.05 if deadline is None else min(0.05, max(deadline - time.monotonic(), 0))
                try:
                    out.append(part.result(timeout=wait))
                    break
                except concurrent.futures.TimeoutError:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise
                except BaseException:
                    self.cancel()
                    raise
        return np.concatenate(out) if out else np.empty((0, 0), dtype=np.float32)

    def cancel(self) -> None:
        """Drop the requests not sent yet and shut down those in flight."""
        for part in self._parts:
            part.cancel()
        self._call.abort()


class EndpointEmbedder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint.

    Construct without touching the network; :meth:`connect` embeds the probe text, which
    fixes ``dim`` and ``model_id``. Thread-safe: the indexer and the search threads share one.
    """

    def __init__(
        self,
        settings: EndpointSettings,
        *,
        backoff_base: float = BACKOFF_BASE_S,
        outage_retry: float = OUTAGE_RETRY_S,
    ) -> None:
        self.settings = settings
        self.receiver = settings.receiver
        self.endpoint = settings.endpoint
        self._parts = urlsplit(settings.endpoint)
        self._backoff_base = backoff_base
        self._outage_retry = outage_retry
        self._outages = 0
        self._down: EndpointUnavailable | None = None
        self._state_lock = threading.Lock()
        self._local = threading.local()
        self._conns: set[http.client.HTTPConnection] = set()
        self._conns_lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=settings.in_flight, thread_name_prefix="kenning-endpoint"
        )
        self._query_pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=2, thread_name_prefix="kenning-endpoint-query"
        )
        self._closed = False
        self._queries: collections.OrderedDict[str, np.ndarray] = collections.OrderedDict()
        self._dim: int | None = settings.dimensions
        self._model_id: str | None = None
        self._probe: np.ndarray | None = None
        self._key = self._read_key()
        self._ssl = ssl.create_default_context() if self._parts.scheme == "https" else None
        if settings.cleartext_remote:
            log.warning(
                "embedding endpoint %s is plain http:// to another machine: your code travels"
                " unencrypted; use https:// unless the network is yours",
                self.receiver,
            )
        log.info("embedding through %s (model %s): code is sent to that host", self.receiver, settings.model)

    def _read_key(self) -> _Secret | None:
        name = self.settings.key_env
        if name is None:
            return None
        value = os.environ.get(name)
        if not value:
            raise EndpointError(
                f"embedding.keyEnv names the environment variable {name}, which is not set or empty;"
                " set it to the API key or remove keyEnv"
            )
        return _Secret(value.strip())

    # -- identity ---------------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        if self._model_id is None:
            raise EndpointError(f"{self.endpoint}: not connected yet (the probe has not answered)")
        return self._model_id

    @property
    def dim(self) -> int:
        if self._dim is None:
            raise EndpointError(f"{self.endpoint}: not connected yet (the probe has not answered)")
        return self._dim

    @property
    def connected(self) -> bool:
        return self._model_id is not None

    def connect(self, *, quick: bool = False) -> None:
        """Embed the probe text: learns the dimension (or checks the configured one) and the
        vector to compare with next time. ``quick``: the query timeout and no retries."""
        if self._model_id is not None:
            return
        call = _Call(None)
        timeout = self.settings.query_timeout if quick else self.settings.timeout
        retries = 0 if quick else self.settings.retries
        vec = self._request([self.settings.document_prefix + PROBE_TEXT], call, timeout, retries)[0]
        self._dim = int(vec.shape[0])
        self._probe = vec
        self._model_id = endpoint_model_id(self.settings, self._dim)

    def probe_fingerprint(self) -> str:
        """A short digest of the probe vector, coarse enough that a server's numeric noise keeps
        it and a different model changes it (the shared cache keys on it)."""
        assert self._probe is not None
        coarse = np.round(self._probe.astype(np.float64), 2).astype("<f4").tobytes()
        return hashlib.blake2b(coarse, digest_size=8).hexdigest()

    def probe_record(self) -> str:
        assert self._probe is not None
        return base64.b64encode(self._probe.astype("<f4").tobytes()).decode("ascii")

    def probe_mismatch(self, recorded: str) -> str | None:
        assert self._probe is not None
        try:
            old = np.frombuffer(base64.b64decode(recorded, validate=True), dtype="<f4")
        except ValueError:
            return "the recorded probe vector is unreadable"
        if old.shape != self._probe.shape:
            return (
                f"the model behind {self.settings.model!r} at {self.receiver} now gives"
                f" {self._probe.shape[0]} dimensions, not {old.shape[0]}"
            )
        norm = float(np.linalg.norm(old))
        cosine = float(old @ self._probe) / max(norm, 1e-12)
        if cosine < PROBE_MIN_COSINE:
            return (
                f"the model behind {self.settings.model!r} at {self.receiver} changed:"
                f" its probe vector moved (cosine {cosine:.3f} to the recorded one)"
            )
        return None

    # -- embedding --------------------------------------------------------------------------

    @property
    def preferred_batch(self) -> int:
        """Chunks per indexer batch: one request's worth, committed as soon as it answers."""
        return self.settings.batch_size

    @property
    def pipeline_depth(self) -> int:
        """Indexer batches kept outstanding: ``in_flight`` requests busy, as many queued behind
        them so a worker that finishes starts the next at once."""
        return 2 * self.settings.in_flight

    def submit_documents(self, texts: Sequence[str], should_stop: ShouldStop | None = None) -> DocumentsJob:
        """Start embedding ``texts`` (document prefix, cut at ``max_chars``) in the background."""
        self._check_up()
        call = _Call(should_stop)
        prefix, cap, size = self.settings.document_prefix, self.settings.max_chars, self.settings.batch_size
        inputs = [prefix + _clip(t, cap) for t in texts]
        parts = [
            self._pool.submit(self._document_request, inputs[i : i + size], call)
            for i in range(0, len(inputs), size)
        ]
        return DocumentsJob(call, parts)

    def embed_documents(self, texts: Sequence[str], should_stop: ShouldStop | None = None) -> np.ndarray:
        """``(len(texts), dim)`` vectors in input order; raises :class:`EmbeddingCancelled`,
        :class:`EndpointUnavailable`, :class:`EndpointError`."""
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        return self.submit_documents(texts, should_stop).result()

    def embed_query(self, text: str, should_stop: ShouldStop | None = None) -> np.ndarray:
        """The query's vector: from the LRU, else one short request (no retries: a query that
        waits long is worse than a lexical answer now)."""
        with self._state_lock:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
                return cached
        self._check_up()
        inputs = [self.settings.query_prefix + _clip(text, self.settings.max_chars)]
        # On a pool of its own (never queued behind indexing requests), waited for here so that
        # a newer query's cancel shuts the request down at once.
        call = _Call(should_stop)
        part = self._query_pool.submit(self._request, inputs, call, self.settings.query_timeout, 0)
        vec: np.ndarray = DocumentsJob(call, [part]).result()[0]
        with self._state_lock:
            self._queries[text] = vec
            while len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vec

    @property
    def outage(self) -> EndpointUnavailable | None:
        """The outage in force (None once ``retry_at`` passed or a request succeeded)."""
        down = self._down
        if down is not None and time.time() >= down.retry_at:
            return None
        return down

    def _check_up(self) -> None:
        down = self.outage
        if down is not None:
            raise EndpointUnavailable(str(down), down.retry_at)

    def close(self) -> None:
        """Abort every call in flight, stop the workers, close the connections."""
        self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._query_pool.shutdown(wait=False, cancel_futures=True)
        with self._conns_lock:
            conns = list(self._conns)
            self._conns.clear()
        for conn in conns:
            if conn.sock is not None:
                _Call._shut(conn.sock)  # wakes a worker blocked reading the answer

    def __repr__(self) -> str:
        return f"EndpointEmbedder({self.receiver!r}, model={self.settings.model!r})"

    # -- requests ---------------------------------------------------------------------------

    def _document_request(self, inputs: list[str], call: _Call) -> np.ndarray:
        return self._request(inputs, call, self.settings.timeout, self.settings.retries)

    def _request(self, inputs: list[str], call: _Call, timeout: float, retries: int) -> np.ndarray:
        """One batch, with retries; raises EmbeddingCancelled / EndpointUnavailable / EndpointError."""
        payload: dict[str, Any] = {"model": self.settings.model, "input": inputs, "encoding_format": "float"}
        if self.settings.dimensions is not None:
            payload["dimensions"] = self.settings.dimensions
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")
        failure = ""
        retry_after: float | None = None
        for attempt in range(retries + 1):
            if call.stopped() or self._closed:
                raise EmbeddingCancelled("embedding cancelled")
            try:
                vectors = self._attempt(body, len(inputs), call, timeout)
            except _Attempt as exc:
                failure, retry_after = exc.what, exc.retry_after
                log.debug("%s: attempt %d failed: %s", self.endpoint, attempt + 1, failure)
            else:
                self._up()
                return vectors
            if call.stopped() or self._closed:
                raise EmbeddingCancelled("embedding cancelled")
            if attempt == retries:
                break
            if retry_after is not None and retry_after > RETRY_AFTER_CAP_S:
                break  # the server asked for a long pause: that is an outage, not a retry
            delay = retry_after if retry_after is not None else self._backoff(attempt)
            if not call.sleep(delay):
                raise EmbeddingCancelled("embedding cancelled")
        raise self._went_down(failure, retry_after)

    def _backoff(self, attempt: int) -> float:
        # Full jitter: many clients (or our own in-flight requests) must not retry in step.
        return random.uniform(0, min(BACKOFF_CAP_S, self._backoff_base * 2**attempt))

    def _up(self) -> None:
        if self._down is not None:
            log.info("embedding endpoint %s answers again", self.receiver)
        self._down = None
        self._outages = 0

    def _went_down(self, failure: str, retry_after: float | None) -> EndpointUnavailable:
        with self._state_lock:
            if self.outage is not None and self._down is not None:
                return self._down  # another request of the same outage: one outage, one count
            self._outages += 1
            wait = min(OUTAGE_RETRY_CAP_S, self._outage_retry * 2 ** (self._outages - 1))
            if retry_after is not None:
                wait = max(wait, retry_after)
            since = time.strftime("%H:%M:%S")
            error = EndpointUnavailable(
                f"the embedding endpoint {self.endpoint} failed ({failure}) at {since}", time.time() + wait
            )
            self._down = error
        return error

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            host, port = self._parts.hostname or "", self._parts.port
            if self._ssl is not None:
                conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=self._ssl)
            else:
                conn = http.client.HTTPConnection(host, port, timeout=timeout)
            self._local.conn = conn
            with self._conns_lock:
                self._conns.add(conn)
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with self._conns_lock:
                self._conns.discard(conn)
            with contextlib.suppress(Exception):
                conn.close()

    def _attempt(self, body: bytes, count: int, call: _Call, timeout: float) -> np.ndarray:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key is not None:
            headers["Authorization"] = "Bearer " + self._key.reveal()
        try:
            status, reason, retry_after, data = self._exchange(body, headers, call, timeout)
        finally:
            del headers  # the key does not outlive the request in a frame
        if status != 200:
            detail = _error_detail(data)
            if status in _RETRY_STATUS:
                raise _Attempt(f"HTTP {status} {reason}{detail}", retry_after)
            raise EndpointError(self._rejected(status, reason, detail))
        return self._parse(data, count)

    def _exchange(
        self, body: bytes, headers: dict[str, str], call: _Call, timeout: float
    ) -> tuple[int, str, float | None, bytes]:
        """POST once: (status, reason, Retry-After seconds, body). A kept-alive connection the
        server closed while idle fails before any answer; that gets one fresh connection."""
        path = self._parts.path or "/"
        for fresh_try in (False, True):
            conn = self._connection(timeout)
            reused = conn.sock is not None
            sock = None
            try:
                if conn.sock is None:
                    # Connecting cannot be interrupted by a stop: keep it short.
                    conn.timeout = min(timeout, CONNECT_TIMEOUT_S)
                    conn.connect()
                    if conn.sock is not None:
                        conn.sock.settimeout(timeout)
                sock = conn.sock
                call.attach(sock)
                conn.request("POST", path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                if response.will_close:
                    self._drop_connection()
                return response.status, response.reason, _retry_after(response.getheader("Retry-After")), data
            except (OSError, http.client.HTTPException) as exc:
                self._drop_connection()
                if call.aborted.is_set() or self._closed:
                    raise EmbeddingCancelled("embedding cancelled") from None
                stale = isinstance(
                    exc, http.client.RemoteDisconnected | BrokenPipeError | ConnectionResetError
                )
                if reused and stale and not fresh_try:
                    continue
                raise _Attempt(_describe(exc, timeout)) from None
            finally:
                call.detach(sock)
        raise AssertionError("unreachable")

    def _rejected(self, status: int, reason: str, detail: str) -> str:
        hint = {
            401: "the server wants an API key: set embedding.keyEnv to the name of the variable holding it"
            if self._key is None
            else f"the key in ${self.settings.key_env} was refused",
            403: f"the key in ${self.settings.key_env} may not use this model"
            if self._key is not None
            else "the server refuses this client",
            404: "is the URL the API's base (ending in /v1) and the model name one the server serves?",
            413: "the request is too large: lower embedding.batchSize or embedding.maxChars",
            422: "an input is too long for the model: lower embedding.maxChars (TEI: --auto-truncate)",
        }.get(status, "")
        text = f"the embedding endpoint {self.endpoint} answered HTTP {status} {reason}{detail}"
        return f"{text}; {hint}" if hint else text

    def _parse(self, data: bytes, count: int) -> np.ndarray:
        """Validated, L2-normalised ``(count, dim)`` vectors from a 200 answer's body."""
        where = self.endpoint
        try:
            doc = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            # A proxy that cut the body, or a server that crashed mid-answer: worth a retry.
            raise _Attempt(f"invalid JSON in the answer ({len(data)} bytes): {exc}") from None
        items = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(items, list):
            raise EndpointResponseInvalid(f"{where}: the answer has no 'data' list (not an embeddings API?)")
        if len(items) != count:
            raise EndpointResponseInvalid(f"{where}: 'data' has {len(items)} items for {count} inputs")
        order: list[int] = []
        rows: list[Any] = []
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
                raise EndpointResponseInvalid(f"{where}: data[{i}].embedding is missing or not a list")
            index = item.get("index", i)
            if not isinstance(index, int) or isinstance(index, bool):
                raise EndpointResponseInvalid(f"{where}: data[{i}].index is {index!r}, not an integer")
            order.append(index)
            rows.append(item["embedding"])
        seen: set[int] = set()
        for i, index in enumerate(order):
            if not 0 <= index < count or index in seen:
                raise EndpointResponseInvalid(
                    f"{where}: data[{i}].index is {index}: the indexes are not each input's position once"
                )
            seen.add(index)
        expected = self._dim
        for i, row in enumerate(rows):
            if expected is None:
                expected = len(row)
            if len(row) != expected or expected == 0:
                raise EndpointResponseInvalid(
                    f"{where}: data[{i}].embedding has {len(row)} dimensions, expected {expected}"
                    + (" (embedding.dimensions)" if self.settings.dimensions else "")
                )
        try:
            matrix = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError):
            bad = next(
                i
                for i, r in enumerate(rows)
                if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in r)
            )
            raise EndpointResponseInvalid(
                f"{where}: data[{bad}].embedding holds something other than numbers"
            ) from None
        finite = np.isfinite(matrix).all(axis=1)
        if not finite.all():
            bad = int(np.argmin(finite))
            raise EndpointResponseInvalid(f"{where}: data[{bad}].embedding holds NaN or infinite values")
        norms = np.linalg.norm(matrix, axis=1)
        if (norms == 0).any():
            bad = int(np.argmin(norms))
            raise EndpointResponseInvalid(f"{where}: data[{bad}].embedding is all zeros")
        out = np.empty_like(matrix)
        out[np.asarray(order)] = matrix / norms[:, None]
        return out


def _clip(text: str, cap: int) -> str:
    """At most ``cap`` characters, valid UTF-8 (lone surrogates from undecodable files become
    U+FFFD: JSON encoders refuse or mangle them)."""
    text = text[:cap]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if math.isnan(seconds):
        return None
    return max(0.0, seconds)


def _error_detail(data: bytes) -> str:
    """A short, printable excerpt of an error body (servers put the reason there)."""
    text = data[:_ERROR_BODY_CHARS].decode("utf-8", "replace").strip()
    with contextlib.suppress(ValueError):
        doc = json.loads(data)
        if isinstance(doc, dict):
            err = doc.get("error", doc.get("message", doc.get("detail")))
            if isinstance(err, dict):
                err = err.get("message")
            if isinstance(err, str):
                text = err[:_ERROR_BODY_CHARS]
    text = " ".join(text.split())
    return f": {text}" if text else ""


def _describe(exc: BaseException, timeout: float) -> str:
    """What failed, in words a user can act on (never the request, which may hold the key)."""
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the host name ({exc.strerror or exc})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the server running?)"
    if isinstance(exc, TimeoutError | socket.timeout):
        return f"no answer within {timeout:g}s"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted ({exc.verify_message})"
    if isinstance(exc, ssl.SSLError):
        return f"TLS error ({exc.reason or exc})"
    if isinstance(exc, http.client.IncompleteRead):
        return "the connection closed mid-answer (truncated body)"
    if isinstance(exc, http.client.RemoteDisconnected | ConnectionResetError | BrokenPipeError):
        return "the connection was reset"
    if isinstance(exc, http.client.HTTPException):
        return f"bad HTTP from the server ({type(exc).__name__})"
    return f"{type(exc).__name__}: {exc}"


EndpointFactory = Callable[[EndpointSettings], EndpointEmbedder]
