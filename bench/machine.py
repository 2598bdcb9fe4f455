"""What the numbers were measured on: CPU, cores, SIMD flags, memory, load, library versions."""

from __future__ import annotations

import datetime
import os
import platform
import sqlite3
import sys
from importlib import metadata
from typing import Any

# The flags that decide how fast int8 inference, HNSW distances and numpy run.
_INTERESTING_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "amx_int8",
    "amx_bf16",
)


def _cpuinfo() -> dict[str, str]:
    info: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                info[key.strip()] = value.strip()
    except OSError:
        pass
    return info


def _mem_total_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def describe() -> dict[str, Any]:
    cpu = _cpuinfo()
    flags = set(cpu.get("flags", "").split())
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu.get("model name", platform.processor() or "unknown"),
        "cpu_family_model": f"family {cpu.get('cpu family', '?')}, model {cpu.get('model', '?')}",
        "cores": os.cpu_count() or 0,
        "flags": [f for f in _INTERESTING_FLAGS if f in flags],
        "memory_gib": _mem_total_gib(),
        "load_at_start": load,
        "os": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "versions": {
            name: _version(name)
            for name in ("onnxruntime", "usearch", "numpy", "tokenizers", "pygls", "tree-sitter")
        },
    }


def load_now() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
