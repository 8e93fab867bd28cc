"""Feed ``lmcache server`` command lines to LMCache's own server parser.

Usage: ``python -m tests.engine_check.lmcache_server_args FILE`` in the engine venv with
the unpacked LMCache wheel first on ``PYTHONPATH``. FILE is a JSON list of
``{"name": ..., "argv": ["lmcache", "server", ...]}``. The parser is the one
``lmcache/cli/commands/server.py`` ``ServerCommand.add_arguments`` builds (the argument
groups of ``lmcache/v1/multiprocess/config.py``, ``v1/distributed/config.py`` and
``v1/mp_observability/config.py``); its ``execute`` then turns the namespace into the
server's configs with the ``parse_args_to_*`` functions, which check every
``--l2-adapter`` document (its ``type`` against the adapter registry, its keys against
the adapter's config class). ``add_arguments`` registers nothing when those modules do
not import, so this checker imports them itself and fails if they cannot be.
"""

from __future__ import annotations

import argparse
import sys

from tests.engine_check.argv_lines import check_lines


def main(path: str) -> int:
    from lmcache.v1.distributed.config import add_storage_manager_args, parse_args_to_config
    from lmcache.v1.mp_observability.config import (
        add_observability_args,
        parse_args_to_observability_config,
    )
    from lmcache.v1.multiprocess.config import (
        add_coordinator_args,
        add_http_frontend_args,
        add_mp_server_args,
        add_p2p_args,
        parse_args_to_coordinator_config,
        parse_args_to_http_frontend_config,
        parse_args_to_mp_server_config,
    )

    parser = argparse.ArgumentParser(prog="lmcache server")
    for add in (
        add_mp_server_args,
        add_p2p_args,
        add_storage_manager_args,
        add_http_frontend_args,
        add_observability_args,
        add_coordinator_args,
    ):
        add(parser)

    def parse(argv: list[str]) -> object:
        args = parser.parse_args(argv)
        return [
            to_config(args)
            for to_config in (
                parse_args_to_http_frontend_config,
                parse_args_to_mp_server_config,
                parse_args_to_config,
                parse_args_to_observability_config,
                parse_args_to_coordinator_config,
            )
        ]

    return check_lines(path, "LMCache", ["lmcache", "server"], parse)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
