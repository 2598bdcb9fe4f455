"""``python -m kenning`` runs the command-line interface."""

from __future__ import annotations

from kenning.cli import main

raise SystemExit(main())
