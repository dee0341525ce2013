"""The Socket Mode side of the Slack stand-in: a small WebSocket server that says hello, sends envelopes
(events, commands) to PaperPing and records the acknowledgements it gets back."""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import struct
import threading
import time
import uuid
from typing import Any

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def _frame(opcode: int, data: bytes) -> bytes:
    head = bytes([0x80 | opcode])
    n = len(data)
    if n < 126:
        head += bytes([n])
    elif n < 65536:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + data


class SocketModeStandIn:
    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.client: socket.socket | None = None
        self.acks: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.sock.getsockname()[1]}/link"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(4096)
            key = next(
                line.split(b":", 1)[1].strip()
                for line in request.split(b"\r\n")
                if line.lower().startswith(b"sec-websocket-key")
            )
            accept = base64.b64encode(
                hashlib.sha1(key + _GUID.encode()).digest()
            ).decode()  # SHA-1 is what the WebSocket handshake specifies
            conn.sendall(
                (
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Accept: {accept}\r\n\r\n"
                ).encode()
            )
            self.client = conn
            self._send({"type": "hello", "num_connections": 1, "debug_info": {"host": "stand-in"}})
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _recv_exact(self, conn: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    def _read(self, conn: socket.socket) -> None:
        try:
            while True:
                b0, b1 = self._recv_exact(conn, 2)
                opcode, n = b0 & 0x0F, b1 & 0x7F
                if n == 126:
                    n = struct.unpack("!H", self._recv_exact(conn, 2))[0]
                elif n == 127:
                    n = struct.unpack("!Q", self._recv_exact(conn, 8))[0]
                mask = self._recv_exact(conn, 4) if b1 & 0x80 else b"\0\0\0\0"
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(self._recv_exact(conn, n)))
                if opcode == 0x9:
                    with self.lock:
                        conn.sendall(_frame(0xA, data))
                elif opcode == 0x1:
                    with self.lock:
                        self.acks.append(json.loads(data))
                elif opcode == 0x8:
                    return
        except (ConnectionError, OSError):
            return

    def _send(self, message: dict[str, Any]) -> None:
        assert self.client is not None
        with self.lock:
            self.client.sendall(_frame(0x1, json.dumps(message).encode()))

    def wait_connected(self, seconds: float = 10) -> None:
        deadline = time.time() + seconds
        while self.client is None and time.time() < deadline:
            time.sleep(0.05)
        assert self.client is not None, "the app did not connect"

    def send_event(self, payload: dict[str, Any], kind: str = "events_api") -> str:
        envelope_id = str(uuid.uuid4())
        self._send({"envelope_id": envelope_id, "type": kind, "payload": payload, "accepts_response_payload": False})
        return envelope_id

    def stop(self) -> None:
        self.sock.close()
        if self.client is not None:
            self.client.close()
