"""Drives `termsprawlctl mcp` with the official MCP Python SDK (2.x), as spec/mcp.md section 6 asks.

Usage: mcp_interop.py --binary PATH --session FILE

For the stateless 2026-07-28 revision, a fresh server process is driven by the SDK's `Client` in its
default `auto` mode (the dual-era probe: `server/discover` first, `initialize` only as a fallback)
and exercised: tools/list, resources, a succeeding call, an image call and an unknown tool.
For each of the four handshake-era protocol versions, a fresh server process is started through the
SDK's stdio client and ClientSession, initialized with that version, and exercised: ping, tools/list,
a succeeding call, an isError call, an image call and an unknown tool. Results are checked with the
SDK's own types (the session validates every result against the negotiated revision's schema);
what was observed is printed as one JSON report on stdout, which the Rust test asserts. The script
itself exits 0 unless it could not run at all; judging the report is the Rust test's job.
"""

import argparse
import json
import sys
import tempfile
import traceback
from importlib.metadata import version as package_version

import anyio
import mcp_types as types
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


def array_schemas_have_items(schema):
    """Whether every array schema inside `schema` has `items`."""
    if isinstance(schema, dict):
        if schema.get("type") == "array" and "items" not in schema:
            return False
        return all(array_schemas_have_items(value) for value in schema.values())
    if isinstance(schema, list):
        return all(array_schemas_have_items(value) for value in schema)
    return True


def describe_content(result):
    """The content blocks of a CallToolResult, by SDK type."""
    blocks = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            blocks.append({"sdkType": "TextContent", "text": block.text})
        elif isinstance(block, types.ImageContent):
            blocks.append({"sdkType": "ImageContent", "data": block.data, "mimeType": block.mime_type})
        else:
            blocks.append({"sdkType": type(block).__name__})
    return blocks


async def call(session, name, arguments):
    """One tools/call: its result by SDK type, or the protocol error."""
    try:
        result = await session.call_tool(name, arguments)
    except MCPError as error:
        return {"error": {"code": error.code, "message": error.message}}
    if not isinstance(result, types.CallToolResult):
        return {"unexpected": type(result).__name__}
    return {
        "isError": result.is_error,
        "content": describe_content(result),
        "structuredContent": result.structured_content,
    }


async def run(binary, session_file, requested):
    """One fresh process, initialized with `requested`; the observations."""
    report = {"requested": requested, "streamErrors": []}

    async def on_message(message):
        if isinstance(message, Exception):
            report["streamErrors"].append(repr(message))

    with tempfile.TemporaryFile(mode="w+") as errlog:
        # The stdio client scrubs the environment, so the session travels as arguments.
        server = StdioServerParameters(command=binary, args=["--session", session_file, "mcp"])
        async with stdio_client(server, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                # ClientSession.initialize always offers the newest revision; offer `requested`
                # explicitly, then adopt the answer and send `notifications/initialized` as it does.
                result = await session.send_request(
                    types.InitializeRequest(
                        params=types.InitializeRequestParams(
                            protocol_version=requested,
                            capabilities=types.ClientCapabilities(),
                            client_info=types.Implementation(name="termsprawl-interop", version="1.0"),
                        )
                    ),
                    types.InitializeResult,
                )
                session.adopt(result)
                await session.send_notification(types.InitializedNotification())
                report["protocolVersion"] = result.protocol_version
                report["negotiated"] = session.protocol_version
                report["serverInfo"] = {"name": result.server_info.name, "version": result.server_info.version}
                report["toolsCapability"] = result.capabilities.tools is not None
                report["instructions"] = result.instructions is not None and len(result.instructions) > 0

                ping = await session.send_ping()
                report["ping"] = isinstance(ping, types.EmptyResult)

                listed = await session.list_tools()
                names = [tool.name for tool in listed.tools]
                report["tools"] = names
                report["titles"] = all(bool(tool.title) for tool in listed.tools)
                report["toolsUnique"] = len(set(names)) == len(names)
                report["schemasAreObjects"] = all(tool.input_schema.get("type") == "object" for tool in listed.tools)
                report["arraysHaveItems"] = all(array_schemas_have_items(tool.input_schema) for tool in listed.tools)
                report["nextCursor"] = listed.next_cursor

                report["success"] = await call(session, "canvas_list", {})
                report["isError"] = await call(session, "terminal_read", {})
                report["image"] = await call(session, "browser_screenshot", {"nodeId": "b1"})
                report["unknownTool"] = await call(session, "no_such_tool", {})
                # The session still works after the protocol error.
                report["pingAfterError"] = isinstance(await session.send_ping(), types.EmptyResult)
        errlog.seek(0)
        report["stderr"] = errlog.read().splitlines()
    return report


async def run_modern(binary, session_file):
    """One fresh process in the 2026-07-28 era, reached by the SDK's own dual-era probe."""
    report = {"requested": "2026-07-28", "streamErrors": []}

    async def on_message(message):
        if isinstance(message, Exception):
            report["streamErrors"].append(repr(message))

    with tempfile.TemporaryFile(mode="w+") as errlog:
        server = StdioServerParameters(command=binary, args=["--session", session_file, "mcp"])
        async with Client(stdio_client(server, errlog=errlog), mode="auto", message_handler=on_message) as client:
            session = client.session
            report["negotiated"] = client.protocol_version
            report["discovered"] = session.discover_result is not None
            report["initialized"] = session.initialize_result is not None
            discover = session.discover_result
            report["supportedVersions"] = list(discover.supported_versions) if discover else None
            info = client.server_info
            report["serverInfo"] = {"name": info.name, "title": info.title, "version": info.version} if info else None
            capabilities = client.server_capabilities
            report["toolsCapability"] = capabilities.tools is not None
            report["resourcesCapability"] = capabilities.resources is not None
            report["instructions"] = len(discover.instructions or "") if discover else 0

            listed = await client.list_tools()
            report["tools"] = [tool.name for tool in listed.tools]
            report["titles"] = all(bool(tool.title) for tool in listed.tools)
            report["toolsResultType"] = listed.result_type
            report["ttlMs"] = listed.ttl_ms
            report["cacheScope"] = listed.cache_scope

            resources = await client.list_resources()
            report["resources"] = [str(resource.uri) for resource in resources.resources]
            read = await client.read_resource("termsprawl://guides/terminal")
            report["resourceMimeType"] = read.contents[0].mime_type
            report["resourceText"] = read.contents[0].text.splitlines()[0]

            report["success"] = await call(client, "canvas_list", {})
            report["isError"] = await call(client, "terminal_read", {})
            report["image"] = await call(client, "browser_screenshot", {"nodeId": "b1"})
            report["unknownTool"] = await call(client, "no_such_tool", {})
            # The connection still works after the protocol error.
            report["listAfterError"] = len((await client.list_tools()).tools)
        errlog.seek(0)
        report["stderr"] = errlog.read().splitlines()
    return report


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--session", required=True)
    arguments = parser.parse_args()
    report = {"sdkVersion": package_version("mcp"), "runs": []}
    try:
        report["modern"] = await run_modern(arguments.binary, arguments.session)
    except BaseException as error:  # noqa: BLE001 - reported, judged by the Rust test
        report["modern"] = {"requested": "2026-07-28", "failure": "".join(traceback.format_exception(error))}
    for requested in VERSIONS:
        try:
            report["runs"].append(await run(arguments.binary, arguments.session, requested))
        except BaseException as error:  # noqa: BLE001 - reported, judged by the Rust test
            report["runs"].append(
                {"requested": requested, "failure": "".join(traceback.format_exception(error))}
            )
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    anyio.run(main)
