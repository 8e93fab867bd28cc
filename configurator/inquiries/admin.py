"""Admin for inquiries: read the customer's inputs and plan snapshot, change the status."""

from __future__ import annotations

from django.contrib import admin

from configurator.inquiries.models import Inquiry


@admin.register(Inquiry)
class InquiryAdmin(admin.ModelAdmin):
    list_display = ["reference", "received_at", "company", "name", "model_id", "users", "status"]
    list_filter = ["status", "gpu_slug", "language"]
    search_fields = ["reference", "company", "name", "email", "model_id"]
    readonly_fields = ["reference", "received_at", "plan_summary"]
    date_hierarchy = "received_at"
