"""Real services that a fault test starts, pauses and stops itself, on ports of its own.

:class:`RedisServer` runs a ``redis-server`` process (never the machine's shared one);
``pause()`` stops it with ``SIGSTOP``: connections are still accepted by the kernel but
nothing answers, as with a hung server. :class:`TcpProxy` forwards a loopback port to
a server (the shared PostgreSQL, say) and can hold every byte in both directions, so a
test can hang a service it must not stop; it counts the connections it accepted.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

import pytest

from tests.web.ports import free_port


def _wait_listening(port: int, deadline_s: float = 10.0) -> None:
    """Return once something accepts connections on 127.0.0.1:``port``."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)


class RedisServer:
    """A private ``redis-server`` on a free loopback port, without persistence."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed")
        self.port = free_port()
        self._dir = tempfile.mkdtemp(prefix="redis-fault-")
        self._process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self._dir,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_listening(self.port)

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def pause(self) -> None:
        """Hang the server: it accepts connections but answers nothing."""
        self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        self.resume()
        self._process.terminate()
        self._process.wait(timeout=10)
        shutil.rmtree(self._dir, ignore_errors=True)


@dataclass
class TcpProxy:
    """Forward 127.0.0.1:``port`` to ``target_host``:``target_port``; ``hang()`` holds
    all traffic of every connection (new ones are accepted and then held too)."""

    target_host: str
    target_port: int
    port: int = field(default_factory=free_port)
    accepted: int = 0
    _flowing: threading.Event = field(default_factory=threading.Event)
    _stopped: threading.Event = field(default_factory=threading.Event)
    _sockets: list[socket.socket] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._flowing.set()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.settimeout(0.2)
        threading.Thread(target=self._accept, daemon=True).start()

    def hang(self) -> None:
        self._flowing.clear()

    def flow(self) -> None:
        self._flowing.set()

    def close(self) -> None:
        self._stopped.set()
        self._flowing.set()
        self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            try:
                upstream = socket.create_connection((self.target_host, self.target_port))
            except OSError:
                client.close()
                continue
            self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                self._flowing.wait()
                if self._stopped.is_set():
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


def environment_without(*names: str) -> dict[str, str]:
    """This process's environment without ``names`` (for a child process's settings)."""
    return {k: v for k, v in os.environ.items() if k not in names}
