"""MCP over stdio that answers every line it is sent.

The SDK's stdio transport drops a line it cannot parse (not JSON, not UTF-8, a lone surrogate, not a JSON-RPC
message) without a reply, so a client waiting on that request id hangs forever. JSON-RPC 2.0 wants an error
for each: ``-32700`` (parse error, id null) for what is not JSON, ``-32600`` (invalid request, with the id when
one can be read) for what is JSON but not a valid message. This transport reads lines itself, answers those
errors, and hands every valid message to the server exactly as the SDK's transport would.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server import MCPServer
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage

from cortex import jsonsafe

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def _error(request_id: Any, code: int, message: str) -> SessionMessage:
    valid_id = request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None
    if isinstance(valid_id, str):
        try:
            valid_id.encode("utf-8")
        except UnicodeEncodeError:  # an id that cannot be written back: answer as to an unreadable request
            valid_id = None
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=valid_id,
                                             error=types.ErrorData(code=code, message=message)))


def parse_line(line: bytes) -> SessionMessage:
    """The message a line carries, or the JSON-RPC error to answer it with (a ``JSONRPCError`` message)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error(None, PARSE_ERROR, f"Parse error: the line is not UTF-8 ({exc.reason} at byte {exc.start})")
    try:
        data = jsonsafe.loads(text)
    except ValueError as exc:
        return _error(None, PARSE_ERROR, f"Parse error: the line is not JSON ({exc})")
    request_id = data.get("id") if isinstance(data, dict) else None
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return _error(request_id, INVALID_REQUEST,
                      "Invalid request: a string holds a lone surrogate (\\ud800-\\udfff), which is not Unicode text")
    try:
        message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except Exception as exc:  # noqa: BLE001 - any validation failure is an invalid request to the client
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return _error(request_id, INVALID_REQUEST, f"Invalid request: not a JSON-RPC 2.0 message ({first})")
    return SessionMessage(message)


async def serve_stdio(server: MCPServer) -> None:
    """Run ``server`` over this process's stdin and stdout until stdin closes."""
    stdin = anyio.wrap_file(sys.stdin.buffer)
    stdout = anyio.wrap_file(sys.stdout.buffer)
    sys.stdout = sys.stderr  # a stray print must not corrupt the wire
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    replies = write_stream.clone()

    async def reader() -> None:
        async with read_writer, replies:
            async for line in stdin:
                if not line.strip():
                    continue
                parsed = parse_line(line)
                if isinstance(parsed.message, types.JSONRPCError):
                    await replies.send(parsed)
                else:
                    await read_writer.send(parsed)

    async def writer() -> None:
        async with write_reader:
            async for session_message in write_reader:
                data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await stdout.write(data.encode("utf-8") + b"\n")
                await stdout.flush()

    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does the same
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reader)
        tasks.start_soon(writer)
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
        tasks.cancel_scope.cancel()


def run_stdio(server: MCPServer) -> None:
    """``cortex mcp``: serve over stdio (blocking)."""
    anyio.run(serve_stdio, server)
