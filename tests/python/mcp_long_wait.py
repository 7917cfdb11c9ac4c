"""Drives one long wait and one cancelled wait through `termsprawlctl mcp` with the official MCP
Python SDK (2.x), as spec/mcp.md section 3.15 asks (issue 38).

Usage: mcp_long_wait.py --binary PATH --session FILE --node ID --cancel-node ID --exec-log FILE

One bridge process (`--max-wait-ms 120000`), initialized by the SDK's ClientSession; two calls run
at once on it, each with a progress callback (so each carries `_meta.progressToken`):
- `terminal_wait` on `--node` until exit with `timeoutMs` 100000: every progress notification is
  recorded with the time it arrived, then the one result;
- `terminal_wait` on `--cancel-node` until exit, abandoned after 10 s (the SDK then sends
  `notifications/cancelled`); the headless server's `--exec-log` lines naming that node are counted
  1 s after the cancel and again 11 s later.
What was observed is printed as one JSON report on stdout, which the Rust test asserts.
"""

import argparse
import json
import sys
import tempfile
import time
import traceback

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def waits_logged(exec_log, node):
    """How many terminal_wait requests for `node` the server logged."""
    count = 0
    with open(exec_log, encoding="utf-8") as log:
        for line in log:
            entry = json.loads(line)
            if entry.get("operation") == "terminal_wait" and entry.get("args", {}).get("nodeId") == node:
                count += 1
    return count


async def main(args):
    report = {"progress": [], "cancelledProgress": [], "streamErrors": []}

    async def on_message(message):
        if isinstance(message, Exception):
            report["streamErrors"].append(repr(message))

    started = time.monotonic()

    async def long_wait(session):
        async def on_progress(progress, total, message):
            report["progress"].append(
                {"at": time.monotonic() - started, "progress": progress, "total": total, "message": message}
            )

        result = await session.call_tool(
            "terminal_wait",
            {"nodeId": args.node, "until": "exit", "timeoutMs": 100000},
            read_timeout_seconds=150,
            progress_callback=on_progress,
        )
        report["resultAt"] = time.monotonic() - started
        report["isError"] = result.is_error
        report["text"] = result.content[0].text

    async def cancelled_wait(session):
        async def on_progress(progress, total, message):
            report["cancelledProgress"].append({"at": time.monotonic() - started, "progress": progress})

        with anyio.move_on_after(10) as scope:
            await session.call_tool(
                "terminal_wait",
                {"nodeId": args.cancel_node, "until": "exit", "timeoutMs": 100000},
                read_timeout_seconds=150,
                progress_callback=on_progress,
            )
        report["cancelled"] = scope.cancelled_caught
        report["cancelledAt"] = time.monotonic() - started
        await anyio.sleep(1)
        report["waitsAfterCancel"] = waits_logged(args.exec_log, args.cancel_node)
        await anyio.sleep(11)
        report["waitsLater"] = waits_logged(args.exec_log, args.cancel_node)

    with tempfile.TemporaryFile(mode="w+") as errlog:
        server = StdioServerParameters(
            command=args.binary, args=["--session", args.session, "mcp", "--max-wait-ms", "120000"]
        )
        async with stdio_client(server, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                initialized = await session.initialize()
                report["protocolVersion"] = initialized.protocol_version
                async with anyio.create_task_group() as group:
                    group.start_soon(long_wait, session)
                    group.start_soon(cancelled_wait, session)
                report["pingAfter"] = isinstance(await session.send_ping(), types.EmptyResult)
        errlog.seek(0)
        report["stderr"] = errlog.read().splitlines()
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--session", required=True)
    parser.add_argument("--node", required=True)
    parser.add_argument("--cancel-node", required=True)
    parser.add_argument("--exec-log", required=True)
    try:
        print(json.dumps(anyio.run(main, parser.parse_args())))
    except Exception:
        traceback.print_exc()
        sys.exit(1)
