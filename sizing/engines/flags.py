"""The recorded flag, key and variable names of each engine version.

``sizing/data/engine_flags.json`` lists, per engine and released version, the names
that were read from that release's package (the file names each version's source). The
renderers check every name they emit against it, so a bundle never carries a flag the
chosen engine version does not know.

Source: ``engine_flags.json`` (vLLM 0.31.0/0.33.0, LMCache 0.5.6, SGLang 0.5.22/0.5.23,
Dynamo 1.5.1/1.6.1, production-stack chart 0.1.12).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from sizing.data_files import data_text
from sizing.errors import SizingError


@cache
def _data() -> dict[str, Any]:
    text = data_text("engine_flags.json")
    data: dict[str, Any] = json.loads(text)
    return data


def versions(engine: str) -> tuple[str, ...]:
    """Recorded versions of ``engine`` (``"vllm"``…), oldest first.

    Raises:
        KeyError: for an engine that is not recorded.
    """
    return tuple(sorted(_data()[engine], key=lambda v: tuple(int(p) for p in v.split("."))))


def known(engine: str, version: str, group: str) -> frozenset[str]:
    """Names recorded for ``engine`` ``version`` in ``group`` (``"cli"``, ``"env"``…).

    Raises:
        KeyError: for an unknown engine, version or group.
    """
    return frozenset(_data()[engine][version][group])


def source(engine: str, version: str) -> str:
    """Where the names of ``engine`` ``version`` were read."""
    text: str = _data()[engine][version]["source"]
    return text


def parallel_source(engine: str, version: str) -> str:
    """Where the parallelism flags of ``engine`` ``version`` were read (empty if none)."""
    text: str = _data()[engine][version].get("parallel_source", "")
    return text


def require(engine: str, version: str, group: str, names: Iterable[str]) -> None:
    """Check that every name in ``names`` is recorded for this engine version.

    Raises:
        ValueError: naming the first unknown name (a renderer bug, never user input).
    """
    allowed = known(engine, version, group)
    for name in names:
        if name not in allowed:
            raise ValueError(f"{name!r} is not a recorded {group} name of {engine} {version}")


def cli_flags(argv: Iterable[str]) -> list[str]:
    """The ``--flag`` names in an argv list (``--a=b`` gives ``--a``)."""
    return [arg.split("=", 1)[0] for arg in argv if arg.startswith("--")]


@dataclass(frozen=True)
class EngineVersions:
    """The engine releases a bundle targets (each must be recorded).

    Attributes:
        vllm: vLLM release (``0.31.0`` or ``0.33.0``).
        lmcache: LMCache release (``0.5.6``).
        sglang: SGLang release (``0.5.22`` or ``0.5.23``).
        dynamo: Dynamo and KVBM release (``1.5.1`` or ``1.6.1``).
        production_stack: vLLM production-stack chart (``0.1.12``).
    """

    vllm: str = "0.33.0"
    lmcache: str = "0.5.6"
    sglang: str = "0.5.23"
    dynamo: str = "1.6.1"
    production_stack: str = "0.1.12"

    def __post_init__(self) -> None:
        for attr, engine in (
            ("vllm", "vllm"),
            ("lmcache", "lmcache"),
            ("sglang", "sglang"),
            ("dynamo", "dynamo"),
            ("production_stack", "production-stack"),
        ):
            value = getattr(self, attr)
            if value not in versions(engine):
                raise SizingError(
                    f"{attr}_version",
                    f"{engine} version must be one of {', '.join(versions(engine))}, got {value!r}",
                )
