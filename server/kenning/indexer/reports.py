"""What an indexing run says about itself: progress while it runs (``IndexProgress``, handed to a
``Progress`` callback), what each phase did when it ends (``ScanReport``, ``EmbedReport``), and the
store's counters of where its vectors came from (``ORIGIN_KEYS``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kenning.types import Phase

Progress = Callable[["IndexProgress"], None]

# Meta counters of where the store's vectors came from, since its model was bound: chunks that
# reused a vector the store held, vectors computed, taken from the shared cache, from a pack.
ORIGIN_STORE = "origin_store"
ORIGIN_COMPUTED = "origin_computed"
ORIGIN_SHARED = "origin_shared_cache"
ORIGIN_PACK = "origin_pack"
ORIGIN_KEYS = (ORIGIN_COMPUTED, ORIGIN_STORE, ORIGIN_SHARED, ORIGIN_PACK)


@dataclass(slots=True)
class IndexProgress:
    phase: Phase
    files_done: int = 0
    files_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    eta_s: float | None = None

    def eta_text(self) -> str:
        """The remaining time as people say it: "40s", "12m", "1.5h"."""
        seconds = self.eta_s or 0.0
        if seconds < 60:
            return f"{seconds:.0f}s"
        if seconds < 3600:
            return f"{seconds / 60:.0f}m"
        return f"{seconds / 3600:.1f}h"


@dataclass(slots=True)
class ScanReport:
    files_seen: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    files_skipped: int = 0
    files_written: int = 0  # rows written for skipped files (new or changed reason)
    files_unparsed: int = 0  # indexed in line windows: the parser ran past its limits
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_reused: int = 0  # added chunks whose vector the store already held (no model call)
    skipped: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    note: str | None = None  # why the scan found nothing, when discovery can tell


@dataclass(slots=True)
class EmbedReport:
    embedded: int = 0  # vectors computed by the model in this pass
    cached: int = 0
    from_shared: int = 0  # vectors taken from the shared cache (computed by another store)
    from_pack: int = 0  # ... of which a pack had brought there
    pack_imported: int = 0  # vectors a pack import added to the shared cache in this pass
    cancelled: bool = False
    seconds: float = 0.0
    # The embedding endpoint is down: what failed, and when to try again (time.time()).
    # Vectors committed before it went down stay; the next pass resumes after them.
    unavailable: str | None = None
    retry_at: float | None = None
