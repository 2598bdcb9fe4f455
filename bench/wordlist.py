"""Build ``server/kenning/data/words.txt.gz``, the dictionary ``kenning.compounds`` splits names with.

``python -m bench.wordlist`` (needs Debian's ``wamerican-small``, ``wamerican`` and
``wamerican-large``: ``apt-get install wamerican-small wamerican wamerican-large``).

The words are SCOWL's American English lists at sizes 35, 50 and 70 (the three packages), lower
case and ASCII letters only: proper nouns and possessives are left out. They are ranked by how
common they are. First come the words that all-MiniLM-L6-v2's tokenizer keeps whole, in its
vocabulary's order, which follows their frequency in its training text. Then come the rest of
size 35, then of size 50, and each of those tiers is alphabetical. The header line ``# parts N``
says how many leading words may be parts of a split name: the common ones, not size 70's rare
words ("erat", "ode"). Every listed word is kept whole when a name is exactly that word.

SCOWL's copyright notice, which its licence asks to travel with the list, is in
``server/kenning/data/WORDS-LICENSE``.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

from kenning.embedding.model import default_tokenizer_path

DICT_DIR = Path("/usr/share/dict")
# SCOWL sizes 35, 50 and 70, as Debian ships them.
TIERS = ("american-english-small", "american-english", "american-english-large")
OUT = Path(__file__).resolve().parents[1] / "server" / "kenning" / "data" / "words.txt.gz"


def _words(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    return [w for w in text.split("\n") if w.isascii() and w.isalpha() and w.islower()]


def ranked_words(tiers: list[list[str]], tokenizer_vocab: dict[str, int]) -> tuple[list[str], int]:
    """(every word, most common first; how many lead the list as possible parts)."""
    known = {w for tier in tiers for w in tier}
    order: dict[str, None] = {}  # insertion-ordered, each word once
    for word, _ in sorted(tokenizer_vocab.items(), key=lambda kv: kv[1]):
        if word in known:
            order.setdefault(word)
    for tier in tiers[:-1]:
        order.update(dict.fromkeys(w for w in sorted(tier) if w not in order))
    parts = len(order)  # the last (largest) tier's other words are never parts
    order.update(dict.fromkeys(w for w in sorted(tiers[-1]) if w not in order))
    return list(order), parts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    tiers = [_words(DICT_DIR / name) for name in TIERS]
    vocab = json.loads(default_tokenizer_path().read_text(encoding="utf-8"))["model"]["vocab"]
    order, parts = ranked_words(tiers, vocab)
    body = f"# parts {parts}\n" + "\n".join(order) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # mtime=0: the same lists give the same bytes, so a rebuild shows no diff.
    with open(args.out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as gz:
        gz.write(body.encode("ascii"))
    print(f"{args.out}: {len(order):,} words, the first {parts:,} may be parts of a name")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
