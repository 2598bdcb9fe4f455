"""A real OpenAI-compatible embedding server for tests and the bench, with fault switches.

``python -m tests.embedserver --port 0 --workers 2`` serves ``POST /v1/embeddings`` over real
sockets (stdlib ``ThreadingHTTPServer``), computing vectors with kenning's real local model,
so search quality through an endpoint can be checked, not just plumbing. It prints
``listening on <port>`` once ready. ``--workers`` bounds how many batches the model runs at
once (a GPU server's replicas); the ONNX session's threads are ``--threads``.

Faults are switched at run time: ``POST /_control {"fault": NAME, "count": N, ...}`` makes the
next N embedding requests fail that way (N = -1: until switched off with ``{"fault": null}``),
after ``after`` more requests served normally.
``GET /_stats`` answers what was served. Faults: ``500``, ``503``, ``429`` (with ``retry_after``
seconds, or none), ``slow`` (``delay`` seconds before answering), ``reset`` (headers and half
the body, then the connection is reset), ``truncated`` (a complete HTTP answer whose JSON is
cut), ``invalid_json``, ``wrong_dim``, ``nan``, ``zero``, ``count`` (one item short),
``shuffle`` (items reordered, indexes right: valid), ``bad_index`` (two items claim one index),
``swap_model`` (a different model: every vector reversed, until switched off).
``--key-env NAME`` makes the server demand ``Authorization: Bearer $NAME``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class State:
    def __init__(self, encoder: Any, workers: int, key: str | None, model_name: str) -> None:
        self.encoder = encoder
        self.slots = threading.Semaphore(workers)
        self.key = key
        self.model_name = model_name
        self.lock = threading.Lock()
        self.fault: str | None = None
        self.fault_left = 0
        self.fault_args: dict[str, Any] = {}
        self.fault_after = 0  # requests served normally before the fault starts
        self.requests = 0
        self.inputs = 0
        self.faults_served = 0
        self.active = 0
        self.max_active = 0
        self.busy_s = 0.0
        self.swap = False

    def take_fault(self) -> tuple[str | None, dict[str, Any]]:
        with self.lock:
            if self.fault is None or self.fault_left == 0:
                return None, {}
            if self.fault_after > 0:
                self.fault_after -= 1
                return None, {}
            if self.fault_left > 0:
                self.fault_left -= 1
            self.faults_served += 1
            return self.fault, dict(self.fault_args)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    server: Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read stdout
        pass

    def _send_json(self, status: int, doc: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        state = self.server.state
        if self.path == "/_stats":
            with state.lock:
                doc = {
                    "requests": state.requests,
                    "inputs": state.inputs,
                    "faults_served": state.faults_served,
                    "max_active": state.max_active,
                    "busy_s": state.busy_s,
                }
            self._send_json(200, doc)
        else:
            self._send_json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path == "/_control":
            doc = json.loads(raw or b"{}")
            with state.lock:
                state.fault = doc.get("fault")
                state.fault_left = int(doc.get("count", -1))
                state.fault_args = doc
                state.fault_after = int(doc.get("after", 0))
                if state.fault == "swap_model":
                    state.swap = True
                elif state.fault is None:
                    state.swap = False
            self._send_json(200, {"ok": True})
            return
        if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        if state.key is not None and self.headers.get("Authorization") != f"Bearer {state.key}":
            self._send_json(401, {"error": {"message": "invalid api key"}})
            return
        try:
            doc = json.loads(raw)
            inputs = doc["input"]
            if isinstance(inputs, str):
                inputs = [inputs]
            assert isinstance(inputs, list) and all(isinstance(t, str) for t in inputs)
        except (ValueError, KeyError, AssertionError):
            self._send_json(400, {"error": {"message": "expected {'model': str, 'input': [str]}"}})
            return
        fault, args = state.take_fault()
        if fault in ("500", "503", "429"):
            headers = {}
            if args.get("retry_after") is not None:
                headers["Retry-After"] = str(args["retry_after"])
            self._send_json(int(fault), {"error": {"message": f"injected {fault}"}}, headers)
            return
        if fault == "slow":
            time.sleep(float(args.get("delay", 5)))
        if fault == "invalid_json":
            body = b"<html>502 Bad Gateway</html>"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        with state.lock:
            state.active += 1
            state.max_active = max(state.max_active, state.active)
        try:
            with state.slots:
                started = time.perf_counter()
                vectors = state.encoder.embed_documents(inputs)
                with state.lock:
                    state.busy_s += time.perf_counter() - started
        finally:
            with state.lock:
                state.active -= 1
        if state.swap:
            vectors = vectors[:, ::-1]
        dims = doc.get("dimensions")
        if isinstance(dims, int) and 0 < dims < vectors.shape[1]:
            vectors = vectors[:, :dims]
        rows: list[list[float]] = [v.tolist() for v in vectors]
        items = [{"object": "embedding", "index": i, "embedding": r} for i, r in enumerate(rows)]
        if fault == "wrong_dim":
            items[-1]["embedding"] = rows[-1][:-1]
        elif fault == "nan":
            items[0]["embedding"] = [float("nan")] * len(rows[0])
        elif fault == "zero":
            items[-1]["embedding"] = [0.0] * len(rows[-1])
        elif fault == "count":
            items = items[:-1] if len(items) > 1 else []
        elif fault == "shuffle":
            items = items[::-1]
        elif fault == "bad_index" and len(items) > 1:
            items[1]["index"] = 0
        with state.lock:
            state.requests += 1
            state.inputs += len(inputs)
        answer = {
            "object": "list",
            "data": items,
            "model": doc.get("model", state.model_name),
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }
        body = json.dumps(answer, allow_nan=True).encode()
        if fault == "truncated":
            body = body[: len(body) // 2]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) if fault != "reset" else len(body) * 2))
        self.end_headers()
        if fault == "reset":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            # SO_LINGER 0: close() sends RST, a reset mid-answer as a crashing server gives.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    state: State


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="batches computed at once")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads per batch")
    parser.add_argument("--key-env", default=None, help="demand the key held by this variable")
    parser.add_argument("--model-name", default="kenning-test-minilm")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from kenning.embedding import Encoder

    encoder = Encoder.load(threads=args.threads)
    key = os.environ[args.key_env] if args.key_env else None
    server = Server(("127.0.0.1", args.port), Handler)
    server.state = State(encoder, args.workers, key, args.model_name)
    print(f"listening on {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
