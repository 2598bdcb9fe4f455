"""The encoder tests' shared material: real code paired with what a user would type, and the
encoders they run (the real packaged model, original and optimised graphs).

Every test uses a private ``KENNING_CACHE_DIR``, so nothing here reads or writes the user's
cache; the optimised graph is built once for the package (a few seconds) and reused.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kenning.embedding import Encoder, resolve_model

# Real code from the kind of project kenning indexes, paired with what a user would type.
CODE = {
    "read_text": "def read_text(path):\n    with open(path, encoding='utf-8') as fh:\n"
    "        return fh.read()",
    "sqrt": "def newton_sqrt(x, eps=1e-9):\n    guess = x / 2\n    while abs(guess * guess - x)"
    " > eps:\n        guess = (guess + x / guess) / 2\n    return guess",
    "retry": "def retry(fn, attempts=5, delay=0.5):\n    for i in range(attempts):\n        try:\n"
    "            return fn()\n        except ConnectionError:\n            time.sleep(delay * 2 ** i)"
    "\n    raise RuntimeError('gave up')",
    "parse_json": "def load_settings(path):\n    data = json.loads(Path(path).read_text())\n"
    "    return Settings(**data)",
    "http_get": "async def fetch(session, url):\n    async with session.get(url) as resp:\n"
    "        resp.raise_for_status()\n        return await resp.text()",
    "sort_users": "users.sort(key=lambda u: (u.last_name.lower(), u.first_name.lower()))",
    "sql_dupes": "SELECT email, COUNT(*) FROM accounts GROUP BY email HAVING COUNT(*) > 1",
    "debounce": "function debounce(fn, ms) {\n  let timer;\n  return (...args) => {\n"
    "    clearTimeout(timer);\n    timer = setTimeout(() => fn(...args), ms);\n  };\n}",
    "md5_file": "def file_md5(path):\n    h = hashlib.md5()\n    with open(path, 'rb') as f:\n"
    "        for block in iter(lambda: f.read(65536), b''):\n            h.update(block)\n"
    "    return h.hexdigest()",
    "lru": "class LRU:\n    def __init__(self, size):\n        self.size = size\n"
    "        self.data = OrderedDict()\n    def get(self, key):\n"
    "        self.data.move_to_end(key)\n        return self.data[key]",
    "walk_py": "for root, dirs, files in os.walk(top):\n    for name in files:\n"
    "        if name.endswith('.py'):\n            yield os.path.join(root, name)",
    "send_mail": "def send_mail(to, subject, body):\n    msg = EmailMessage()\n"
    "    msg['To'] = to\n    msg['Subject'] = subject\n    msg.set_content(body)\n"
    "    with smtplib.SMTP('localhost') as s:\n        s.send_message(msg)",
}


QUERIES = {
    "read_text": "read the contents of a text file",
    "sqrt": "compute the square root iteratively",
    "retry": "retry a call with exponential backoff",
    "parse_json": "load settings from a json file",
    "http_get": "download a web page asynchronously",
    "sort_users": "sort people by surname",
    "sql_dupes": "find duplicate email addresses in the database",
    "debounce": "delay calling a function until input stops",
    "md5_file": "hash a file in chunks",
    "lru": "least recently used cache",
    "walk_py": "list all python files in a directory tree",
    "send_mail": "send an email message",
}


def packaged_source() -> bytes:
    """The bytes the default encoder runs: the packaged model file with its code-tuned layer."""
    from kenning.embedding.encoder import patched_model

    spec = resolve_model(None)
    source, _ = patched_model(spec.onnx_path.read_bytes(), spec)
    return source


@pytest.fixture(scope="package")
def cache_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("kenning-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KENNING_CACHE_DIR", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root


@pytest.fixture(scope="package")
def original(cache_root: Path) -> Encoder:
    return Encoder.load(variant="original", threads=2)


@pytest.fixture(scope="package")
def optimized(cache_root: Path) -> Encoder:
    encoder = Encoder.load(variant="optimized", threads=2)
    assert encoder.variant == "optimized"
    return encoder


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("KENNING_CACHE_DIR", str(root))
    return root


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    """A user model directory holding copies of the default model's files."""
    spec = resolve_model(None)
    directory = tmp_path / "my-model"
    directory.mkdir()
    shutil.copy(spec.onnx_path, directory / "model.onnx")
    shutil.copy(spec.tokenizer_path, directory / "tokenizer.json")
    (directory / "kenning-model.json").write_text(json.dumps({"id": "my-minilm"}))
    return directory


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def varied_texts() -> list[str]:
    rng = np.random.default_rng(7)
    words = " ".join(CODE.values()).split()
    texts = [" ".join(rng.choice(words, size=int(n))) for n in rng.integers(1, 90, size=22)]
    return [*texts, "", "x"]
