"""The Hugging Face Hub edge: a model's metadata through ``huggingface_hub``.

One lookup makes these calls, all to the configured endpoint and nowhere else:

1. ``HfApi.model_info(files_metadata=True)``: ``GET /api/models/{repo}[/revision/{rev}]``
   gives the commit ``sha``, the file list with sizes, ``gated``, ``cardData.license``,
   ``pipeline_tag`` and the safetensors parameter counts;
2. ``HfApi.hf_hub_download`` of ``config.json`` at that commit (``HEAD`` then ``GET``
   ``/{repo}/resolve/{sha}/config.json``) into a temporary directory;
3. when the repo has one, ``model.safetensors.index.json`` the same way, for the
   checkpoint size (``metadata.total_size``).

Checkpoint bytes are counted once: the index's total (or the sizes of the shards its
``weight_map`` names) wins; a consolidated copy beside the shards (Mistral's
``consolidated.safetensors``) is never added. Without an index, a single
``model.safetensors`` counts; without either, the Hub's parameter counts per dtype.
Sources: Hugging Face Hub API (``/api/models``), safetensors index format, safetensors
dtype table (F8_E4M3 1 byte, BF16 2 bytes, F32 4 bytes…).

The lookup runs in a daemon thread with a deadline (``timeout_s``), so a slow Hub never
holds a page or the CLI longer than that.
"""

from __future__ import annotations

import queue
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from huggingface_hub import HfApi
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.utils.tqdm import disable_progress_bars

from configurator.modelhub.errors import HubUnreachableError, LookupFailure, ModelLookupError
from configurator.uploads import MAX_CONFIG_BYTES, JsonRefused, parse_json
from sizing.errors import gettext_noop

CONFIG_FILE = "config.json"
INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"

TEXT_GENERATION_TAGS = frozenset(
    {
        "text-generation",
        "image-text-to-text",
        "video-text-to-text",
        "audio-text-to-text",
        "any-to-any",
        "text2text-generation",
    }
)
"""Hub pipeline tags of models that generate text with a decoder and a KV cache."""

SAFETENSORS_DTYPE_BYTES: Mapping[str, float] = {
    "F64": 8,
    "I64": 8,
    "F32": 4,
    "I32": 4,
    "BF16": 2,
    "F16": 2,
    "I16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
    "F4": 0.5,
}
"""Bytes per element of each safetensors dtype (safetensors format specification)."""

disable_progress_bars()


@dataclass(frozen=True)
class HubClient:
    """How to reach the Hub: ``endpoint`` URL, ``token`` for gated repos, ``timeout_s``."""

    endpoint: str
    token: str | None
    timeout_s: float


@dataclass(frozen=True)
class HubMetadata:
    """What one Hub revision says about a model.

    Attributes:
        repo_id: the id as the Hub spells it.
        sha: the revision's commit hash (40 hex digits).
        config: the parsed ``config.json``.
        checkpoint_bytes: tensor bytes counted once, or ``None`` when unknown.
        checkpoint_source: where ``checkpoint_bytes`` comes from.
        total_params: the Hub's parameter count, or ``None``.
        gated: ``""`` when open, else the Hub's gating mode (``auto``, ``manual``).
        license: the model card's license id, or ``""``.
        pipeline_tag: the Hub's task tag, or ``""``.
    """

    repo_id: str
    sha: str
    config: dict[str, Any]
    checkpoint_bytes: int | None
    checkpoint_source: str
    total_params: int | None
    gated: str
    license: str
    pipeline_tag: str


def fetch_with_deadline(repo_id: str, *, revision: str | None, client: HubClient) -> HubMetadata:
    """:func:`fetch_metadata` in a daemon thread, abandoned after ``client.timeout_s``.

    Raises:
        ModelLookupError: the Hub answered and the model cannot be sized.
        HubUnreachableError: no answer within the deadline, or no connection.
    """
    results: queue.Queue[HubMetadata | BaseException] = queue.Queue(maxsize=1)

    def work() -> None:
        try:
            results.put(fetch_metadata(repo_id, revision=revision, client=client))
        except BaseException as exc:
            results.put(exc)

    threading.Thread(target=work, name=f"hub-lookup {repo_id}", daemon=True).start()
    try:
        outcome = results.get(timeout=client.timeout_s)
    except queue.Empty:
        raise _unreachable(None, client) from None
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def fetch_metadata(repo_id: str, *, revision: str | None, client: HubClient) -> HubMetadata:
    """Config, checkpoint size, gating and license of ``repo_id`` at ``revision``.

    Args:
        repo_id: a validated ``owner/name``.
        revision: a branch, tag or commit; ``None`` for the default branch.
        client: endpoint, token and per-request timeout.

    Raises:
        ModelLookupError: repo or revision not found, gated without access, GGUF
            only, not a text-generation model, malformed ``config.json``.
        HubUnreachableError: connection refused, timed out, or a server error.
    """
    api = HfApi(endpoint=client.endpoint, token=client.token or False)
    try:
        info = api.model_info(
            repo_id, revision=revision, files_metadata=True, timeout=client.timeout_s
        )
    except HfHubHTTPError as exc:
        raise _lookup_error(exc, repo_id, revision, gated=False, client=client) from exc
    except (httpx2.TransportError, OfflineModeIsEnabled) as exc:
        raise _unreachable(exc, client) from exc

    files = {sibling.rfilename: sibling for sibling in info.siblings or []}
    gated = str(info.gated or "")
    pipeline_tag = str(info.pipeline_tag or "")
    if CONFIG_FILE not in files:
        if any(name.lower().endswith(".gguf") for name in files):
            raise ModelLookupError(
                LookupFailure.GGUF_ONLY,
                template=gettext_noop(
                    "%(model)s holds only GGUF files, which llama.cpp runs; the serving engines "
                    "sized here load the original safetensors checkpoint: enter the repo the "
                    "GGUF was converted from"
                ),
                values={"model": repo_id},
            )
        raise ModelLookupError(
            LookupFailure.NOT_TEXT_GENERATION,
            template=gettext_noop(
                "%(model)s has no config.json, so it is not a Transformers text-generation "
                "model that vLLM or SGLang can serve"
            ),
            values={"model": repo_id},
        )
    if pipeline_tag and pipeline_tag not in TEXT_GENERATION_TAGS:
        raise ModelLookupError(
            LookupFailure.NOT_TEXT_GENERATION,
            template=gettext_noop(
                "%(model)s is a %(pipeline_tag)s model, not a text-generation model: only "
                "models that generate text keep a KV cache to offload"
            ),
            values={"model": repo_id, "pipeline_tag": pipeline_tag},
        )
    for name in (CONFIG_FILE, INDEX_FILE):
        size = getattr(files.get(name), "size", None) or 0
        if size > MAX_CONFIG_BYTES:
            raise ModelLookupError(
                LookupFailure.MALFORMED_CONFIG,
                template=gettext_noop(
                    "%(file)s of %(model)s is %(size)s bytes, larger than any model's "
                    "(%(max_bytes)s at most); it is not read"
                ),
                values={
                    "file": name,
                    "model": repo_id,
                    "size": size,
                    "max_bytes": MAX_CONFIG_BYTES,
                },
            )
    sha = str(info.sha or revision or "main")
    with tempfile.TemporaryDirectory(prefix="modelhub-") as tmp:
        fetch = _Downloader(api, repo_id, sha, Path(tmp), client, gated=bool(gated))
        config = fetch.json(CONFIG_FILE)
        if not isinstance(config, dict):
            raise ModelLookupError(
                LookupFailure.MALFORMED_CONFIG,
                template=gettext_noop("the config.json of %(model)s is not a JSON object"),
                values={"model": repo_id},
            )
        checkpoint_bytes, checkpoint_source = _checkpoint_bytes(fetch, files, info.safetensors)
    card = info.card_data
    license_id = getattr(card, "license", None) if card is not None else None
    total_params = getattr(info.safetensors, "total", None)
    return HubMetadata(
        repo_id=str(info.id or repo_id),
        sha=sha,
        config=config,
        checkpoint_bytes=checkpoint_bytes,
        checkpoint_source=checkpoint_source,
        total_params=int(total_params) if total_params else None,
        gated=gated,
        license=str(license_id or ""),
        pipeline_tag=pipeline_tag,
    )


class _Downloader:
    """Downloads small JSON files of one commit into a temporary directory."""

    def __init__(
        self, api: HfApi, repo_id: str, sha: str, tmp: Path, client: HubClient, *, gated: bool
    ) -> None:
        self.api, self.repo_id, self.sha, self.tmp = api, repo_id, sha, tmp
        self.client, self.gated = client, gated

    def json(self, filename: str) -> Any:
        try:
            path = self.api.hf_hub_download(
                self.repo_id,
                filename,
                revision=self.sha,
                cache_dir=self.tmp,
                etag_timeout=self.client.timeout_s,
            )
        except HfHubHTTPError as exc:
            raise _lookup_error(
                exc, self.repo_id, self.sha, gated=self.gated, client=self.client
            ) from exc
        except (httpx2.TransportError, LocalEntryNotFoundError, OfflineModeIsEnabled) as exc:
            raise _unreachable(exc, self.client) from exc
        # Read with the limits of an upload (configurator.uploads.parse_json): a public
        # repo is as untrusted as a customer's file. NaN and Infinity are taken, as
        # transformers reads them.
        try:
            return parse_json(Path(str(path)).read_text("utf-8"), allow_constants=True)
        except (UnicodeDecodeError, JsonRefused) as exc:
            detail = exc.detail if isinstance(exc, JsonRefused) else str(exc)
            raise ModelLookupError(
                LookupFailure.MALFORMED_CONFIG,
                template=gettext_noop("%(file)s of %(model)s is not valid JSON (%(detail)s)"),
                values={"file": filename, "model": self.repo_id, "detail": detail},
            ) from exc


def _checkpoint_bytes(
    fetch: _Downloader, files: Mapping[str, Any], safetensors: Any
) -> tuple[int | None, str]:
    """Tensor bytes counted once, and where they come from (see the module docstring)."""
    if INDEX_FILE in files:
        index = fetch.json(INDEX_FILE)
        if isinstance(index, dict):
            metadata = index.get("metadata") or {}
            total = metadata.get("total_size") if isinstance(metadata, dict) else None
            if isinstance(total, int | float) and total > 0:
                return int(total), f"{INDEX_FILE} metadata.total_size at {fetch.sha[:12]}"
            weight_map = index.get("weight_map") or {}
            shards = set(weight_map.values()) if isinstance(weight_map, dict) else set()
            sizes = [getattr(files.get(name), "size", None) for name in shards]
            if shards and all(sizes):
                return sum(int(s) for s in sizes if s), (
                    f"sizes of the {len(shards)} shards named in {INDEX_FILE}"
                )
    single = files.get(SINGLE_FILE)
    if single is not None and getattr(single, "size", None):
        return int(single.size), f"{SINGLE_FILE} file size at {fetch.sha[:12]}"
    counts = getattr(safetensors, "parameters", None) or {}
    if counts and all(dtype in SAFETENSORS_DTYPE_BYTES for dtype in counts):
        total_bytes = sum(n * SAFETENSORS_DTYPE_BYTES[dtype] for dtype, n in counts.items())
        return round(total_bytes), "Hub safetensors parameter counts × bytes per dtype"
    return None, ""


def _unreachable(exc: BaseException | None, client: HubClient) -> HubUnreachableError:
    """The outage as a sentence: a timeout (also one wrapped by the library) or no route."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, httpx2.TimeoutException):
        cause = cause.__cause__ or cause.__context__
    if exc is None or cause is not None:
        return HubUnreachableError(
            gettext_noop("the Hugging Face Hub did not answer within %(seconds)s s"),
            {"seconds": client.timeout_s},
        )
    return HubUnreachableError(
        gettext_noop("the Hugging Face Hub at %(endpoint)s could not be reached"),
        {"endpoint": client.endpoint},
    )


def _lookup_error(
    exc: HfHubHTTPError, repo_id: str, revision: str | None, *, gated: bool, client: HubClient
) -> Exception:
    """Translate a Hub HTTP error into a sentence for the user (or an outage)."""
    values = {"model": repo_id, "page": f"{client.endpoint.rstrip('/')}/{repo_id}"}
    if isinstance(exc, GatedRepoError) or (gated and isinstance(exc, RepositoryNotFoundError)):
        return ModelLookupError(
            LookupFailure.GATED,
            template=gettext_noop(
                "%(model)s is gated: its files are only shared with accounts that accepted its "
                "license on %(page)s, and the account of the configured HF_TOKEN has no access "
                "yet: request it there, pick a model from the offline catalog or upload its "
                "config.json"
            )
            if client.token
            else gettext_noop(
                "%(model)s is gated: its files are only shared with accounts that accepted its "
                "license on %(page)s; pick a model from the offline catalog, upload its "
                "config.json, or have HF_TOKEN set to a token of an account with access"
            ),
            values=values,
        )
    if isinstance(exc, RepositoryNotFoundError):
        return ModelLookupError(
            LookupFailure.NOT_FOUND,
            template=gettext_noop(
                "%(model)s was not found on the Hugging Face Hub: check the spelling "
                "(owner/name), or upload its config.json if it is a private model"
            ),
            values=values,
        )
    if isinstance(exc, RevisionNotFoundError):
        return ModelLookupError(
            LookupFailure.REVISION_NOT_FOUND,
            template=gettext_noop(
                "%(model)s has no revision %(revision)r: give a branch, tag or commit of that repo"
            ),
            values={**values, "revision": str(revision)},
        )
    if isinstance(exc, RemoteEntryNotFoundError):
        return ModelLookupError(
            LookupFailure.NOT_TEXT_GENERATION,
            template=gettext_noop(
                "%(model)s lists a file it does not serve (%(path)s); it cannot be sized"
            ),
            values={**values, "path": str(exc.response.url.path)},
        )
    status = exc.response.status_code if exc.response is not None else 0
    return HubUnreachableError(
        gettext_noop("the Hugging Face Hub answered HTTP %(status)s"), {"status": status}
    )
