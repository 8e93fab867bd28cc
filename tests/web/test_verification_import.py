"""Importing benchmark files: service, ``import_benchmarks`` command and admin upload.

Expected figures come from the fixture logs in ``tests/data/verification/`` and the
ground-truth cases they belong to (case ids at the assertions).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from configurator.verification.models import BenchmarkRecord
from configurator.verification.parsers import ParseError
from configurator.verification.services import record_import_file

DATA = Path(__file__).resolve().parents[1] / "data" / "verification"
VLLM_LOG = DATA / "vllm-0.19.0-debug-granite-3.1-2b-h100.log"


@pytest.mark.django_db
def test_the_same_file_twice_is_one_record():
    content = VLLM_LOG.read_bytes()
    record, created = record_import_file(content=content, filename="a.log", gpu_type="H100 80GB")
    again, created_again = record_import_file(content=content, filename="b.log")
    assert (created, created_again) == (True, False)
    assert again.pk == record.pk
    assert BenchmarkRecord.objects.count() == 1
    assert record.kind == "vllm_log"
    assert record.kv_cache_gib == 69.28  # case-013
    assert record.kv_cache_tokens == 908_048  # case-013
    assert record.gpu_class == "h100"
    assert len(record.content_hash) == 64


@pytest.mark.django_db
def test_missing_gpu_stores_nothing():
    with pytest.raises(ParseError) as info:
        record_import_file(content=VLLM_LOG.read_bytes(), filename="a.log")
    assert str(info.value).startswith("a.log: ")
    assert "gpu_type" in str(info.value)
    assert not BenchmarkRecord.objects.exists()


@pytest.mark.django_db
def test_binary_file_is_refused():
    with pytest.raises(ParseError, match="not UTF-8"):
        record_import_file(content=b"\xff\xfe\x00garbage", filename="x.bin", gpu_type="H100")
    assert not BenchmarkRecord.objects.exists()


@pytest.mark.django_db
def test_command_imports_several_files(capsys):
    call_command(
        "import_benchmarks",
        str(VLLM_LOG),
        str(DATA / "vllm-bench-serve-result.json"),
        "--gpu=H100 80GB",
        "--source=burn-in 2026-03",
    )
    assert "imported 2 new record(s), 0 already present" in capsys.readouterr().out
    assert set(BenchmarkRecord.objects.values_list("kind", flat=True)) == {
        "vllm_log",
        "vllm_bench_json",
    }
    assert set(BenchmarkRecord.objects.values_list("source", flat=True)) == {"burn-in 2026-03"}


@pytest.mark.django_db
def test_command_with_a_partial_file_stores_nothing(tmp_path):
    partial = tmp_path / "partial.log"
    partial.write_text("\n".join(VLLM_LOG.read_text().splitlines()[:8]))
    with pytest.raises(CommandError) as info:
        call_command("import_benchmarks", str(VLLM_LOG), str(partial), "--gpu=H100 80GB")
    assert info.value.returncode == 2
    assert "partial.log" in str(info.value) and "kv_cache_gib" in str(info.value)
    assert "\n" not in str(info.value)
    assert not BenchmarkRecord.objects.exists()


@pytest.mark.django_db
def test_command_reads_a_file_only_up_to_the_upload_limit():
    # verification/forms.py MAX_UPLOAD_BYTES: 20 MiB, as in the admin; /dev/zero never ends.
    with pytest.raises(CommandError) as info:
        call_command("import_benchmarks", str(VLLM_LOG), "/dev/zero", "--gpu=H100 80GB")
    assert info.value.returncode == 2
    assert str(info.value) == "/dev/zero: the file is larger than 20,971,520 bytes"
    assert not BenchmarkRecord.objects.exists()


@pytest.mark.django_db
def test_command_initial_loads_the_bundled_cases(capsys):
    call_command("import_benchmarks", "--initial")
    assert BenchmarkRecord.objects.filter(kind="ground_truth").exists()
    assert "bundled cases:" in capsys.readouterr().out


@pytest.fixture
def admin_client_logged(client, django_user_model):
    user = django_user_model.objects.create_superuser("admin", "a@example.com", "pw")
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_admin_upload(admin_client_logged):
    url = reverse("admin:verification_benchmarkrecord_upload")
    upload = SimpleUploadedFile("sglang.log", (DATA / "sglang-0.4.1-llama-3.1-8b.log").read_bytes())
    response = admin_client_logged.post(
        url, {"file": upload, "gpu_type": "H100 80GB", "engine_version": "0.4.1"}
    )
    record = BenchmarkRecord.objects.get()
    assert response.status_code == 302
    assert record.kv_cache_tokens == 444_500  # case-099
    assert record.engine == "sglang"


@pytest.mark.django_db
def test_admin_upload_names_the_missing_field(admin_client_logged):
    url = reverse("admin:verification_benchmarkrecord_upload")
    upload = SimpleUploadedFile("v.log", VLLM_LOG.read_bytes())
    response = admin_client_logged.post(url, {"file": upload})
    assert response.status_code == 200
    assert "gpu_type" in response.context["form"].errors
    assert not BenchmarkRecord.objects.exists()
    changelist = admin_client_logged.get(reverse("admin:verification_benchmarkrecord_changelist"))
    assert url in changelist.content.decode()
