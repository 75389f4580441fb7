"""The Python SDK (mcp 2.x) as a client of tai's MCP server, for tai's interop tests.

Usage: py_client.py MODE COMMAND...          (stdio: tai --serve-mcp-stdio)
       py_client.py MODE --http URL KEY      (Streamable HTTP with a bearer key)
MODE is legacy, auto or 2026-07-28. Prints one JSON object: the tools listed and the
result of a list_dir call on ".".
"""
import asyncio
import json
import os
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main():
    mode, argv = sys.argv[1], sys.argv[2:]
    if argv[0] == "--http":
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers={"Authorization": "Bearer " + argv[2]})
        server = streamable_http_client(argv[1], http_client=http)
    else:
        # The SDK hands a child only a default environment: pass tai's own files along,
        # so the test's vault is used, never the user's.
        env = {k: v for k, v in os.environ.items() if k.startswith("TAI_")}
        server = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    async with Client(server, mode=mode) as client:
        tools = await client.list_tools()
        r = await client.call_tool("list_dir", {"path": "."})
        bad = await client.call_tool("read_file", {"path": "/nonexistent/file"})
        print(json.dumps({
            "protocol": client.protocol_version,
            "tools": [t.name for t in tools.tools],
            "list_dir": [c.text for c in r.content],
            "list_dir_error": r.is_error,
            "missing_file_error": bad.is_error,
        }))


asyncio.run(main())
