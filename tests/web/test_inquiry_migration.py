"""Inquiries stored before the workload type load under the new column names.

Migration ``inquiries.0006`` renames ``model_id``, ``gpu_slug`` and
``system_prompt_tokens`` to the ``Workload`` field names and turns the whole percent
``active_share_percent`` into the share ``active_share`` (30 % → 0.3).
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from sizing.workload import Workload

BEFORE = [("inquiries", "0005_mail_delivery")]
AFTER = [("inquiries", "0006_workload_field_names")]


@pytest.mark.django_db(transaction=True)
def test_rows_written_the_old_way_load_as_workloads() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps.get_model("inquiries", "Inquiry")
    common = {"context_tokens": 8192, "users": 500, "kv_dtype": "fp8", "gpus_per_node": 4}
    contact = {"name": "Ada", "company": "Muster GmbH", "email": "ada@example.com"}
    shared = old.objects.create(
        model_id="Qwen/Qwen3-32B-FP8",
        gpu_slug="rtx-pro-6000-se",
        active_share_percent=30,
        system_prompt_tokens=2048,
        new_conversations_per_day=2000,
        **common,
        **contact,
    )
    turns = old.objects.create(
        model_id="Qwen/Qwen3-8B",
        gpu_slug="h200-nvl",
        active_share_percent=None,
        **common,
        **contact,
    )

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("inquiries", "Inquiry")
    row = new.objects.get(pk=shared.pk)
    assert (row.model, row.gpu, row.active_share, row.shared_prompt_tokens) == (
        "Qwen/Qwen3-32B-FP8",
        "rtx-pro-6000-se",
        0.3,
        2048,
    )
    assert (row.tensor_parallel_size, row.expert_parallel) == (None, False)
    other = new.objects.get(pk=turns.pk)
    assert (other.model, other.gpu, other.active_share) == ("Qwen/Qwen3-8B", "h200-nvl", None)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    from configurator.inquiries.models import Inquiry

    # Rows from before the NVMe switch keep their NVMe tier (0009: default False).
    assert Inquiry.objects.get(pk=shared.pk).without_nvme_tier is False
    assert Inquiry.objects.get(pk=shared.pk).workload == Workload(
        model="Qwen/Qwen3-32B-FP8",
        context_tokens=8192,
        users=500,
        active_share=0.3,
        shared_prompt_tokens=2048,
        new_conversations_per_day=2000,
    )
