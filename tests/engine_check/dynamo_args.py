"""Feed Dynamo's frontend and worker command lines to Dynamo's own parsers.

Usage: ``python -m tests.engine_check.dynamo_args FILE`` in the engine venv with the
unpacked Dynamo wheels (``ai-dynamo`` and ``ai-dynamo-runtime``) and the vLLM release
Dynamo pins first on ``PYTHONPATH`` (``tests/engine_check/engine_venv.py``). FILE is a
JSON list of ``{"name": ..., "argv": ["python", "-m", MODULE, ...]}``:

- ``dynamo.frontend``: the parser ``dynamo/frontend/main.py`` ``parse_args`` builds
  (``FrontendArgGroup`` of ``frontend_args.py``), ``FrontendConfig.from_cli_args`` and
  its ``validate()``; any argument left over is refused, as ``parse_args`` refuses it
  without ``--chat-processor``.
- ``dynamo.vllm``: ``dynamo/vllm/args.py`` ``parse_args``, which parses Dynamo's runtime
  and worker groups, then every remaining flag with vLLM's own engine parser, builds
  ``AsyncEngineArgs`` and cross-validates the two.

With ``HF_HUB_OFFLINE=1`` vLLM resolves the model in the local Hugging Face cache, so the
models get empty snapshots first (:mod:`tests.engine_check.hub_cache`).
"""

from __future__ import annotations

import argparse
import sys

from tests.engine_check.argv_lines import check_lines
from tests.engine_check.hub_cache import empty_snapshots, models_of


def _frontend(argv: list[str]) -> object:
    from dynamo.frontend.frontend_args import FrontendArgGroup, FrontendConfig

    parser = argparse.ArgumentParser(prog="python -m dynamo.frontend")
    FrontendArgGroup().add_arguments(parser)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        raise ValueError(f"Unknown arguments specified: {unknown}")
    config = FrontendConfig.from_cli_args(args)
    config.validate()
    return config


def _worker(argv: list[str]) -> object:
    from dynamo.vllm.args import parse_args

    return parse_args(argv)


def main(path: str) -> int:
    empty_snapshots(models_of(path, model_at="--model"))

    def parse(argv: list[str]) -> object:
        module, rest = argv[0], argv[1:]
        if module == "dynamo.frontend":
            return _frontend(rest)
        if module == "dynamo.vllm":
            return _worker(rest)
        raise ValueError(f"not a Dynamo module: {module}")

    return check_lines(path, "Dynamo", ["python", "-m"], parse)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
