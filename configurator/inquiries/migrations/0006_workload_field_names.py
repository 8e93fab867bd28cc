"""Inquiry columns take the names of ``sizing.workload.Workload``'s fields.

``active_share_percent`` (whole percent) becomes ``active_share`` (a share, 30 % → 0.3);
the explicit tensor parallel size and expert parallelism are new inputs.
"""

from django.db import migrations, models


def percent_to_share(apps, schema_editor):
    Inquiry = apps.get_model("inquiries", "Inquiry")
    for row in Inquiry.objects.exclude(active_share_percent=None).only("pk", "active_share_percent"):
        Inquiry.objects.filter(pk=row.pk).update(active_share=row.active_share_percent / 100)


def share_to_percent(apps, schema_editor):
    Inquiry = apps.get_model("inquiries", "Inquiry")
    for row in Inquiry.objects.exclude(active_share=None).only("pk", "active_share"):
        Inquiry.objects.filter(pk=row.pk).update(
            active_share_percent=max(1, round(row.active_share * 100))
        )


class Migration(migrations.Migration):
    dependencies = [
        ("inquiries", "0005_mail_delivery"),
    ]

    operations = [
        migrations.RenameField(model_name="inquiry", old_name="model_id", new_name="model"),
        migrations.RenameField(model_name="inquiry", old_name="gpu_slug", new_name="gpu"),
        migrations.RenameField(
            model_name="inquiry", old_name="system_prompt_tokens", new_name="shared_prompt_tokens"
        ),
        migrations.AddField(
            model_name="inquiry",
            name="active_share",
            field=models.FloatField(
                blank=True, null=True, verbose_name="share of users active at once"
            ),
        ),
        migrations.RunPython(percent_to_share, share_to_percent),
        migrations.RemoveField(model_name="inquiry", name="active_share_percent"),
        migrations.AddField(
            model_name="inquiry",
            name="tensor_parallel_size",
            field=models.PositiveSmallIntegerField(
                blank=True, null=True, verbose_name="tensor parallel size"
            ),
        ),
        migrations.AddField(
            model_name="inquiry",
            name="expert_parallel",
            field=models.BooleanField(default=False, verbose_name="expert parallel"),
        ),
    ]
