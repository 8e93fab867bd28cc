"""Admin for inquiries: read the customer's inputs and plan snapshot, change the status."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin

from configurator.inquiries.models import Inquiry, InquiryMail

if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[Inquiry]
    _Inline = admin.TabularInline[InquiryMail, Inquiry]
else:  # ModelAdmin is generic only in django-stubs, not at run time
    _ModelAdmin = admin.ModelAdmin
    _Inline = admin.TabularInline


class InquiryMailInline(_Inline):
    """The inquiry's mails in the outbox: sent when, or the last error and next try."""

    model = InquiryMail
    fields = ["kind", "sent_at", "attempts", "last_error", "due_at"]
    readonly_fields = ["kind", "sent_at", "attempts", "last_error", "due_at"]
    extra = 0
    can_delete = False
    max_num = 0


@admin.register(Inquiry)
class InquiryAdmin(_ModelAdmin):
    list_display = ["reference", "received_at", "company", "name", "model", "users", "status"]
    list_filter = ["status", "gpu", "language"]
    search_fields = ["reference", "company", "name", "email", "model"]
    readonly_fields = ["reference", "received_at", "plan_summary"]
    date_hierarchy = "received_at"
    inlines = [InquiryMailInline]
