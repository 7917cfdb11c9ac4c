"""Starts `termsprawlctl` with a startup mistake under the official MCP Python SDK (2.x), in both eras.

Usage: mcp_startup.py --binary PATH --case NAME ARGS_JSON [--case NAME ARGS_JSON ...]

For each case, the bridge is started with ARGS_JSON (a JSON list of arguments, `TERMSPRAWL_SESSION_FILE`
unset) twice: once through the SDK's `Client` in its default `auto` mode (the 2026-07-28 probe,
`server/discover` first) and once through `ClientSession.initialize` (the handshake era). What the SDK
raised (the JSON-RPC error's code and message, as a host would show them), the exit status and the
bridge's stderr are printed as one JSON report on stdout, which the Rust test asserts
(issue 39). The script exits 0 unless it could not run at all.
"""

import argparse
import json
import os
import sys
import tempfile
import traceback

import anyio
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


def describe(error):
    if isinstance(error, MCPError):
        return {"code": error.error.code, "message": error.error.message}
    if isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        return describe(error.exceptions[0])
    return {"unexpected": "".join(traceback.format_exception(error))}


async def attempt(binary, args, era):
    env = {key: value for key, value in os.environ.items() if key != "TERMSPRAWL_SESSION_FILE"}
    server = StdioServerParameters(command=binary, args=args, env=env)
    with tempfile.TemporaryFile(mode="w+") as errlog:
        try:
            if era == "2026-07-28":
                async with Client(stdio_client(server, errlog=errlog), mode="auto") as client:
                    await client.list_tools()
            else:
                async with stdio_client(server, errlog=errlog) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        await session.list_tools()
            report = {"served": True}
        except BaseException as error:  # noqa: BLE001 - reported, judged by the Rust test
            report = describe(error)
        errlog.seek(0)
        report["stderr"] = errlog.read().splitlines()
    report["era"] = era
    return report


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--case", nargs=2, action="append", metavar=("NAME", "ARGS_JSON"), required=True)
    arguments = parser.parse_args()
    report = {}
    for name, args in arguments.case:
        report[name] = [await attempt(arguments.binary, json.loads(args), era) for era in ["2026-07-28", "handshake"]]
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    anyio.run(main)
