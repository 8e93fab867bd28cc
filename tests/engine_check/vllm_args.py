"""Feed vLLM command lines to vLLM's own ``vllm serve`` argument parser (subprocess).

Usage: ``python -m tests.engine_check.vllm_args FILE`` in the engine venv
(``tests/engine_check/engine_venv.py``) with the unpacked vLLM wheel first on ``PYTHONPATH``.
FILE is JSON: a list of ``{"name": ..., "argv": ["vllm", "serve", MODEL, ...]}``. Each
argv after ``vllm serve`` is parsed by the parser ``vllm serve`` builds
(``make_arg_parser`` of ``vllm/entrypoints/common/cli_args.py``, 0.31:
``launchers/cli_args.py``, on ``FlexibleArgumentParser``, the model as its positional
``model_tag``), checked by its ``validate_parsed_serve_args``, then turned into
``AsyncEngineArgs.from_cli_args`` (``vllm/engine/arg_utils.py``), which also reads
``--kv-transfer-config`` into vLLM's ``KVTransferConfig``, whose connector, offloading
spec, tier types and keys :mod:`tests.engine_check.connector_keys` then looks up in that
vLLM. An unknown flag or a value the parser refuses exits 1 naming the command line.

With ``HF_HUB_OFFLINE=1`` vLLM's ``EngineArgs.__post_init__`` replaces the model id by
its snapshot in the local Hugging Face cache (``transformers_utils/repo_utils.py``
``get_model_path``: ``snapshot_download(local_files_only=True, ignore_patterns="*")``)
and refuses a model it has never downloaded. The checker therefore points
``HF_HUB_CACHE`` at a scratch cache with an empty snapshot of every model the lines name
(:func:`tests.engine_check.hub_cache.empty_snapshots`): no file is read from it and
nothing is fetched.
"""

from __future__ import annotations

import sys
from typing import Any

from tests.engine_check import connector_keys
from tests.engine_check.argv_lines import check_lines
from tests.engine_check.hub_cache import empty_snapshots, models_of


def _serve_parser() -> tuple[Any, Any]:
    """(the ``vllm serve`` parser, its ``validate_parsed_serve_args``) of this release:
    ``vllm/entrypoints/common/cli_args.py`` in 0.33, ``launchers/cli_args.py`` in 0.31."""
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    try:
        from vllm.entrypoints.common import cli_args
    except ImportError:
        from vllm.entrypoints.launchers import cli_args  # type: ignore[no-redef]
    parser = cli_args.make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
    return parser, cli_args.validate_parsed_serve_args


def main(path: str) -> int:
    empty_snapshots(models_of(path, model_at=2))
    from vllm.engine.arg_utils import AsyncEngineArgs

    parser, validate = _serve_parser()

    def parse(argv: list[str]) -> object:
        args = parser.parse_args(argv)
        if args.model_tag is not None:
            args.model = args.model_tag  # as vllm/entrypoints/cli/serve.py does
        validate(args)
        engine_args = AsyncEngineArgs.from_cli_args(args)
        connector_keys.check(engine_args.kv_transfer_config)
        return engine_args

    return check_lines(path, "vLLM", ["vllm", "serve"], parse)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
