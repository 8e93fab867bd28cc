"""Admin for benchmark records (with a file upload) and verification reports."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.translation import gettext as _

from configurator.verification.forms import BenchmarkUploadForm
from configurator.verification.models import BenchmarkRecord, VerificationCheck, VerificationReport
from configurator.verification.services import record_import_file


@admin.register(BenchmarkRecord)
class BenchmarkRecordAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # generic only in stubs
    list_display = (
        "__str__",
        "engine_version",
        "gpu_class",
        "tensor_parallel_size",
        "kv_cache_gib",
        "kv_cache_tokens",
        "kind",
        "imported_at",
    )
    list_filter = ("engine", "kind", "gpu_class")
    search_fields = ("model_id", "case_id", "source", "gpu_type")
    readonly_fields = ("content_hash", "imported_at")
    change_list_template = "admin/verification/benchmarkrecord/change_list.html"

    def get_urls(self) -> list[URLPattern]:
        upload = path(
            "upload/",
            self.admin_site.admin_view(self.upload_view),
            name="verification_benchmarkrecord_upload",
        )
        return [upload, *super().get_urls()]

    def upload_view(self, request: HttpRequest) -> HttpResponse:
        """Import one engine log or benchmark result; errors show at the field."""
        if not self.has_add_permission(request):
            return HttpResponse(status=403)
        form = BenchmarkUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            record, created = record_import_file(
                content=data["content"],
                filename=data["file"].name,
                fmt=data["fmt"] or None,
                gpu_type=data["gpu_type"] or None,
                engine_version=data["engine_version"] or None,
                source=data["source"],
            )
            if created:
                messages.success(request, _("Imported %(record)s.") % {"record": record})
            else:
                messages.info(
                    request, _("This file was imported before: %(record)s.") % {"record": record}
                )
            url = reverse("admin:verification_benchmarkrecord_change", args=[record.pk])
            return HttpResponseRedirect(url)
        context: dict[str, Any] = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": _("Import a benchmark file"),
        }
        return TemplateResponse(request, "admin/verification/benchmarkrecord/upload.html", context)


class VerificationCheckInline(admin.TabularInline):  # type: ignore[type-arg]  # as above
    model = VerificationCheck
    extra = 0
    can_delete = False
    fields = ("alternative", "name", "predicted", "measured", "deviation", "status", "source")
    readonly_fields = fields


@admin.register(VerificationReport)
class VerificationReportAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # as above
    list_display = ("quote", "status", "runs", "created_at", "finished_at")
    list_filter = ("status",)
    readonly_fields = ("quote", "status", "summary", "error", "runs", "started_at", "finished_at")
    inlines = [VerificationCheckInline]
