"""The storage tiers beside CPU memory: the local NVMe mount and a shared NFS or S3 tier.

Rules and sources:

- NFS/pNFS: mount the NAS export with NFS 4.2 (pNFS layouts are negotiated by NFS 4.1
  and later, RFC 5661/RFC 7862), ``hard`` so that I/O waits instead of failing, and
  ``nconnect`` for several TCP connections to one server (nfs(5), Linux 5.3 and later).
  Or, as the NetApp seed mounts ONTAP for high-performance pNFS over RDMA (RoCE):
  ``vers=4.1,proto=rdma,trunkdiscovery,write=eager,rsize=262144,wsize=262144``
  (``nfs_mount_kind = "pnfs-rdma"``).
- S3 endpoint: a host name, optionally with ``:port`` and an ``http://`` or
  ``https://`` scheme (a StorageGRID endpoint such as ``sg.example.net:10443``). TLS is
  on unless the endpoint says ``http://``; only then does LMCache get
  ``disable_tls: true`` (``lmcache/v1/storage_backend/connector/s3_connector.py``), vLLM's
  and SGLang's NIXL ``obj`` tier ``scheme: http``.
- S3: none of the engines evicts objects from a bucket (vLLM ``obj`` tier, LMCache
  ``s3`` adapter without ``max_capacity_gb``), so the bundle sets a lifecycle rule that
  expires them (S3 API ``PutBucketLifecycleConfiguration``). The rule covers the whole
  bucket, which holds the KV cache alone: LMCache writes its objects at the bucket's
  root (``s3_connector.py`` ``_format_safe_path``: ``/<key>``), vLLM under
  ``<prefix>/<model>_<hash>/`` (``tiering/obj/manager.py`` adds ``/`` to the prefix and
  ``file_mapper.py`` joins it with another ``/``, so a prefix ``kv`` gives
  ``kv//<model>_<hash>/…``; the model is already in the key, so the prefix is ``kv``).
- LMCache's S3 client, as the NetApp seed configures it for StorageGRID:
  ``s3_prefer_http2: false`` and ``s3_num_io_threads: 320`` (LMCache's defaults, HTTP/2
  and 64 threads, ``s3_adapter.py``, are kept for AWS endpoints). LMCache addresses the
  bucket virtual-hosted style (``<bucket>.<host>``), so a StorageGRID endpoint needs its
  endpoint domain name configured and a DNS entry for ``<bucket>.<host>``.
- Every instance that shares a tier must hash blocks identically: the same
  ``PYTHONHASHSEED`` and the same hash algorithm (``engine_flags.md`` §1.4, §2.1).
- Local NVMe: engines route the file tier through CPU memory; the drive is mounted on
  ``nvme_mount`` (docs/sizing.md §5).
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from sizing.engines import shell
from sizing.errors import SizingError

SHARED_KINDS = ("none", "nfs", "s3")
"""Shared tier kinds: none, an NFS/pNFS export, an S3-compatible bucket."""
NFS_MOUNT_KINDS = ("nfs", "pnfs-rdma")
"""How the NFS tier is mounted: NFS 4.2 over TCP, or pNFS 4.1 over RDMA (NetApp seed)."""
NFS_MOUNT_OPTIONS = {
    "nfs": "vers=4.2,hard,nconnect=8,noatime",
    "pnfs-rdma": "vers=4.1,proto=rdma,trunkdiscovery,write=eager,rsize=262144,wsize=262144",
}
"""``mount -o`` options of each :data:`NFS_MOUNT_KINDS` (module doc)."""

_PATH = re.compile(r"/[A-Za-z0-9._/-]*")
_HOST_PATTERN = r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?"
_NFS_HOST = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9_])?")
_ENDPOINT = re.compile(
    rf"(?:(?P<scheme>https?)://)?(?P<host>{_HOST_PATTERN})(?::(?P<port>\d{{1,5}}))?"
)
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_REGION = re.compile(r"[a-z0-9-]{2,32}")
MAX_HASH_SEED = 4_294_967_295
"""Largest ``PYTHONHASHSEED`` Python accepts (Python docs, "PYTHONHASHSEED")."""


def _option(default: Any, *, help: str, **limits: Any) -> Any:
    """A :class:`TierOptions` field with its English description and limits in
    ``metadata`` (as :mod:`sizing.workload` declares its inputs: ``min``/``max``
    inclusive, ``max_length``, ``choices``), read by the JSON API's schema."""
    return field(default=default, metadata={"help": help, **limits})


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
        s3_endpoint: S3 endpoint: a host name with an optional ``:port`` and an optional
            ``http://`` or ``https://`` scheme (https when none is given).
        python_hash_seed: ``PYTHONHASHSEED`` on every instance, 0 to 4,294,967,295.
        nfs_mount_kind: one of :data:`NFS_MOUNT_KINDS`.
        offload_decode: offload decode blocks too (vLLM ``offload_prompt_only: false``,
            LMCache ``save_decode_cache: true``), for plans whose returning users depend
            on long answers; by default only prompt blocks are offloaded.

    Raises:
        SizingError: naming the first invalid field.
    """

    nvme_mount: str = _option("/mnt/nvme", help="mount point of the local NVMe drive(s)")
    shared: str = _option(
        "none", help="shared tier: none, an NFS/pNFS export or an S3 bucket", choices=SHARED_KINDS
    )
    nfs_server: str = _option("nas.example.internal", help="NAS host name", max_length=253)
    nfs_export: str = _option("/export/kvcache", help="exported path on the NAS")
    nfs_mount: str = _option("/mnt/kvshared", help="mount point of the NFS tier on every node")
    s3_bucket: str = _option("kv-cache", help="S3 bucket", max_length=63)
    s3_region: str = _option("us-east-1", help="S3 bucket region", max_length=32)
    s3_endpoint: str = _option(
        "s3.us-east-1.amazonaws.com",
        help="S3 endpoint: host, host:port or http(s)://host:port; TLS unless http://",
        max_length=270,
    )
    python_hash_seed: int = _option(
        0, help="PYTHONHASHSEED on every instance", min=0, max=MAX_HASH_SEED
    )
    nfs_mount_kind: str = _option(
        "nfs", help="NFS 4.2 over TCP, or pNFS 4.1 over RDMA", choices=NFS_MOUNT_KINDS
    )
    offload_decode: bool = _option(
        False, help="offload decode blocks too (offload_prompt_only: false)"
    )

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
        if not _NFS_HOST.fullmatch(self.nfs_server) or ".." in self.nfs_server:
            raise SizingError(
                "nfs_server",
                "nfs_server must be a host name (letters, digits, '.', '-', '_'), "
                f"got {self.nfs_server!r}",
            )
        endpoint = _ENDPOINT.fullmatch(self.s3_endpoint)
        if not endpoint or not 1 <= int(endpoint["port"] or 443) <= 65535:
            raise SizingError(
                "s3_endpoint",
                "s3_endpoint must be a host name with an optional :port and an optional "
                f"http:// or https://, got {self.s3_endpoint!r}",
            )
        if self.nfs_mount_kind not in NFS_MOUNT_KINDS:
            raise SizingError(
                "nfs_mount_kind",
                f"nfs_mount_kind must be one of {', '.join(NFS_MOUNT_KINDS)}, "
                f"got {self.nfs_mount_kind!r}",
            )
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
    def nfs_server_note(self) -> str | None:
        """A note when ``nfs_server`` is no DNS host name (it has ``_``, which RFC 1123
        host names do not allow): ``mount`` still takes it, resolved through
        ``/etc/hosts`` or a resolver that serves it (nfs(5) takes any name the system
        resolver resolves)."""
        if "_" not in self.nfs_server:
            return None
        return (
            f"The NFS server {self.nfs_server} has '_' in its name, which DNS host names "
            "do not allow (RFC 1123): mount resolves it only through /etc/hosts or a "
            "resolver that serves that name, so add it there on every node (or use the "
            "server's IP address)."
        )

    @property
    def s3_scheme(self) -> str:
        """``https`` unless the endpoint was given with ``http://``."""
        endpoint = _ENDPOINT.fullmatch(self.s3_endpoint)
        return (endpoint and endpoint["scheme"]) or "https"

    @property
    def s3_tls(self) -> bool:
        """Whether requests to the S3 endpoint use TLS."""
        return self.s3_scheme == "https"

    @property
    def s3_host(self) -> str:
        """The endpoint's ``host`` or ``host:port``, without scheme."""
        return self.s3_endpoint.split("://", 1)[-1]

    @property
    def s3_url(self) -> str:
        """The endpoint as a URL (``https://host:port``) for the AWS CLI."""
        return f"{self.s3_scheme}://{self.s3_host}"

    @property
    def s3_virtual_host_url(self) -> str:
        """``s3://<bucket>.<host[:port]>``: LMCache's virtual-hosted S3 URL form (the text
        after ``s3://`` is sent as the Host header, ``s3_connector.py``)."""
        return f"s3://{self.s3_bucket}.{self.s3_host}"

    def shared_dir(self, engine: str) -> str:
        """Directory of ``engine``'s files on the shared NFS mount."""
        return f"{self.nfs_mount}/{engine}"

    S3_PREFIX = "kv"
    """vLLM's ``obj`` tier key prefix (its keys name the model themselves)."""

    @property
    def s3_is_aws(self) -> bool:
        """Whether the endpoint is AWS S3 (``*.amazonaws.com``)."""
        return self.s3_host.split(":", 1)[0].endswith(".amazonaws.com")

    def lmcache_s3_client(self) -> dict[str, Any]:
        """LMCache ``extra_config`` of the S3 client (module doc): the NetApp seed's
        StorageGRID settings, none for AWS."""
        if self.s3_is_aws:
            return {}
        return {"s3_prefer_http2": False, "s3_num_io_threads": 320}


TIER_FIELDS = {f.name: f for f in dataclasses.fields(TierOptions)}
"""The fields of :class:`TierOptions` by name, in declaration order."""


def nfs_mount_script(options: TierOptions) -> str:
    """Bash script mounting the NAS export on a node (and the matching fstab line)."""
    source = f"{options.nfs_server}:{options.nfs_export}"
    mount_opts = NFS_MOUNT_OPTIONS[options.nfs_mount_kind]
    other = next(k for k in NFS_MOUNT_KINDS if k != options.nfs_mount_kind)
    title = (
        "Mount the shared KV tier (pNFS over RDMA/RoCE, NFS 4.1 with trunk discovery)"
        if options.nfs_mount_kind == "pnfs-rdma"
        else "Mount the shared KV tier (NFS 4.2; pNFS layouts are used when the NAS offers them)"
    )
    return shell.script(
        title=title,
        comments=(
            "Run on every node, as root. For a permanent mount add to /etc/fstab:",
            f"{source} {options.nfs_mount} nfs {mount_opts},_netdev 0 0",
            f"The {other} form instead (bundle option nfs_mount_kind={other}):",
            f"mount -t nfs -o {NFS_MOUNT_OPTIONS[other]} {source} {options.nfs_mount}",
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


def s3_lifecycle(options: TierOptions, *, expire_days: int = 1) -> dict[str, object]:
    """S3 lifecycle configuration that expires every object of the bucket after
    ``expire_days`` (the bucket holds the KV cache alone; module doc)."""
    if expire_days < 1:
        raise ValueError(f"expire_days must be at least 1, got {expire_days}")
    return {
        "Rules": [
            {
                "ID": "expire-kv-cache",
                "Filter": {"Prefix": ""},
                "Status": "Enabled",
                "Expiration": {"Days": expire_days},
            }
        ]
    }


def s3_setup_script(options: TierOptions) -> str:
    """Bash script: check the bucket is reachable and apply the lifecycle rule."""
    endpoint = options.s3_url
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
