"""Feed SGLang command lines to SGLang's own server argument parser (subprocess).

Usage: ``python -m tests.engine_check.sglang_args FILE`` in the engine venv
(``tests/engine_check/engine_venv.py``) with the unpacked SGLang wheel first on ``PYTHONPATH``.
FILE is JSON: a list of ``{"name": ..., "argv": ["python", "-m",
"sglang.launch_server", ...]}``. The arguments after the module are parsed as
``prepare_server_args`` does (``sglang/srt/server_args.py``: an
``argparse.ArgumentParser`` filled by ``ServerArgs.add_cli_args``), then turned into a
``ServerArgs`` with ``ServerArgs.from_cli_args``. Its resolution step
(``resolve_once``) probes the GPUs and is not run. An unknown flag or a value the parser
refuses exits 1 naming the command line.
"""

from __future__ import annotations

import argparse
import sys

from tests.engine_check.argv_lines import check_lines


def main(path: str) -> int:
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)

    def parse(argv: list[str]) -> object:
        return ServerArgs.from_cli_args(parser.parse_args(argv))

    return check_lines(path, "SGLang", ["python", "-m", "sglang.launch_server"], parse)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
