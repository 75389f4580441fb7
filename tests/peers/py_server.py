"""A tiny MCP server written with the Python SDK (mcp 2.x), for tai's interop tests.

Usage: py_server.py stdio | py_server.py http PORT
Both eras are served: the SDK answers initialize (2025-11-25) and server/discover
(2026-07-28) on the same surface.
"""
import sys

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("py-peer", instructions="The Python SDK peer of tai's tests.")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def fail() -> str:
    """Always fails (a tool error, not a protocol error)."""
    raise ValueError("failed on purpose")


@mcp.tool()
def big(size: int) -> str:
    """Return size characters of text."""
    return "y" * size


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), json_response=False)
    else:
        mcp.run()
