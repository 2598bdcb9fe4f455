"""Initialization options and the ``kenning`` configuration section, typed with defaults.

Every key is optional, unknown keys are ignored, and a bad value is replaced by its default with a
warning for the user — a typo in a settings file must never stop the server from starting.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning.config import DEFAULT_MAX_FILE_SIZE, Config
from kenning.embedding.endpoint_config import EndpointSettings, parse_endpoint_settings

LOG_LEVELS = ("error", "warning", "info", "debug")


@dataclass(frozen=True, slots=True)
class Options:
    store_path: str | None = None
    model: str | None = None
    exclude: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    embed_threads: int = 0
    index_on_startup: bool = True
    max_results: int = 20
    symbol_limit: int = 200
    log_level: str = "info"
    embedding: EndpointSettings | None = None  # the `embedding` object: an OpenAI-compatible server
    shared_cache: bool = True
    shared_cache_max_size: str | int | None = None  # "2G", bytes, or None: $KENNING_CACHE_MAX / 2 GiB
    import_pack: str | None = None

    def config_for(self, folder: Path, *, several_folders: bool) -> Config:
        store: Path | None = None
        if self.store_path:
            # A relative path stays relative: Config joins it to the folder, and the store
            # refuses it if it resolves outside (store.location).
            base = Path(self.store_path).expanduser()
            if several_folders:
                import hashlib

                digest = hashlib.blake2b(str(folder).encode(), digest_size=4).hexdigest()
                base = base / f"{folder.name}-{digest}"
            store = base
        return Config(
            store=store,
            model=self.model,
            exclude=self.exclude,
            max_file_size=self.max_file_size,
            embed_threads=self.embed_threads,
            embedding=self.embedding,
            shared_cache=self.shared_cache,
            shared_cache_max=_size_or_none(self.shared_cache_max_size),
            import_pack=self.import_pack,
        )


def _size_or_none(v: str | int | None) -> int | None:
    from kenning.embedding.shared import parse_size

    if v is None:
        return None
    try:
        return parse_size(v)
    except ValueError:
        return None  # rejected with a message by parse_options; never reached with a bad value


def _is_size(v: Any) -> bool:
    from kenning.embedding.shared import MIN_MAX_BYTES, parse_size

    if v is None:
        return True
    if isinstance(v, bool) or not isinstance(v, int | str):
        return False
    try:
        return parse_size(v) >= MIN_MAX_BYTES
    except ValueError:
        return False


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# wire key -> (field, check, what a valid value is)
_FIELDS: dict[str, tuple[str, Any, str]] = {
    "storePath": ("store_path", lambda v: v is None or isinstance(v, str), "a string or null"),
    "model": ("model", lambda v: v is None or isinstance(v, str), "a string or null"),
    "exclude": (
        "exclude",
        lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
        "an array of strings",
    ),
    "maxFileSize": ("max_file_size", lambda v: _is_int(v) and v >= 1024, "an integer ≥ 1024"),
    "embedThreads": ("embed_threads", lambda v: _is_int(v) and 0 <= v <= 256, "an integer ≥ 0"),
    "indexOnStartup": ("index_on_startup", lambda v: isinstance(v, bool), "true or false"),
    "maxResults": ("max_results", lambda v: _is_int(v) and 1 <= v <= 200, "an integer 1–200"),
    "symbolLimit": ("symbol_limit", lambda v: _is_int(v) and 1 <= v <= 10000, "an integer 1–10000"),
    "logLevel": ("log_level", lambda v: v in LOG_LEVELS, "one of " + ", ".join(LOG_LEVELS)),
    "sharedCache": ("shared_cache", lambda v: isinstance(v, bool), "true or false"),
    "sharedCacheMaxSize": ("shared_cache_max_size", _is_size, 'a size such as "2G" (at least 1M), or null'),
    "importPack": ("import_pack", lambda v: v is None or isinstance(v, str), "a string or null"),
}


def parse_options(raw: Any, base: Options | None = None) -> tuple[Options, list[str]]:
    """Options from a JSON value, and one message per rejected value (replaced by its default)."""
    base = base or Options()
    if raw is None:
        return base, []
    if not isinstance(raw, dict):
        return base, [f"kenning: settings must be an object, not {type(raw).__name__}; using defaults"]
    changes: dict[str, Any] = {}
    problems: list[str] = []
    defaults = Options()
    for key, (name, check, wanted) in _FIELDS.items():
        if key not in raw:
            continue
        value = raw[key]
        if value is None and key not in ("storePath", "model", "sharedCacheMaxSize", "importPack"):
            continue
        if check(value):
            changes[name] = tuple(value) if isinstance(value, list) else value
        else:
            problems.append(
                f"kenning: setting {key} must be {wanted}, not {value!r}; using {getattr(defaults, name)!r}"
            )
            changes[name] = getattr(defaults, name)
    if "embedding" in raw:
        # One object, parsed as the CLI's --embed-* flags are; a bad url/model/keyEnv means the
        # local model (code goes nowhere the user did not clearly name).
        embedding, embed_problems = parse_endpoint_settings(raw["embedding"])
        changes["embedding"] = embedding
        problems.extend(f"kenning: setting {p}" for p in embed_problems)
    return dataclasses.replace(base, **changes), problems
