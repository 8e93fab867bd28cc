"""The upload form of benchmark files (admin)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from configurator.verification.parsers import FORMATS, ParseError, parse

MAX_UPLOAD_BYTES = 20 * 2**20
FIELD_FOR_MISSING = {"gpu_type": "gpu_type", "engine_version": "engine_version"}


class BenchmarkUploadForm(forms.Form):
    """One engine log or benchmark result, with what the file itself does not say."""

    file = forms.FileField(label=_("file"))
    fmt = forms.ChoiceField(
        label=_("format"),
        choices=[("", _("detect from the content")), *[(f, f) for f in FORMATS]],
        required=False,
    )
    gpu_type = forms.CharField(
        label=_("GPU"),
        max_length=200,
        required=False,
        help_text=_("vLLM logs do not name the GPU, for example “H100 80GB”."),
    )
    engine_version = forms.CharField(
        label=_("engine version"),
        max_length=80,
        required=False,
        help_text=_("Used when the file does not print it."),
    )
    source = forms.CharField(
        label=_("source"),
        max_length=500,
        required=False,
        help_text=_("Where the file comes from: burn-in run, repository, issue."),
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        upload = cleaned.get("file")
        if upload is None:
            return cleaned
        if upload.size > MAX_UPLOAD_BYTES:
            self.add_error("file", _("The file is larger than 20 MiB."))
            return cleaned
        content = upload.read()
        cleaned["content"] = content
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            self.add_error("file", _("The file is not UTF-8 text."))
            return cleaned
        try:
            parse(
                text,
                fmt=cleaned.get("fmt") or None,
                gpu_type=cleaned.get("gpu_type") or None,
                engine_version=cleaned.get("engine_version") or None,
            )
        except ParseError as exc:
            field = next(
                (FIELD_FOR_MISSING[m] for m in exc.missing if m in FIELD_FOR_MISSING), "file"
            )
            self.add_error(field, exc.message)
        return cleaned
