"""Ground-truth records whose source was stored as an unnamed public repository get the
source line a reader can look up (the page's title and kind) and the content hash of
the corrected bundled case, so reloading the cases adds no duplicate."""

from django.db import migrations

UNNAMED = "name not recorded"


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    from configurator.verification.records import bundled_cases, case_digest, case_source

    record_model = apps.get_model("verification", "BenchmarkRecord")
    cases = {str(case.get("id", "")): case for case in bundled_cases()}
    for record in record_model.objects.filter(source__contains=UNNAMED):
        case = cases.get(record.case_id)
        if case is None:
            continue
        record.source = case_source(case)
        record.content_hash = case_digest(case)
        record.save(update_fields=["source", "content_hash"])


class Migration(migrations.Migration):
    dependencies = [("verification", "0003_report_summaries_by_language")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
