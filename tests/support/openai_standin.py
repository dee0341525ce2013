"""A local stand-in of an OpenAI-compatible chat server: answers, errors or stalls as a test asks."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OpenAIStandIn:
    """``responder(prompt) -> text``; ``status`` other than 200 answers an error; ``delay`` stalls each answer;
    ``body``, when set, is sent as the whole answer instead (a server that is not quite OpenAI-compatible);
    ``finish_reason`` and ``refusal`` are what the answer's choice says of itself (a model declining)."""

    def __init__(self, responder: Callable[[str], str]) -> None:
        self.responder = responder
        self.status = 200
        self.delay = 0.0
        self.body: bytes | None = None
        self.finish_reason = "stop"
        self.refusal: str | None = None
        self.prompts: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                prompt = body["messages"][-1]["content"]
                standin.prompts.append(prompt)
                if standin.delay:
                    time.sleep(standin.delay)
                if standin.status != 200:
                    payload: dict[str, Any] = {"error": {"message": "server error", "type": "server_error"}}
                else:
                    text = standin.responder(prompt)
                    payload = {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "m"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": standin.finish_reason,
                                "message": {"role": "assistant", "content": text, "refusal": standin.refusal},
                            }
                        ],
                        "usage": {
                            "prompt_tokens": len(prompt) // 4,
                            "completion_tokens": len(text) // 4,
                            "total_tokens": (len(prompt) + len(text)) // 4,
                        },
                    }
                data = standin.body if standin.body is not None else json.dumps(payload).encode()
                try:
                    self.send_response(standin.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler


def chain_answer(prompt: str) -> str:
    """Plausible answers to PaperPing's four prompts that keep what they are told to keep."""
    if prompt.startswith("You edit a draft"):
        draft = prompt.split("Draft:\n<<<DATA\n", 1)[1].split("\nDATA>>>", 1)[0]
        return re.sub(r"because (\w+ \w+ \w+)", r"because *\1*", draft, count=1)
    if "Opening: This paper relates to" in prompt:
        found = re.search(r"Opening: This paper relates to (.+) because", prompt)
        title = found.group(1) if found else "that paper"
        return f"This paper relates to {title} because both study how models handle language."
    if "Possibly of interest to" in prompt:
        found = re.search(r"Member \(write exactly this token where the member is meant\): (\S+)", prompt)
        member = found.group(1) if found else ""
        return f"Possibly of interest to {member}, who liked similar papers here."
    token = re.search(r"written (\{@U\w+\})", prompt)
    author = f" {token.group(1)} is one of its authors." if token else ""
    return "This paper proposes a method and evaluates it on several tasks." + author
