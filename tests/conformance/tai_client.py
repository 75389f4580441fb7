#!/usr/bin/env python3
"""Adapter between the official MCP conformance suite's client scenarios and tai.

The suite runs this with the scenario server's URL as the last argument, the scenario in
MCP_CONFORMANCE_SCENARIO and scenario data in MCP_CONFORMANCE_CONTEXT. Every action is a
plain `tai mcp probe` run, so what is tested is tai's own client; this file only
translates the scenario into probe invocations.
"""
import json
import os
import subprocess
import sys

TAI = os.environ.get("TAI_BIN") or os.path.join(os.path.dirname(__file__), "../../target/debug/tai")
url = sys.argv[-1]
scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")


# The wire the suite asked for (each requirement set runs at its revision's version).
WIRE = ["--protocol", os.environ["MCP_CONFORMANCE_PROTOCOL_VERSION"]] if os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") else []
# OAuth: the login's "browser" is a headless hook; tai's client metadata document URL is
# the one the suite's authorization servers accept; pre-registered credentials come from
# the scenario (the secret through the environment, never argv).
env = dict(os.environ)
env["TAI_OAUTH_BROWSER"] = "python3 " + os.path.join(os.path.dirname(os.path.abspath(__file__)), "browser_hook.py")
env["TAI_OAUTH_CLIENT_METADATA_URL"] = "https://conformance-test.local/client-metadata.json"
CLIENT = []
if context.get("client_id"):
    CLIENT = ["--client-id", context["client_id"]]
    if context.get("client_secret"):
        env["TAI_OAUTH_CLIENT_SECRET"] = context["client_secret"]


def probe(*extra):
    cmd = [TAI, "mcp", "probe", url, *WIRE, *CLIENT, *extra]
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, timeout=60, env=env).returncode


def listed_tools():
    """The tools tai offers (it drops ones with invalid x-mcp-header annotations)."""
    out = subprocess.run([TAI, "mcp", "probe", url, *WIRE, *CLIENT, "--json"], capture_output=True, text=True, timeout=60, env=env)
    return json.loads(out.stdout)["tools"] if out.returncode == 0 else []


def sample_args(schema):
    """Arguments filling every required property with a plain value of its type."""
    samples = {"string": "us-west1", "integer": 1, "number": 1, "boolean": True}
    props = schema.get("properties") or {}
    return {k: samples.get((props.get(k) or {}).get("type"), "x") for k in schema.get("required") or []}


calls = context.get("toolCalls") or []
if scenario == "tools_call":
    calls = [{"name": "add_numbers", "arguments": {"a": 2, "b": 3}}]
elif scenario == "json-schema-2020-12-preservation":
    # Echo the focal tool's inputSchema exactly as tai received and kept it.
    tools = {t["name"]: t for t in listed_tools()}
    focal = tools.get("json_schema_2020_12_tool", {}).get("inputSchema", {})
    calls = [{"name": "json_schema_echo", "arguments": {"schema": focal}}]
elif scenario.startswith("auth/"):
    # One call after listing, so per-operation scopes (step-up) are exercised too.
    calls = [{"name": "test-tool", "arguments": {}}]
elif scenario == "sse-retry":
    calls = [{"name": "test_reconnection", "arguments": {}}]
elif scenario in ("http-invalid-tool-headers", "sep-2322-client-request-state"):
    # Use every tool tai offers, as a host would.
    calls = [{"name": t["name"], "arguments": sample_args(t["inputSchema"])} for t in listed_tools()]

if not calls:
    sys.exit(probe())
codes = [probe("--call", c["name"], "--args", json.dumps(c.get("arguments") or {})) for c in calls]
sys.exit(max(codes))
