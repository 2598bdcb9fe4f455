"""The language server's side of the shared cache: ``kenning/indexStatus`` carries where the
vectors came from and the shared cache's size and cap, and the settings reach the indexer."""

from __future__ import annotations

import shutil
from pathlib import Path

from bench.lspclient import RawServer


def _ready(server: RawServer, root: Path) -> dict:  # type: ignore[type-arg]
    note = server.wait_notification(
        lambda n: (
            n.get("method") == "kenning/indexStatus"
            and n["params"]["state"] == "ready"
            and n["params"]["folder"] == root.as_uri()
        ),
        timeout=180,
    )
    return note["params"]  # type: ignore[no-any-return]


def _serve(root: Path, options: dict) -> dict:  # type: ignore[type-arg]
    server = RawServer(cwd=root)
    try:
        server.initialize(root, options)
        return _ready(server, root)
    finally:
        server.call("shutdown", None)
        server.notify("exit", None)
        server.proc.wait(30)


def test_index_status_reports_origins_and_the_shared_cache(workspace: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy)
    first = _serve(workspace, {})
    n = first["origin"]["computed"]
    assert n > 5 and first["origin"] == {"computed": n, "store": 0, "sharedCache": 0, "pack": 0}
    assert first["sharedCache"]["enabled"] is True
    assert first["sharedCache"]["bytes"] > 0 and first["sharedCache"]["maxBytes"] == 2 * 1024**3

    second = _serve(copy, {"sharedCacheMaxSize": "512M"})
    assert second["origin"] == {"computed": 0, "store": 0, "sharedCache": n, "pack": 0}
    assert second["sharedCache"]["maxBytes"] == 512 * 1024**2
    assert second["embedded"] == second["chunks"]


def test_the_shared_cache_setting_turns_it_off(workspace: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy)
    _serve(workspace, {})
    off = _serve(copy, {"sharedCache": False})
    assert off["sharedCache"]["enabled"] is False
    assert off["origin"]["sharedCache"] == 0 and off["origin"]["computed"] == off["chunks"]


def test_settings_are_checked_and_reach_the_config(tmp_path: Path) -> None:
    from kenning.lsp.options import parse_options

    options, problems = parse_options(
        {"sharedCache": False, "sharedCacheMaxSize": "1G", "importPack": "ci/main.kpack"}
    )
    assert problems == []
    config = options.config_for(tmp_path, several_folders=False)
    assert config.shared_cache is False and config.shared_cache_max == 1024**3
    assert config.import_pack == "ci/main.kpack"
    options, problems = parse_options({"sharedCache": "yes", "sharedCacheMaxSize": "lots"})
    assert len(problems) == 2
    assert any("sharedCache must be true or false" in p for p in problems)
    assert any("sharedCacheMaxSize must be a size" in p for p in problems)
    config = options.config_for(tmp_path, several_folders=False)
    assert config.shared_cache is True and config.shared_cache_max is None
