"""The storage tiers beside CPU memory: the local NVMe mount and a shared NFS or S3 tier.

Rules and sources:

- NFS/pNFS: mount the NAS export with NFS 4.2 (pNFS layouts are negotiated by NFS 4.1
  and later, RFC 5661/RFC 7862), ``hard`` so that I/O waits instead of failing, and
  ``nconnect`` for several TCP connections to one server (nfs(5), Linux 5.3 and later).
- S3: engines read and write objects under a prefix; none of them evicts objects from a
  bucket (vLLM ``obj`` tier, LMCache ``s3`` adapter without ``max_capacity_gb``), so the
  bundle sets a lifecycle rule that expires them (S3 API
  ``PutBucketLifecycleConfiguration``).
- Every instance that shares a tier must hash blocks identically: the same
  ``PYTHONHASHSEED`` and the same hash algorithm (``engine_flags.md`` §1.4, §2.1).
- Local NVMe: engines route the file tier through CPU memory; the drive is mounted on
  ``nvme_mount`` (DESIGN §3.4).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from sizing.engines import shell
from sizing.errors import SizingError

SHARED_KINDS = ("none", "nfs", "s3")
"""Shared tier kinds: none, an NFS/pNFS export, an S3-compatible bucket."""

_PATH = re.compile(r"/[A-Za-z0-9._/-]*")
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?")
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_REGION = re.compile(r"[a-z0-9-]{2,32}")
MAX_HASH_SEED = 4_294_967_295
"""Largest ``PYTHONHASHSEED`` Python accepts (Python docs, "PYTHONHASHSEED")."""


@dataclass(frozen=True)
class TierOptions:
    """Where the tiers live; validated on creation.

    Attributes:
        nvme_mount: mount point of the local NVMe drive(s).
        shared: one of :data:`SHARED_KINDS`.
        nfs_server: NAS host name (``shared == "nfs"``).
        nfs_export: exported path on the NAS.
        nfs_mount: mount point on every node.
        s3_bucket: bucket name (``shared == "s3"``), S3 naming rules.
        s3_region: bucket region.
        s3_endpoint: S3 endpoint host name, without scheme.
        python_hash_seed: ``PYTHONHASHSEED`` on every instance, 0 to 4,294,967,295.

    Raises:
        SizingError: naming the first invalid field.
    """

    nvme_mount: str = "/mnt/nvme"
    shared: str = "none"
    nfs_server: str = "nas.example.internal"
    nfs_export: str = "/export/kvcache"
    nfs_mount: str = "/mnt/kvshared"
    s3_bucket: str = "kv-cache"
    s3_region: str = "us-east-1"
    s3_endpoint: str = "s3.us-east-1.amazonaws.com"
    python_hash_seed: int = 0

    def __post_init__(self) -> None:
        if self.shared not in SHARED_KINDS:
            raise SizingError(
                "shared",
                f"shared tier must be one of {', '.join(SHARED_KINDS)}, got {self.shared!r}",
            )
        for name in ("nvme_mount", "nfs_export", "nfs_mount"):
            value = getattr(self, name)
            if not _PATH.fullmatch(value) or ".." in value or value == "/":
                raise SizingError(
                    name,
                    f"{name} must be an absolute path of letters, digits, '.', '_', '-', "
                    f"'/' (not '/' itself), got {value!r}",
                )
        for name in ("nfs_server", "s3_endpoint"):
            if not _HOST.fullmatch(getattr(self, name)):
                raise SizingError(name, f"{name} must be a host name, got {getattr(self, name)!r}")
        if not _BUCKET.fullmatch(self.s3_bucket):
            raise SizingError(
                "s3_bucket",
                "s3_bucket must be 3 to 63 lowercase letters, digits, '.' or '-', "
                f"got {self.s3_bucket!r}",
            )
        if not _REGION.fullmatch(self.s3_region):
            raise SizingError(
                "s3_region", f"s3_region must look like us-east-1, got {self.s3_region!r}"
            )
        if not 0 <= self.python_hash_seed <= MAX_HASH_SEED:
            raise SizingError(
                "python_hash_seed",
                f"python_hash_seed must be between 0 and {MAX_HASH_SEED:,}, "
                f"got {self.python_hash_seed}",
            )

    @property
    def s3_virtual_host_url(self) -> str:
        """``s3://<bucket>.<endpoint>``: LMCache's virtual-hosted S3 URL form."""
        return f"s3://{self.s3_bucket}.{self.s3_endpoint}"

    def shared_dir(self, engine: str) -> str:
        """Directory of ``engine``'s files on the shared NFS mount."""
        return f"{self.nfs_mount}/{engine}"

    def s3_prefix(self, model_id: str) -> str:
        """Object key prefix for one model (``kv/<model>/``)."""
        return "kv/" + re.sub(r"[^A-Za-z0-9._-]+", "-", model_id) + "/"


def nfs_mount_script(options: TierOptions) -> str:
    """Bash script mounting the NAS export on a node (and the matching fstab line)."""
    source = f"{options.nfs_server}:{options.nfs_export}"
    mount_opts = "vers=4.2,hard,nconnect=8,noatime"
    return shell.script(
        title="Mount the shared KV tier (NFS 4.2; pNFS layouts are used when the NAS offers them)",
        comments=(
            "Run on every node, as root. For a permanent mount add to /etc/fstab:",
            f"{source} {options.nfs_mount} nfs {mount_opts},_netdev 0 0",
        ),
        steps=(
            ["mkdir", "-p", options.nfs_mount],
            ["mount", "-t", "nfs", "-o", mount_opts, source, options.nfs_mount],
            ["findmnt", options.nfs_mount],
        ),
    )


def nvme_mount_script(options: TierOptions, *, drive_count: int) -> str:
    """Bash script mounting the NVMe KV drive; the device is given at run time.

    With several drives the engineer builds one striped device first (documented in the
    script); the script itself never formats anything.
    """
    return shell.script(
        title=f"Mount the local NVMe KV tier on {options.nvme_mount}",
        comments=(
            "Run on every node, as root. NVME_DEVICE is the formatted KV drive",
            f"(the plan has {drive_count} drive(s); stripe several with mdadm --level=0 first).",
            "This script does not format anything.",
        ),
        steps=(
            ': "${NVME_DEVICE:?set NVME_DEVICE to the KV drive, for example /dev/nvme1n1}"',
            ["mkdir", "-p", options.nvme_mount],
            f'mount -o noatime "$NVME_DEVICE" {shlex.quote(options.nvme_mount)}',
            ["findmnt", options.nvme_mount],
        ),
    )


def s3_lifecycle(options: TierOptions, model_id: str, *, expire_days: int = 1) -> dict[str, object]:
    """S3 lifecycle configuration that expires the model's KV objects after ``expire_days``."""
    if expire_days < 1:
        raise ValueError(f"expire_days must be at least 1, got {expire_days}")
    return {
        "Rules": [
            {
                "ID": "expire-kv-cache",
                "Filter": {"Prefix": options.s3_prefix(model_id)},
                "Status": "Enabled",
                "Expiration": {"Days": expire_days},
            }
        ]
    }


def s3_setup_script(options: TierOptions) -> str:
    """Bash script: check the bucket is reachable and apply the lifecycle rule."""
    endpoint = f"https://{options.s3_endpoint}"
    return shell.script(
        title=f"Prepare the shared S3 tier s3://{options.s3_bucket}",
        comments=(
            "Needs the AWS CLI and credentials from the default chain (environment,",
            "profile or instance role); the engines use the same chain.",
        ),
        steps=(
            [
                "aws",
                "--endpoint-url",
                endpoint,
                "--region",
                options.s3_region,
                "s3api",
                "head-bucket",
                "--bucket",
                options.s3_bucket,
            ],
            'cd "$HERE"',
            [
                "aws",
                "--endpoint-url",
                endpoint,
                "--region",
                options.s3_region,
                "s3api",
                "put-bucket-lifecycle-configuration",
                "--bucket",
                options.s3_bucket,
                "--lifecycle-configuration",
                "file://s3-lifecycle.json",
            ],
        ),
        here=True,
    )


def dumps(document: object) -> str:
    """A JSON document as the bundle writes it (sorted keys, two-space indent)."""
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
