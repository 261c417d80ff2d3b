"""OpenAICompatibleEngine against a small chat-completions server the tests start.

The server is http.server in a thread on 127.0.0.1 (port 0: the system picks a free one).
Nothing reaches any other host: proxies are switched off and every connection the tests
open is checked to go to 127.0.0.1. The API key is a made-up value in an environment
variable; no error message, traceback text or repr may contain it.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import traceback
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from minigrad import Variable
from minigrad.text import TGD, MustInclude, OpenAICompatibleEngine

KEY = "sk-minigrad-test-7f3a9c0d1e2b4a68"
KEY_ENV = "MINIGRAD_TEST_API_KEY"
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY")


def completion(content: Any) -> bytes:
    """A chat-completions answer whose first choice says `content`."""
    answer = {
        "id": "test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
    }
    return json.dumps(answer).encode("utf-8")


class FakeServer(ThreadingHTTPServer):
    """Records each request; answers with `status` and `body` after waiting `delay` s."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.body = completion("ok")
        self.delay = 0.0
        self.release = threading.Event()  # set at teardown: a delayed answer stops waiting

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and left is expected, not worth a traceback


class Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        self.server.requests.append(
            {
                "method": "POST",
                "path": self.path,
                "headers": {name.lower(): value for name, value in self.headers.items()},
                "body": raw,
            }
        )
        if self.server.delay:
            self.server.release.wait(self.server.delay)
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.server.body)))
        self.end_headers()
        self.wfile.write(self.server.body)

    def log_message(self, *args: Any) -> None:  # quiet: no line per request on stderr
        pass


@pytest.fixture
def local_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy, the key in its variable, and any connection to another host fails the test."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "*")
    monkeypatch.setenv("NO_PROXY", "*")
    monkeypatch.setenv(KEY_ENV, KEY)
    real_connect = socket.create_connection

    def connect_locally(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        assert address[0] == "127.0.0.1", f"a test tried to reach {address!r}"
        return real_connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", connect_locally)


@pytest.fixture
def server(local_only: None) -> Iterator[FakeServer]:
    httpd = FakeServer()
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield httpd
    httpd.release.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def engine_for(server: FakeServer, **options: Any) -> OpenAICompatibleEngine:
    options.setdefault("api_key_env", KEY_ENV)
    options.setdefault("timeout", 5.0)
    return OpenAICompatibleEngine(server.url, "test-model", **options)


def assert_no_key(error: BaseException) -> None:
    """The key is in none of what a user may see of an error."""
    shown = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    for text in (str(error), repr(error), shown):
        assert KEY not in text


def sent_json(request: dict[str, Any]) -> dict[str, Any]:
    return json.loads(request["body"].decode("utf-8"))


# --------------------------------------------------------------------------- requests


def test_feedback_sends_a_chat_completion_request(server: FakeServer):
    server.body = completion('  Add the word "minigrad".\n')
    engine = OpenAICompatibleEngine(
        server.url + "/", "test-model", api_key_env=KEY_ENV, temperature=0.25
    )
    advice = engine.feedback("MustInclude: score 0.00.", role="answer")
    assert advice == 'Add the word "minigrad".'  # the content, stripped
    (request,) = server.requests
    assert request["method"] == "POST"
    assert request["path"] == "/v1/chat/completions"  # the trailing "/" of base_url dropped
    assert request["headers"]["authorization"] == f"Bearer {KEY}"
    assert request["headers"]["content-type"] == "application/json"
    body = sent_json(request)
    assert set(body) == {"model", "messages", "temperature"}
    assert body["model"] == "test-model"
    assert body["temperature"] == 0.25
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    system, user = (m["content"] for m in body["messages"])
    assert "'answer'" in system and "feedback" in system
    assert "MustInclude: score 0.00." in user


def test_rewrite_sends_text_feedback_and_constraints(server: FakeServer):
    server.body = completion("A fast minigrad kettle.")
    engine = engine_for(server)
    new_text = engine.rewrite(
        "A kettle.",
        'Add the word "minigrad".',
        role="description",
        constraints=['Keep the word "kettle".'],
    )
    assert new_text == "A fast minigrad kettle."
    system, user = (m["content"] for m in sent_json(server.requests[0])["messages"])
    assert "'description'" in system
    assert "A kettle." in user
    assert 'Add the word "minigrad".' in user
    assert 'Keep the word "kettle".' in user
    engine.rewrite("x", "y", role="r", constraints=[])
    assert "none" in sent_json(server.requests[1])["messages"][1]["content"]


def test_the_engine_drives_evaluate_and_tgd(server: FakeServer):
    engine = engine_for(server)
    answer = Variable("hello world", role="answer", requires_grad=True)
    server.body = completion('Mention "minigrad".')
    _, explanation = MustInclude(["minigrad"])(answer, engine)
    explanation.backward()
    assert answer.grad.data == 'Mention "minigrad".'
    assert answer.grad.role == "feedback to answer"
    server.body = completion("hello minigrad world")
    TGD([answer], engine=engine).step()
    assert answer.data == "hello minigrad world"
    feedback_request, rewrite_request = (sent_json(r) for r in server.requests)
    assert explanation.data in feedback_request["messages"][1]["content"]
    assert "hello world" in rewrite_request["messages"][1]["content"]
    assert 'Mention "minigrad".' in rewrite_request["messages"][1]["content"]


def test_no_authorization_header_without_a_key_variable(server: FakeServer):
    engine = engine_for(server, api_key_env=None)
    assert engine.complete("system", "user") == "ok"
    assert "authorization" not in server.requests[0]["headers"]


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("value", [None, ""], ids=["unset", "empty"])
def test_a_missing_key_variable_is_named_and_nothing_is_sent(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch, value: str | None
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # the key exists, but not where it is looked for
    if value is None:
        monkeypatch.delenv(KEY_ENV)
    else:
        monkeypatch.setenv(KEY_ENV, value)
    engine = engine_for(server)
    with pytest.raises(RuntimeError, match=f"environment variable {KEY_ENV} is not set") as caught:
        engine.feedback("judgement", role="answer")
    assert "api_key_env=None" in str(caught.value)
    assert_no_key(caught.value)
    assert server.requests == []


def test_a_server_error_is_reported_with_its_message(server: FakeServer):
    server.status = 500
    server.body = json.dumps({"error": {"message": "the model is overloaded"}}).encode()
    with pytest.raises(RuntimeError, match="answered HTTP 500") as caught:
        engine_for(server).feedback("judgement", role="answer")
    assert "the model is overloaded" in str(caught.value)
    assert server.url in str(caught.value)
    assert_no_key(caught.value)


def test_a_server_error_that_is_not_json_is_reported_as_text(server: FakeServer):
    server.status = 503
    server.body = b"upstream exploded"
    with pytest.raises(RuntimeError, match="HTTP 503.*upstream exploded") as caught:
        engine_for(server).rewrite("t", "f", role="r", constraints=[])
    assert_no_key(caught.value)


@pytest.mark.parametrize(
    "body",
    [
        b"this is not json",
        b"[1, 2, 3]",
        b'{"choices": []}',
        b'{"choices": [{"message": {}}]}',
        completion(None),
        completion(["a", "list"]),
    ],
    ids=["not-json", "a-list", "no-choices", "no-content", "null-content", "list-content"],
)
def test_a_malformed_answer_is_a_runtime_error(server: FakeServer, body: bytes):
    server.body = body
    with pytest.raises(RuntimeError, match="not a chat completion|non-text message") as caught:
        engine_for(server).feedback("judgement", role="answer")
    assert_no_key(caught.value)


def test_a_slow_server_times_out(server: FakeServer):
    server.delay = 3.0
    engine = engine_for(server, timeout=0.2)
    start = time.perf_counter()
    with pytest.raises(TimeoutError, match=r"did not answer within 0.2 s") as caught:
        engine.feedback("judgement", role="answer")
    assert time.perf_counter() - start < 2.0
    assert_no_key(caught.value)


def test_an_unreachable_port_is_a_connection_error(local_only: None):
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    engine = OpenAICompatibleEngine(f"http://127.0.0.1:{port}/v1", "m", api_key_env=KEY_ENV)
    with pytest.raises(ConnectionError, match=f"cannot reach http://127.0.0.1:{port}/v1") as caught:
        engine.feedback("judgement", role="answer")
    assert_no_key(caught.value)


def test_the_key_is_never_stored_or_shown(server: FakeServer):
    engine = engine_for(server)
    engine.feedback("judgement", role="answer")
    assert repr(engine) == f"OpenAICompatibleEngine(base_url={server.url!r}, model='test-model')"
    assert KEY not in repr(engine) and KEY not in str(engine)
    assert KEY not in repr(vars(engine))


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (401, json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}}).encode()),
        (200, f"<html>bad gateway for Bearer {KEY}</html>".encode()),
    ],
    ids=["http-error", "malformed-answer"],
)
def test_a_key_echoed_by_the_server_is_not_shown(server: FakeServer, status: int, body: bytes):
    server.status, server.body = status, body
    with pytest.raises(RuntimeError) as caught:
        engine_for(server).feedback("judgement", role="answer")
    assert_no_key(caught.value)


# --------------------------------------------------------------------------- construction


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"base_url": "127.0.0.1:8080/v1"}, "base_url must start with http:// or https://"),
        ({"base_url": "ftp://127.0.0.1/v1"}, "base_url must start with http:// or https://"),
        ({"base_url": None}, "base_url must start with"),
        ({"model": ""}, "model must be a non-empty str"),
        ({"model": None}, "model must be a non-empty str"),
        ({"timeout": 0}, "timeout must be a positive number"),
        ({"timeout": -1.5}, "timeout must be a positive number"),
        ({"timeout": "5"}, "timeout must be a positive number"),
    ],
    ids=[
        "no-scheme",
        "ftp",
        "url-none",
        "empty-model",
        "model-none",
        "zero-timeout",
        "negative-timeout",
        "str-timeout",
    ],
)
def test_bad_constructor_arguments(options: dict[str, Any], message: str):
    arguments = {"base_url": "http://127.0.0.1:1/v1", "model": "m", **options}
    with pytest.raises(ValueError, match=message):
        OpenAICompatibleEngine(**arguments)


def test_connections_to_other_hosts_are_refused_by_the_guard(local_only: None):
    """The local_only guard is what urllib's connections go through (checked, not tried)."""
    connection = http.client.HTTPConnection("192.0.2.1", 9)
    assert connection._create_connection is socket.create_connection
    with pytest.raises(AssertionError, match="tried to reach"):
        socket.create_connection(("192.0.2.1", 9), timeout=0.01)


def test_constructing_sends_nothing(local_only: None):
    engine = OpenAICompatibleEngine("https://example.invalid/v1", "m")  # never contacted
    assert engine.base_url == "https://example.invalid/v1"
    assert engine.timeout == 60.0 and engine.api_key_env == "OPENAI_API_KEY"
