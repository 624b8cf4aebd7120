"""A live server on a free loopback port, and a small JSON client for it."""

import json
import threading
import urllib.error
import urllib.request

import pytest

from rouba_env.web.server import make_server

POLL_INTERVAL_S = 0.02
"""How often a serving thread checks for shutdown (keeps teardown short)."""


class Client:
    """Calls one server; every answer is (status, decoded JSON body)."""

    def __init__(self, url: str):
        self.url = url.rstrip("/")

    def call(self, method: str, path: str, body=None, raw: bytes | None = None, headers: dict | None = None):
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path, method=method, data=data,
                                         headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def get(self, path):
        return self.call("GET", path)

    def post(self, path, body=None, **kwargs):
        return self.call("POST", path, body, **kwargs)


def start(**kwargs):
    server = make_server(port=0, **{"quiet": True, **kwargs})
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_INTERVAL_S}, daemon=True)
    thread.start()
    return server, thread


@pytest.fixture
def live_server():
    """``live_server(**make_server options) -> (server, Client)``; every server started is stopped after the test."""
    running = []

    def factory(**kwargs):
        server, thread = start(**kwargs)
        running.append((server, thread))
        return server, Client(server.url)

    yield factory
    for server, thread in running:
        server.shutdown()
        server.server_close()
        thread.join()
