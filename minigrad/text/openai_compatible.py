"""OpenAICompatibleEngine: a real language model as the feedback engine, over HTTP.

It speaks the chat-completions protocol (POST {base_url}/chat/completions) that OpenAI
and many local servers (llama.cpp, vLLM, Ollama) offer, using only the standard library.
Nothing in minigrad builds one for you: it is used only when you create it, and only then
does anything leave your machine. The API key is read from an environment variable at
each request; it is never stored on the object, printed, or put in an error message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

FEEDBACK_PROMPT = (
    "You give feedback in a textual autodiff pipeline. Given a judgement of a text whose "
    "role is '{role}', write short, concrete instructions, one per line, saying how that "
    "text should change. Write only the instructions."
)
REWRITE_PROMPT = (
    "You improve a text whose role is '{role}'. Apply the feedback, respect every "
    "constraint, change as little as possible, and answer with the new text only."
)


class OpenAICompatibleEngine:
    """A feedback engine backed by a chat-completions endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout: float = 60.0,
        temperature: float = 0.0,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url must start with http:// or https://, e.g. "
                f"'http://127.0.0.1:8080/v1'; got {base_url!r}."
            )
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty str; got {model!r}.")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds; got {timeout!r}.")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.temperature = temperature

    def feedback(self, judgement: str, *, role: str) -> str:
        system = FEEDBACK_PROMPT.format(role=role)
        return self.complete(system, f"Judgement:\n{judgement}")

    def rewrite(
        self, text: str, feedback: str, *, role: str = "text", constraints: Sequence[str] = ()
    ) -> str:
        system = REWRITE_PROMPT.format(role=role)
        listed = "\n".join(f"- {c}" for c in constraints) or "- none"
        user = f"Text:\n{text}\n\nFeedback:\n{feedback}\n\nConstraints:\n{listed}"
        return self.complete(system, user)

    def complete(self, system: str, user: str) -> str:
        """One chat-completions request; returns the first choice's message content."""
        # Imported here: urllib.request is slow to import, and most users never call this.
        import urllib.error
        import urllib.request

        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "temperature": self.temperature,
        }
        headers = {"Content-Type": "application/json"}
        key = ""
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise RuntimeError(
                    f"the environment variable {self.api_key_env} is not set; export your API "
                    f"key in it, or pass api_key_env=None for a server that needs no key."
                )
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=json.dumps(body).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = response.read()
        except urllib.error.HTTPError as error:
            raise RuntimeError(
                f"{self.base_url} answered HTTP {error.code} ({error.reason}): "
                f"{_redact(_server_message(error), key)}"
            ) from None
        except TimeoutError:
            raise TimeoutError(
                f"{self.base_url} did not answer within {self.timeout:g} s; raise timeout= or "
                f"check the server."
            ) from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise TimeoutError(
                    f"{self.base_url} did not answer within {self.timeout:g} s."
                ) from None
            raise ConnectionError(f"cannot reach {self.base_url}: {error.reason}.") from None
        return _content_of(_redact_bytes(payload, key), self.base_url)

    def __repr__(self) -> str:
        return f"OpenAICompatibleEngine(base_url={self.base_url!r}, model={self.model!r})"


def _redact(text: str, key: str) -> str:
    """A server may echo the key back ("Incorrect API key provided: ..."): hide it."""
    return text.replace(key, "[redacted key]") if key else text


def _redact_bytes(payload: bytes, key: str) -> bytes:
    return payload.replace(key.encode("utf-8"), b"[redacted key]") if key else payload


def _server_message(error: Any) -> str:
    """The server's own error text, cut short (never the request, which holds the key)."""
    try:
        text = error.read().decode("utf-8", "replace")
    except OSError:
        return "no details"
    try:
        details: Any = json.loads(text)
        text = details.get("error", {}).get("message", text) if isinstance(details, dict) else text
    except (ValueError, AttributeError):
        pass
    return str(text)[:300] or "no details"


def _content_of(payload: bytes, base_url: str) -> str:
    try:
        answer = json.loads(payload.decode("utf-8"))
        content = answer["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise RuntimeError(
            f"{base_url} sent an answer that is not a chat completion (expected JSON with "
            f"choices[0].message.content); got {payload[:200]!r}."
        ) from None
    if not isinstance(content, str):
        raise RuntimeError(f"{base_url} sent a non-text message content: {content!r}.")
    return content.strip()
