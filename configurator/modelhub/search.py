"""Model suggestions for the configurator's model field: catalog and cache, no network."""

from __future__ import annotations

from dataclasses import dataclass

from configurator.modelhub.models import HubModel
from sizing.model.spec import catalog_ids


@dataclass(frozen=True)
class ModelChoice:
    """One autocomplete suggestion: the repo id and where the answer would come from."""

    repo_id: str
    origin: str


def model_search(*, query: str, limit: int = 20) -> list[ModelChoice]:
    """Catalog and cached model ids containing ``query`` (case-insensitive), catalog first.

    The public field suggests only what anyone may use: cached models that are gated
    (looked up with this installation's token) are left out. One database query; no
    network.
    """
    needle = query.strip().lower()
    found = [ModelChoice(rid, "catalog") for rid in catalog_ids() if needle in rid.lower()]
    seen = {choice.repo_id.lower() for choice in found}
    rows = HubModel.objects.filter(repo_key__contains=needle, gated="").values_list(
        "repo_id", flat=True
    )
    for rid in rows.order_by("repo_key").distinct()[: limit * 2]:
        if rid.lower() not in seen:
            seen.add(rid.lower())
            found.append(ModelChoice(rid, "cache"))
    return found[:limit]
