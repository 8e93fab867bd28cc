"""How a customer input is declared: one dataclass field with its default, its English
description and its limits in ``metadata``.

The surfaces read the metadata instead of repeating it: the configurator form's
limits, the CLI's flags and help, the JSON API's schema (``docs/adding-an-input.md``).
Keys: ``help`` (English description), ``min``/``max`` (inclusive), ``exclusive_min``,
``min_length``/``max_length`` for text, ``choices``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

MAX_TOKENS = 10_000_000
"""The most tokens any token count of a workload may be (a conversation's context, the
shared prompt, one turn's prompt or answer): a sanity bound, far above any model's
``max_position_embeddings``."""


def input_field(default: Any = dataclasses.MISSING, *, help: str, **limits: Any) -> Any:
    """A dataclass field for one input, with ``help`` and ``limits`` in its ``metadata``."""
    return dataclasses.field(default=default, metadata={"help": help, **limits})
