"""Check the ``kv_connector_extra_config`` of an ``OffloadingConnector`` against vLLM.

vLLM's ``KVTransferConfig`` takes any ``kv_connector_extra_config``: a misspelt
``spec_name``, tier ``type`` or key would only be noticed when an engine starts. This
check, run inside the vLLM checker (:mod:`tests.engine_check.vllm_args`), looks each name
up where that vLLM release keeps it:

- ``kv_connector`` in ``KVConnectorFactory._registry``
  (``vllm/distributed/kv_transfer/kv_connector/factory.py``);
- ``spec_name`` in ``OffloadingSpecFactory._registry`` (``vllm/v1/kv_offload/factory.py``);
- each secondary tier's ``type`` in ``SecondaryTierFactory._registry``
  (``vllm/v1/kv_offload/tiering/factory.py``);
- each key: a top-level key must be read somewhere in ``vllm/v1/kv_offload/`` (the specs
  read them with ``extra_config.get("<key>")``), a tier's key in the tier manager's own
  package or in ``tiering/spec.py`` (``backpressure``), as a quoted name or a field
  (``<key>:`` in a config class such as ``ObjStoreConfig``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any


def _registered(registry: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """name → (module path, class name) of a lazy factory registry (each entry is a
    loader closing over the two)."""
    out = {}
    for name, loader in registry.items():
        cells = [c.cell_contents for c in loader.__closure__ or ()]
        strings = [c for c in cells if isinstance(c, str)]
        module = next(s for s in strings if "." in s)
        out[name] = (module, next(s for s in strings if s != module))
    return out


def _module_dir(module: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ValueError(f"module {module} not found")
    return Path(spec.origin).parent


def _reads(key: str, folders: list[Path]) -> bool:
    pattern = re.compile(rf"""["']{re.escape(key)}["']|^\s+{re.escape(key)}\s*:""", re.M)
    return any(
        pattern.search(p.read_text(encoding="utf-8")) for f in folders for p in f.rglob("*.py")
    )


def check(kv_transfer_config: Any) -> None:
    """Raise ``ValueError`` naming the first name this vLLM does not know (module doc)."""
    if kv_transfer_config is None:
        return
    from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory

    connector = kv_transfer_config.kv_connector
    if connector not in KVConnectorFactory._registry:
        raise ValueError(f"kv_connector {connector!r} is not a registered connector")
    if connector != "OffloadingConnector":
        return
    from vllm.v1.kv_offload.factory import OffloadingSpecFactory
    from vllm.v1.kv_offload.tiering.factory import SecondaryTierFactory

    extra = kv_transfer_config.kv_connector_extra_config or {}
    spec_name = extra.get("spec_name", "CPUOffloadingSpec")
    if spec_name not in OffloadingSpecFactory._registry:
        raise ValueError(f"spec_name {spec_name!r} is not a registered offloading spec")
    offload_dir = _module_dir("vllm.v1.kv_offload.factory")
    for key in extra:
        if not _reads(key, [offload_dir]):
            raise ValueError(f"kv_connector_extra_config key {key!r} is read nowhere")
    tiers = _registered(SecondaryTierFactory._registry)
    for tier in extra.get("secondary_tiers", []):
        kind = tier.get("type")
        if kind not in tiers:
            raise ValueError(f"secondary tier type {kind!r} is not registered")
        folders = [_module_dir(tiers[kind][0]), offload_dir / "tiering"]
        for key, value in tier.items():
            if not _reads(key, folders):
                raise ValueError(f"secondary tier {kind!r} key {key!r} is read nowhere")
            if isinstance(value, dict):
                for inner in value:
                    if not _reads(inner, folders[:1]):
                        raise ValueError(f"{kind!r} {key}.{inner} is read nowhere")
