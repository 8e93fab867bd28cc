"""Admin of the Hub cache: presales can see what was looked up and delete stale rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin
from django.http import HttpRequest

from configurator.modelhub.models import HubModel

if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[HubModel]
else:  # ModelAdmin is generic only in django-stubs, not at run time
    _ModelAdmin = admin.ModelAdmin


@admin.register(HubModel)
class HubModelAdmin(_ModelAdmin):
    """Rows are written by lookups only; deleting one makes the next lookup ask the Hub."""

    list_display = ("repo_id", "revision", "sha", "gated", "license", "fetched_at")
    search_fields = ("repo_id", "sha")
    list_filter = ("gated",)
    readonly_fields = (
        "repo_id",
        "revision",
        "sha",
        "config",
        "checkpoint_bytes",
        "checkpoint_source",
        "total_params",
        "gated",
        "license",
        "pipeline_tag",
        "fetched_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
