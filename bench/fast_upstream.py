"""A minimal, fast OpenAI-shaped upstream for the proxy benchmark (asyncio protocol on uvloop).

It must not be the bottleneck: it shares one core with the load generator while the gateway gets the
other. Non-streaming requests get one fixed `chat.completion` body; requests whose body contains
`"stream":true` get a short SSE stream (chunked encoding), role chunk, TOKENS content chunks, finish,
usage, `[DONE]`. Keep-alive, Content-Length request bodies only (what aiohttp and wrk send).
"""

from __future__ import annotations

import argparse
import asyncio

TOKENS = 8
_BODY = (
    b'{"id":"chatcmpl-bench","object":"chat.completion","created":1,"model":"bench","choices":[{"index":0,'
    b'"message":{"role":"assistant","content":"w0 w1 w2 w3 w4 w5 w6 w7"},"finish_reason":"length"}],'
    b'"usage":{"prompt_tokens":9,"completion_tokens":8,"total_tokens":17}}'
)
_JSON_RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                  + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY)


def _chunk(payload: bytes) -> bytes:
    data = b"data: " + payload + b"\n\n"
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


_PREFIX = b'{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"bench","choices":['
_STREAM_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
_EVENTS = (
    [_chunk(_PREFIX + b'{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}')]
    + [_chunk(_PREFIX + b'{"index":0,"delta":{"content":" w%d"},"finish_reason":null}]}' % i) for i in range(TOKENS)]
    + [_chunk(_PREFIX + b'{"index":0,"delta":{},"finish_reason":"length"}]}'),
       _chunk(_PREFIX[:-1] + b'[],"usage":{"prompt_tokens":9,"completion_tokens":8,"total_tokens":17}}'),
       _chunk(b"[DONE]") + b"0\r\n\r\n"]  # the zero-length chunk ends the body
)


class Upstream(asyncio.Protocol):
    def __init__(self, first_token_delay: float) -> None:
        self.buf = b""
        self.delay = first_token_delay

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buf[:head_end].lower()
            i = head.find(b"content-length:")
            length = int(head[i + 15:head.find(b"\r\n", i) if head.find(b"\r\n", i) > 0 else None]) if i >= 0 else 0
            end = head_end + 4 + length
            if len(self.buf) < end:
                return
            body = self.buf[head_end + 4:end]
            self.buf = self.buf[end:]
            if head.startswith(b"get"):
                self.transport.write(_JSON_RESPONSE)
            elif b'"stream":true' in body or b'"stream": true' in body:
                if self.delay:
                    asyncio.get_running_loop().call_later(self.delay, self._stream)
                else:
                    self._stream()
            elif self.delay:
                asyncio.get_running_loop().call_later(self.delay, self.transport.write, _JSON_RESPONSE)
            else:
                self.transport.write(_JSON_RESPONSE)

    def _stream(self) -> None:
        if not self.transport.is_closing():
            self.transport.write(_STREAM_HEAD + b"".join(_EVENTS))


async def main(port: int, delay: float) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Upstream(delay), "127.0.0.1", port, backlog=2048)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--first-token-ms", type=float, default=0.0, help="delay before answering")
    args = p.parse_args()
    try:
        import uvloop

        uvloop.run(main(args.port, args.first_token_ms / 1000))
    except ImportError:
        asyncio.run(main(args.port, args.first_token_ms / 1000))
