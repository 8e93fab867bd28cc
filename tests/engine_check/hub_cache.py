"""A scratch Hugging Face cache with an empty snapshot of each model a checker parses.

Engines that resolve a model id while parsing (vLLM under ``HF_HUB_OFFLINE=1``) look
for ``models--<org>--<name>/refs/main`` and the snapshot folder it names
(huggingface_hub's cache layout, ``_snapshot_download.py``). The folder is empty:
parsing reads no file of it, and nothing is downloaded. Call before importing the
engine, since huggingface_hub reads ``HF_HUB_CACHE`` at import.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

REVISION = "0" * 40
"""The commit hash the empty snapshots are filed under."""


def models_of(path: str, *, model_at: int | str) -> list[str]:
    """The model ids of the argv lines in the JSON ``path``: the argument at index
    ``model_at``, or the value after the flag ``model_at`` (``"--model"``)."""
    models = set()
    for line in json.loads(Path(path).read_text(encoding="utf-8")):
        argv = line["argv"]
        at = (
            argv.index(model_at) + 1 if isinstance(model_at, str) and model_at in argv else model_at
        )
        if isinstance(at, int) and at < len(argv):
            models.add(argv[at])
    return sorted(models)


def empty_snapshots(models: Iterable[str]) -> Path:
    """Make the scratch cache, point ``HF_HUB_CACHE`` at it and return it."""
    root = Path(tempfile.mkdtemp(prefix="engine-check-hub-"))
    for model in models:
        repo = root / ("models--" + model.replace("/", "--"))
        (repo / "refs").mkdir(parents=True)
        (repo / "refs" / "main").write_text(REVISION)
        (repo / "snapshots" / REVISION).mkdir(parents=True)
    os.environ["HF_HUB_CACHE"] = str(root)
    return root
