"""Reading one file safely: decoding that never fails, line endings, binary and generated files,
files that change, vanish or cannot be read between discovery and the read."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from kenning.workspace import (
    SkipReason,
    SourceText,
    discover,
    read_source,
)
from tests.workspace_helpers import (
    _isolated_git,  # noqa: F401 (an autouse fixture: imported, it applies here)
    paths,
    write,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


# -- reading ---------------------------------------------------------------------------------


def read(tmp_path: Path, content: bytes, **kwargs: int) -> SourceText | SkipReason:
    return read_source(write(tmp_path, "f.txt", content), **kwargs)


def test_read_plain_utf8(tmp_path: Path) -> None:
    data = "def café():\n    return 1\n".encode()
    got = read(tmp_path, data)
    assert isinstance(got, SourceText)
    assert got.text == "def café():\n    return 1\n"
    assert got.encoding == "utf-8" and got.replaced == 0
    assert got.content_hash == hashlib.blake2b(data, digest_size=16).hexdigest()
    assert got.size == len(data)
    assert got.mtime_ns == (tmp_path / "f.txt").stat().st_mtime_ns


def test_line_endings_match_the_editor(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbfa\r\nb\rc\n"
    got = read(tmp_path, data)
    assert isinstance(got, SourceText)
    assert got.text == "a\nb\nc\n"
    assert got.text.split("\n") == ["a", "b", "c", ""]
    assert got.encoding == "utf-8-sig"
    assert got.content_hash == hashlib.blake2b(data, digest_size=16).hexdigest()  # BOM included


@pytest.mark.parametrize(("bom_codec", "name"), [("utf-16", "utf-16-le"), ("utf-16-be", "utf-16-be")])
def test_utf16_with_bom_is_text(tmp_path: Path, bom_codec: str, name: str) -> None:
    text = "print('héllo')\r\nx = '日本'\n"
    data = text.encode(bom_codec) if bom_codec == "utf-16" else b"\xfe\xff" + text.encode(bom_codec)
    got = read(tmp_path, data)
    assert isinstance(got, SourceText)
    assert got.text == "print('héllo')\nx = '日本'\n"
    assert got.encoding == name


def test_binary_is_skipped(tmp_path: Path) -> None:
    assert read(tmp_path, b"import os\n\x00\x01\x02") is SkipReason.BINARY
    assert read(tmp_path, b"\xff\xfe" + b"\x00\x00" * 8) is SkipReason.BINARY  # BOM, then NULs
    noise = random.Random(1).randbytes(4096).replace(b"\xff", b"").replace(b"\xfe", b"")
    assert read(tmp_path, noise + b"\x00") is SkipReason.BINARY


def test_latin1_and_shift_jis_are_decoded_with_replacements(tmp_path: Path) -> None:
    latin = "# café naïve\nx = 1\n".encode("latin-1")
    got = read(tmp_path, latin)
    assert isinstance(got, SourceText)
    assert got.text == latin.decode("utf-8", "replace")
    assert got.replaced == 2 and got.encoding == "utf-8 (replaced)"
    assert got.text.split("\n")[1] == "x = 1"

    sjis = "# 日本語のコメント\nprint(1)\n".encode("shift_jis")
    got = read(tmp_path, sjis)
    assert isinstance(got, SourceText)
    assert got.text == sjis.decode("utf-8", "replace")
    assert got.replaced > 0
    assert got.text.split("\n")[1:] == ["print(1)", ""]  # line numbers still match

    got = read(tmp_path, b"ok\xff\xfe\xe3\x81x")  # two lone bytes, one truncated sequence
    assert isinstance(got, SourceText)
    assert got.text == "ok\ufffd\ufffd\ufffdx" and got.replaced == 4


def test_generated_files(tmp_path: Path) -> None:
    minified = b"var a=1;" * 400_000  # 3.2 MB on one line
    assert read(tmp_path, minified, max_file_size=10_000_000) is SkipReason.GENERATED
    one_long_line = b"x = 1\n" * 2000 + b"y = '" + b"z" * 25_000 + b"'\n"
    assert read(tmp_path, one_long_line) is SkipReason.GENERATED
    normal = b"x = 1\n" * 2000
    assert isinstance(read(tmp_path, normal), SourceText)
    # CR-only line endings are lines too: not one giant line.
    assert isinstance(read(tmp_path, b"x = 1\r" * 5000), SourceText)
    # Lines just under the limit, among enough short ones to keep the average low, are read
    # line by line (a `[^\n]{20001}` search restarted at each of their characters: 3.7 s).
    under = (b"s = '" + b"z" * 19_990 + b"'\n") * 20 + b"x\n" * 400_000
    assert isinstance(read(tmp_path, under), SourceText)


def test_50mb_single_line_is_skipped_in_milliseconds(tmp_path: Path) -> None:
    with open(tmp_path / "bundle.min.js", "wb") as f:
        chunk = b"a" * (1 << 20)
        for _ in range(50):
            f.write(chunk)
    started = time.perf_counter()
    found = discover(tmp_path)
    got = read_source(tmp_path / "bundle.min.js")
    elapsed = time.perf_counter() - started
    assert found.skipped == {"bundle.min.js": SkipReason.TOO_LARGE}
    assert got is SkipReason.TOO_LARGE
    assert elapsed < 0.5  # milliseconds in practice; nothing is read


def test_file_deleted_between_discover_and_read(tmp_path: Path) -> None:
    write(tmp_path, "a.py")
    (entry,) = discover(tmp_path).files
    (tmp_path / "a.py").unlink()
    assert read_source(entry) is SkipReason.VANISHED
    assert read_source(tmp_path / "a.py" / "x") is SkipReason.VANISHED  # parent is not a dir
    (tmp_path / "loop").symlink_to("loop")
    assert read_source(tmp_path / "loop") is SkipReason.BROKEN_LINK


def test_file_changed_between_stat_and_read(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", "old = 1\n")
    (entry,) = discover(tmp_path).files
    path.write_text("new = 2  # longer now\n")
    os.utime(path, ns=(entry.mtime_ns + 5_000_000_000, entry.mtime_ns + 5_000_000_000))
    got = read_source(entry)
    assert isinstance(got, SourceText)
    assert got.text == "new = 2  # longer now\n"
    assert got.content_hash == hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    assert (got.size, got.mtime_ns) == (path.stat().st_size, path.stat().st_mtime_ns)
    assert (got.size, got.mtime_ns) != (entry.size, entry.mtime_ns)


def test_file_grown_past_the_cap_after_discovery(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", "x = 1\n")
    (entry,) = discover(tmp_path, max_file_size=100).files
    path.write_text("x = 1\n" * 100)
    assert read_source(entry, max_file_size=100) is SkipReason.TOO_LARGE


def _as_nobody(func) -> object:  # type: ignore[no-untyped-def]
    """Run ``func`` in a forked child that has dropped root, and return what it returned."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            result = repr(func())
        except BaseException as exc:  # report anything to the parent
            result = f"error: {exc!r}"
        os.write(write_end, result.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as f:
        out = f.read()
    os.waitpid(pid, 0)
    return out


def test_unreadable_file_and_directory() -> None:
    # pytest's temporary directories are private to root; this one must be traversable by all.
    base = Path(tempfile.mkdtemp(prefix="kenning-perm-"))
    try:
        base.chmod(0o755)
        write(base, "ok.py")
        secret = write(base, "secret.py")
        write(base, "locked/inner.py")
        secret.chmod(0o000)
        (base / "locked").chmod(0o000)
        if os.geteuid() == 0:
            # Root reads anything: drop to "nobody" in a child to hit real permission errors.
            assert _as_nobody(lambda: read_source(secret)) == repr(SkipReason.UNREADABLE)
            listed = _as_nobody(lambda: (sorted(paths(found := discover(base))), found.method))
            assert listed == repr((["ok.py", "secret.py"], "walk"))  # the locked dir is left out
        else:
            assert read_source(secret) is SkipReason.UNREADABLE
            assert paths(discover(base)) == {"ok.py", "secret.py"}
    finally:
        (base / "locked").chmod(0o755)
        shutil.rmtree(base)
