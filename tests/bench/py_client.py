"""The Python SDK's client side of the round-trip benchmark (tests/bench, benches/mcp_roundtrip.rs).

Usage: py_client.py stdio|http TARGET CALLS ROUNDS [MODE]
TARGET is a server command line (stdio) or URL (http). Prints one line per round:
the median microseconds of a tools/call `echo` on one persistent connection.
"""
import asyncio
import shlex
import statistics
import sys
import time

from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main():
    kind, target, calls, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    mode = sys.argv[5] if len(sys.argv) > 5 else "legacy"
    if kind == "stdio":
        argv = shlex.split(target)
        server = StdioServerParameters(command=argv[0], args=argv[1:])
    else:
        server = target
    async with Client(server, mode=mode) as client:
        await client.call_tool("echo", {"text": "warm-up"})
        for _ in range(rounds):
            took = []
            for _ in range(calls):
                t0 = time.perf_counter()
                r = await client.call_tool("echo", {"text": "ping"})
                took.append(time.perf_counter() - t0)
            assert not r.is_error
            print(f"{statistics.median(took) * 1e6:.1f}", flush=True)


asyncio.run(main())
