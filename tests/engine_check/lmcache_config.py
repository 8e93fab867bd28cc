"""Feed LMCache YAML files to LMCache's own config loader (run in a subprocess).

Usage: ``python -m tests.engine_check.lmcache_config FILE...`` with the unpacked LMCache
wheel first on ``PYTHONPATH``. Each file is loaded with ``LMCacheEngineConfig.from_file``
and checked with its ``validate()`` (``lmcache/v1/config.py``, ``config_base.py``); the
loader only warns about a key it does not know ("Unknown configuration key",
``config_base._resolve_config_aliases``), so this script turns that warning into a
failure. Exit status 1 names the first file LMCache refuses.
"""

from __future__ import annotations

import logging
import sys


class _Unknown(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "Unknown configuration key" in text:
            self.messages.append(text)


def main(paths: list[str]) -> int:
    from lmcache.v1.config import LMCacheEngineConfig

    unknown = _Unknown()
    for name in ("lmcache", "lmcache.v1.config_base", ""):
        logging.getLogger(name).addHandler(unknown)
    for path in paths:
        config = LMCacheEngineConfig.from_file(path)
        config.validate()
        if unknown.messages:
            print(f"{path}: {unknown.messages[0]}", file=sys.stderr)
            return 1
        print(f"{path}: accepted by LMCache")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
