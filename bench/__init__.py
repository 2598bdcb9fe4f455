"""kenning's benchmark suite: ``python -m bench`` (``--quick``, ``--smoke``).

One command measures, side by side in one run, what issue 6 asks of kenning on the running
interpreter's standard library: raw model and end-to-end indexing throughput, time to the first
lexical result and to ready, unchanged restarts, didSave to findable, search and symbol latency at
~10k and ~100k chunks, memory, disk and the idle server, and retrieval quality; it prints a table
and writes the results section of ``docs/performance.md`` (or ``--output``).

Modules: ``corpus`` (the corpora), ``seeded`` (large indexes without re-embedding), ``model``
(raw throughput), ``server`` (LSP measures), ``others`` (jedi-language-server, basedpyright),
``quality`` (MRR/recall, fusion tuning), ``report`` (the table and the Markdown), ``machine``.
``model_throughput`` and ``fuzzy_latency`` also run on their own.
"""
