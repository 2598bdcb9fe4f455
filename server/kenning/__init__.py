"""kenning: find code by describing it.

The engine (workspace discovery, chunking, embedding, storage, search) lives in this package and
never imports pygls; the language server in ``kenning.lsp`` is a thin layer over it.
"""

from __future__ import annotations

import os

__version__ = "0.1.0"

# onnxruntime's official builds report usage to Microsoft unless this is set before the runtime
# initialises: from `import onnxruntime` on, the process looks up mobile.events.data.microsoft.com
# every few seconds for as long as it lives and keeps a device id and an event queue under
# ~/.cache/Microsoft (measured with onnxruntime 1.32 on Linux; its Privacy.md documents the
# variable). kenning runs offline unless the user configures an endpoint, so it is set here,
# before any kenning module can import onnxruntime. A value the user set is left alone.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
