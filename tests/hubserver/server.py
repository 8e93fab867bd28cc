"""A small Hugging Face Hub look-alike on 127.0.0.1 that serves recorded responses.

It answers the calls ``huggingface_hub`` makes for a model lookup, with the status
codes and ``X-Error-Code`` headers the Hub sends (read from ``huggingface_hub``'s
``hf_raise_for_status`` and ``file_download``):

- ``GET /api/models/{owner}/{name}[/revision/{rev}]``: the recorded ``model_info`` JSON
  (file sizes only with ``?blobs=true``, as on the Hub); unknown repo: 401
  ``RepoNotFound``; unknown revision: 404 ``RevisionNotFound``;
- ``HEAD``/``GET /{owner}/{name}/resolve/{rev}/{file}``: the file with ``X-Repo-Commit``,
  ``ETag`` and ``Content-Length``; a gated repo without the recorded token: 401
  ``GatedRepo``; with another token: 403 ``GatedRepo``; a missing file: 404
  ``EntryNotFound``.

``stall=True`` makes every request wait until the server stops (a Hub that hangs).
Every request is logged in ``requests`` as ``(method, path, authorization)``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

RECORDED = Path(__file__).resolve().parent / "recorded"


def load_recorded() -> dict[str, dict[str, Any]]:
    """The recorded repos by id, from ``recorded/<owner>--<name>.json``."""
    repos = {}
    for path in sorted(RECORDED.glob("*.json")):
        doc = json.loads(path.read_text("utf-8"))
        repos[doc["model_info"]["id"]] = doc
    return repos


@dataclass
class RecordedHub:
    """The state of one server: the repos it knows and the requests it saw."""

    repos: dict[str, dict[str, Any]]
    stall: bool = False
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    url: str = ""

    def paths(self) -> list[str]:
        """The paths requested so far, in order."""
        return [path for _method, path, _auth in self.requests]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def do_GET(self) -> None:
        self._answer(with_body=True)

    def do_HEAD(self) -> None:
        self._answer(with_body=False)

    def _answer(self, *, with_body: bool) -> None:
        hub = self.server.hub
        parts = urlsplit(self.path)
        auth = self.headers.get("authorization", "")
        hub.requests.append((self.command, parts.path, auth))
        if hub.stall:
            hub.release.wait(timeout=60)
            self.close_connection = True
            return
        segments = [unquote(s) for s in parts.path.strip("/").split("/")]
        if segments[:2] == ["api", "models"] and len(segments) >= 4:
            blobs = parse_qs(parts.query).get("blobs", [""])[0].lower() == "true"
            self._model_info(segments[2:], blobs=blobs, with_body=with_body)
        elif len(segments) >= 5 and segments[2] == "resolve":
            self._resolve(segments, auth=auth, with_body=with_body)
        else:
            self._error(404, "", "Not found", with_body=with_body)

    def _repo(self, owner: str, name: str, *, with_body: bool) -> dict[str, Any] | None:
        repo = self.server.hub.repos.get(f"{owner}/{name}")
        if repo is None:
            # The Hub answers 401 for unknown repos to anonymous callers.
            self._error(401, "RepoNotFound", "Repository not found", with_body=with_body)
        return repo

    def _model_info(self, segments: list[str], *, blobs: bool, with_body: bool) -> None:
        owner, name, *rest = segments
        repo = self._repo(owner, name, with_body=with_body)
        if repo is None:
            return
        revision = "/".join(rest[1:]) if rest[:1] == ["revision"] else "main"
        sha = self._sha(repo, revision, with_body=with_body)
        if sha is None:
            return
        info = dict(repo["model_info"], sha=sha)
        if not blobs:
            info["siblings"] = [{"rfilename": s["rfilename"]} for s in info["siblings"]]
        self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"}, with_body)

    def _resolve(self, segments: list[str], *, auth: str, with_body: bool) -> None:
        owner, name, _resolve, revision, *path = segments
        repo = self._repo(owner, name, with_body=with_body)
        if repo is None:
            return
        sha = self._sha(repo, revision, with_body=with_body)
        if sha is None:
            return
        token = repo.get("requires_token")
        if token and auth != f"Bearer {token}":
            status = 403 if auth else 401
            message = f"Access to model {owner}/{name} is restricted."
            self._error(status, "GatedRepo", message, with_body=with_body, sha=sha)
            return
        entry = repo["files"].get("/".join(path))
        if entry is None:
            self._error(404, "EntryNotFound", "Entry not found", with_body=with_body, sha=sha)
            return
        body = entry["text"].encode() if "text" in entry else json.dumps(entry["json"]).encode()
        headers = {
            "Content-Type": "application/json",
            "X-Repo-Commit": sha,
            "ETag": f'"{hashlib.sha1(body).hexdigest()}"',
        }
        self._send(200, body, headers, with_body)

    def _sha(self, repo: dict[str, Any], revision: str, *, with_body: bool) -> str | None:
        revisions: dict[str, str] = repo["revisions"]
        if revision in revisions:
            return revisions[revision]
        if revision in revisions.values():
            return revision
        self._error(404, "RevisionNotFound", "Invalid rev id", with_body=with_body)
        return None

    def _error(
        self, status: int, code: str, message: str, *, with_body: bool, sha: str = ""
    ) -> None:
        headers = {"Content-Type": "application/json", "X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        if sha:
            headers["X-Repo-Commit"] = sha
        self._send(status, json.dumps({"error": message}).encode(), headers, with_body)

    def _send(self, status: int, body: bytes, headers: dict[str, str], with_body: bool) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    hub: RecordedHub


@contextmanager
def serve(*, stall: bool = False) -> Iterator[RecordedHub]:
    """Run a recorded Hub on a free port of 127.0.0.1 for the duration of the block."""
    hub = RecordedHub(repos=load_recorded(), stall=stall)
    server = _Server(("127.0.0.1", 0), _Handler)
    server.hub = hub
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name="recorded-hub",
        daemon=True,
    )
    thread.start()
    try:
        yield hub
    finally:
        hub.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
