"""The API key every engine instance checks: a placeholder, never a secret.

Rules (NetApp seed, step 3): every vLLM instance runs with the same ``VLLM_API_KEY``
(``vllm/envs.py``; vLLM's OpenAI server then accepts only requests that carry it as a
bearer token), every SGLang server with the same value as ``--api-key``. The
production-stack router forwards each client's ``Authorization`` header to the backend
(:mod:`sizing.engines.router`), so it needs no key of its own. The bundle ships
``api-key.env`` with :data:`API_KEY_PLACEHOLDER`; every script that needs the key stops
while it is unset or still the placeholder.
"""

from __future__ import annotations

import shlex

API_KEY_PLACEHOLDER = "replace-with-your-shared-api-key"
"""What ``api-key.env`` holds until the engineer sets a key of their own."""
API_KEY_FILE = "api-key.env"
"""The file beside ``README.md`` that holds the key."""
API_KEY_CHECK = (
    'if [ -z "${VLLM_API_KEY:-}" ] || [ "$VLLM_API_KEY" = '
    f"{shlex.quote(API_KEY_PLACEHOLDER)} ]; then\n"
    f'  echo "Set VLLM_API_KEY to your shared API key (see {API_KEY_FILE} and README.md)" >&2\n'
    "  exit 1\n"
    "fi"
)
"""Shell lines that stop a script while the API key is unset or the placeholder."""


def api_key_file() -> str:
    """``api-key.env``: the placeholder key, to be replaced before anything starts."""
    return (
        "# The API key every engine instance checks (VLLM_API_KEY); clients send it.\n"
        "# Replace the placeholder with a secret of your own, then load it in the shell\n"
        "# that starts the scripts: set -a; . ./api-key.env; set +a\n"
        f"VLLM_API_KEY={API_KEY_PLACEHOLDER}\n"
    )
