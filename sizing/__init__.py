"""The sizing engine: pure functions from a model, a workload and hardware to a plan.

Nothing in this package imports Django, touches the network or reads the clock; an
import-linter contract in ``pyproject.toml`` enforces it. Quantities carry their unit in
their name (``kv_gib``, ``dimm_gb``); GiB is 2^30 bytes and GB is 10^9 bytes.
"""
