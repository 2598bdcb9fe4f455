"""The settings of an OpenAI-compatible embedding endpoint, and their one parser.

Owns :class:`EndpointSettings` and :func:`parse_endpoint_settings`. The same ``embedding``
object arrives from the command line (``--embed-*``), ``initializationOptions``,
``workspace/configuration``, VS Code and Neovim; each is turned into the camelCase wire shape
and parsed here, so every interface accepts and rejects the same values with the same words.

The API key is never a setting: ``keyEnv`` names the environment variable that holds it, and
messages about it never repeat the value the user typed (it might be the key itself).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from kenning.types import KenningError

__all__ = [
    "DEFAULT_MAX_CHARS",
    "EndpointSettings",
    "SettingsError",
    "is_loopback_host",
    "parse_endpoint_settings",
]

#: Characters of one input sent at most. Servers reject inputs longer than their context
#: (TEI at 512 tokens unless started with --auto-truncate, OpenAI at 8191); code runs about
#: three characters a token, so 4000 fits a 2k-token context with room for a prefix.
DEFAULT_MAX_CHARS = 4000
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class SettingsError(KenningError, ValueError):
    """An endpoint setting is invalid; the message names the field."""


@dataclass(frozen=True, slots=True)
class EndpointSettings:
    """Where and how to embed through an OpenAI-compatible ``/v1/embeddings`` server."""

    url: str  # the base URL, e.g. http://127.0.0.1:8080/v1 (POSTs go to <url>/embeddings)
    model: str  # the model name the server knows; part of the store's model identity
    key_env: str | None = None  # the NAME of the environment variable holding the API key
    dimensions: int | None = None  # asked for and checked; None: whatever the model returns
    query_prefix: str = ""  # E5: "query: ", Nomic: "search_query: ", BGE: "Represent this ..."
    document_prefix: str = ""  # E5: "passage: ", Nomic: "search_document: "
    max_chars: int = DEFAULT_MAX_CHARS  # each input is cut here before it is sent
    batch_size: int = 32  # inputs per request
    in_flight: int = 4  # requests outstanding at once while indexing
    timeout: float = 60.0  # seconds for one indexing request (connect + answer)
    query_timeout: float = 3.0  # seconds for a query's embedding; then lexical results
    retries: int = 4  # retries of one request (with backoff and jitter) before an outage

    @property
    def endpoint(self) -> str:
        """The URL requests are POSTed to."""
        return self.url.rstrip("/") + "/embeddings"

    @property
    def receiver(self) -> str:
        """``scheme://host[:port]``: who receives the code (no path, no credentials)."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}"

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def cleartext_remote(self) -> bool:
        """``http://`` to a host that is not this machine: code travels unencrypted."""
        return urlsplit(self.url).scheme == "http" and not is_loopback_host(self.host)


def is_loopback_host(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain") or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _int_in(lo: int, hi: int) -> tuple[Any, str]:
    return (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi
    ), f"an integer {lo}–{hi}"


def _number_in(lo: float, hi: float) -> tuple[Any, str]:
    return (
        lambda v: isinstance(v, int | float) and not isinstance(v, bool) and lo <= v <= hi,
        f"a number of seconds {lo:g}–{hi:g}",
    )


# wire key -> (field, check, what a valid value is)
_FIELDS: dict[str, tuple[str, Any, str]] = {
    "dimensions": ("dimensions", *_int_in(1, 65536)),
    "queryPrefix": ("query_prefix", lambda v: isinstance(v, str) and len(v) <= 1000, "a string"),
    "documentPrefix": ("document_prefix", lambda v: isinstance(v, str) and len(v) <= 1000, "a string"),
    "maxChars": ("max_chars", *_int_in(16, 1_000_000)),
    "batchSize": ("batch_size", *_int_in(1, 2048)),
    "inFlight": ("in_flight", *_int_in(1, 64)),
    "timeout": ("timeout", *_number_in(0.1, 3600)),
    "queryTimeout": ("query_timeout", *_number_in(0.1, 60)),
    "retries": ("retries", *_int_in(0, 20)),
}
WIRE_KEYS = ("url", "model", "keyEnv", *_FIELDS)


def parse_endpoint_settings(raw: Any, *, strict: bool = False) -> tuple[EndpointSettings | None, list[str]]:
    """Settings from the wire object ``{"url": ..., "model": ..., ...}``.

    Returns (settings or None, problems). Without ``url`` (or with an empty one) there is no
    endpoint: the local model is used. A bad optional value is replaced by its default with a
    problem; a bad ``url``, ``model`` or ``keyEnv`` means no endpoint (code is sent nowhere
    the user did not mean). With ``strict`` the first problem raises :class:`SettingsError`.
    """
    problems: list[str] = []

    def problem(text: str) -> None:
        if strict:
            raise SettingsError(text)
        problems.append(text)

    if raw is None:
        return None, problems
    if not isinstance(raw, dict):
        problem(f"embedding must be an object, not {type(raw).__name__}; using the local model")
        return None, problems
    url = raw.get("url")
    if url is None or (isinstance(url, str) and not url.strip()):
        extra = sorted(k for k, v in raw.items() if v not in (None, "") and k in WIRE_KEYS)
        if extra:
            problem(f"embedding.url is not set, so embedding.{extra[0]} has no effect; using the local model")
        return None, problems
    if not isinstance(url, str):
        problem(f"embedding.url must be a string, not {type(url).__name__}; using the local model")
        return None, problems
    url_problem = _check_url(url.strip())
    if url_problem:
        problem(f"embedding.url {url_problem}; using the local model")
        return None, problems
    model = raw.get("model")
    if not isinstance(model, str) or not model.strip():
        problem(
            "embedding.model must name the model the server serves (e.g. nomic-embed-text);"
            " using the local model"
        )
        return None, problems
    key_env = raw.get("keyEnv")
    if key_env in ("", None):
        key_env = None
    elif not isinstance(key_env, str) or not _ENV_NAME.match(key_env):
        # Never echo the value: a user who pasted the key itself here must not see it logged.
        problem(
            "embedding.keyEnv must be the NAME of an environment variable holding the key"
            " (letters, digits, _), not the key itself; using the local model"
        )
        return None, problems
    values: dict[str, Any] = {}
    defaults = EndpointSettings(url="", model="")
    for key, (name, check, wanted) in _FIELDS.items():
        value = raw.get(key)
        if value is None:
            continue
        if check(value):
            values[name] = float(value) if name.endswith("timeout") else value
        else:
            problem(f"embedding.{key} must be {wanted}, not {value!r}; using {getattr(defaults, name)!r}")
    return EndpointSettings(
        url=_base_url(url.strip()), model=model.strip(), key_env=key_env, **values
    ), problems


def _check_url(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "must start with http:// or https://"
    if not parts.hostname:
        return "has no host"
    if parts.username is not None or parts.password is not None:
        return "must not hold credentials; name an environment variable in embedding.keyEnv instead"
    if parts.query or parts.fragment:
        return "must not have a query or fragment"
    return None


def _base_url(url: str) -> str:
    """Accept the full ``.../embeddings`` URL too, as users copy it from server docs."""
    url = url.rstrip("/")
    return url[: -len("/embeddings")] if url.endswith("/embeddings") else url
