"""Runs of ``python -m bench.multilang --json`` compared, before and after a change: per
language and sample, descriptive hybrid MRR@10 ``before → after (+up / −down)`` (queries whose
reciprocal rank rose or fell, matched by query and target), the Go + Rust + TypeScript group and
the lowest identifier MRR@10: the table docs/performance.md publishes for each change (issue 14).

    python -m bench.compare --sample "dev stripped" before_s.json after_s.json \\
        --sample documented before_d.json after_d.json

A language missing from either run of a sample reads "—" there.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.multilang import LABELS, group_scores, measured

GROUP = "Go + Rust + TypeScript"
Run = dict[str, Any]  # what `bench.multilang --json` writes


def _reciprocal(rank: int | None) -> float:
    return 1.0 / rank if rank else 0.0


def moved(before: dict[str, Any], after: dict[str, Any], kind: str = "descriptive") -> tuple[int, int]:
    """How many of one language's queries rank higher and lower after than before (queries only
    one run asked are not counted)."""
    ranks = {(q["query"], q["path"]): q["kenning"] for q in before["per_query"][kind]}
    up = down = 0
    for q in after["per_query"][kind]:
        key = (q["query"], q["path"])
        if key not in ranks:
            continue
        old, new = _reciprocal(ranks[key]), _reciprocal(q["kenning"])
        up += new > old
        down += new < old
    return up, down


def _mrr(v: dict[str, Any], kind: str) -> float:
    return float(v["kenning"][kind]["hybrid"]["mrr@10"])


def _group(run: Run) -> float | None:
    found = [g for g in group_scores(run) if g["group"] == GROUP and not g["missing"]]
    return float(found[0]["mrr@10"]["descriptive"]) if found else None


def _lowest_identifier(run: Run) -> float | None:
    scores = [_mrr(v, "identifier") for v in measured(run).values() if v["queries"]["identifier"]]
    return min(scores) if scores else None


def _pair(before: float | None, after: float | None, bold: bool = False) -> str:
    if before is None or after is None:
        return "—"
    return f"{before:.3f} → **{after:.3f}**" if bold else f"{before:.3f} → {after:.3f}"


def table(samples: Sequence[tuple[str, Run, Run]]) -> str:
    """The Markdown table of ``(sample label, before, after)`` runs, one column per sample."""
    # Each sample's measured languages, before and after, read once.
    pairs = [(measured(before), measured(after)) for _, before, after in samples]
    langs: list[str] = []
    for before_langs, after_langs in pairs:
        langs += [lang for lang in after_langs if lang in before_langs and lang not in langs]
    lines = [
        "| language | " + " | ".join(label for label, _, _ in samples) + " |",
        "|---|" + "---|" * len(samples),
    ]
    for lang in langs:
        cells = []
        for before_langs, after_langs in pairs:
            b, a = before_langs.get(lang), after_langs.get(lang)
            if b is None or a is None or not a["queries"]["descriptive"]:
                cells.append("—")
                continue
            up, down = moved(b, a)
            cells.append(f"{_mrr(b, 'descriptive'):.3f} → {_mrr(a, 'descriptive'):.3f} (+{up} / −{down})")
        lines.append(f"| {LABELS.get(lang, lang)} | " + " | ".join(cells) + " |")
    group = [_pair(_group(before), _group(after), bold=True) for _, before, after in samples]
    lowest = [_pair(_lowest_identifier(before), _lowest_identifier(after)) for _, before, after in samples]
    lines.append(f"| **{GROUP}** | " + " | ".join(group) + " |")
    lines.append("| lowest identifier MRR@10 | " + " | ".join(lowest) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sample",
        nargs=3,
        action="append",
        required=True,
        metavar=("LABEL", "BEFORE_JSON", "AFTER_JSON"),
        help="one column: its label and the two runs' --json files",
    )
    args = parser.parse_args(argv)
    samples = [
        (label, json.loads(Path(before).read_text("utf-8")), json.loads(Path(after).read_text("utf-8")))
        for label, before, after in args.sample
    ]
    print(table(samples))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
