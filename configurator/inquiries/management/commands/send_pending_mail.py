"""``manage.py send_pending_mail``: send every inquiry mail still in the outbox, here.

For an operator after an outage, or without a worker: each unsent row that no other
sender holds is sent in this process (no broker needed), whatever its due time or age,
and sent once (:mod:`configurator.inquiries.outbox`). One line says what happened;
exit status 1 when a mail could not be sent (it stays in the outbox).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from configurator.dbcheck import require_tables
from configurator.inquiries import outbox
from configurator.inquiries.models import InquiryMail


class Command(BaseCommand):
    help = "Send the inquiry mails that have not gone out yet (each once)."

    def handle(self, *args: Any, **options: Any) -> None:
        require_tables(InquiryMail)
        sent, failed, last_error = 0, 0, ""
        for mail_id in list(outbox.outbox_pending().values_list("pk", flat=True)):
            try:
                outcome = outbox.outbox_send(mail_id=mail_id)
            except outbox.MAIL_ERRORS as exc:
                failed, last_error = failed + 1, f"{type(exc).__name__}: {exc}"
                continue
            sent += outcome == "sent"
        summary = f"{sent} inquiry mail(s) sent"
        if failed:
            raise CommandError(f"{summary}, {failed} not sent ({last_error})", returncode=1)
        self.stdout.write(summary)
