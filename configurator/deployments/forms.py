"""Validation of the bundle options (engine, shared tier) on the web."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from sizing.engines.bundle import ENGINES
from sizing.engines.shared_tier import NFS_MOUNT_KINDS, SHARED_KINDS, TierOptions
from sizing.errors import SizingError


class BundleOptionsForm(forms.Form):
    """Which engine to render and where the shared tier lives."""

    engine = forms.ChoiceField(
        label=_("engine"),
        choices=[(e, e) for e in (*ENGINES, "all")],
        initial="all",
        required=False,
    )
    shared = forms.ChoiceField(
        label=_("shared tier"),
        choices=[(k, k) for k in SHARED_KINDS],
        initial="none",
        required=False,
    )
    nfs_server = forms.CharField(label=_("NFS server"), required=False, max_length=253)
    nfs_export = forms.CharField(label=_("NFS export"), required=False, max_length=200)
    s3_bucket = forms.CharField(label=_("S3 bucket"), required=False, max_length=63)
    s3_region = forms.CharField(label=_("S3 region"), required=False, max_length=32)
    s3_endpoint = forms.CharField(
        label=_("S3 endpoint"),
        required=False,
        max_length=270,
        help_text=_("host, host:port or http(s)://host:port; TLS unless http://"),
    )
    nfs_mount_kind = forms.ChoiceField(
        label=_("NFS mount"),
        choices=[(k, k) for k in NFS_MOUNT_KINDS],
        initial="nfs",
        required=False,
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        data["engine"] = data.get("engine") or "all"
        values = {k: v for k, v in data.items() if k not in ("engine",) and v}
        try:
            data["tiers"] = TierOptions(**values)
        except SizingError as exc:
            self.add_error(exc.field if exc.field in self.fields else None, exc.message)
        return data
