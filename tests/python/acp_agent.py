"""A small deterministic ACP agent for testing `termsprawlctl acp` (spec/acp.md §4).

Written on the official Python SDK (`agent-client-protocol`, pinned in requirements-acp.txt), which
does the framing, the encoding and the validation of every answer our client gives. The first word
of the prompt text selects a scenario; the agent exercises the client, reports what it observed as
one `agent_message_chunk` of the form `REPORT <json>`, and ends the turn.

Environment knobs: ACP_TEST_PROTOCOL_VERSION (the version to answer), ACP_TEST_REQUIRE_AUTH=1
(session/new, session/load and session/resume fail with -32000 until `authenticate`; `sessions`:
only session/load and session/resume do), ACP_TEST_FEATURES (a comma-separated list
of what to offer beyond the baseline: `modes`, `config`, `commands`, `list`, `load`, `resume`,
`close`, `embedded` (promptCapabilities.embeddedContext), or `all`; none by default),
ACP_TEST_REPLAY_LATE=1 (`session/load` answers first and replays the history after its answer,
as Gemini CLI does).

With `modes` the session has the modes `default` and `plan`; with `config` the options `model` (a
select of category `model`: `fast`, `smart` in a group) and `web` (a boolean); with `commands`
the agent announces `/review` and `/summarize` after `session/new`, and a prompt starting with `/`
is reported as the command it received. With `list` two pages of stored sessions are listed
(`old-1`, then `old-2`); `load` replays `old-1`'s history (a user message, an agent message, a
finished tool call); `resume` continues a stored session without replay.
"""

import asyncio
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

from acp import (
    RequestError,
    plan_entry,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_user_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.connection import StreamDirection
from acp.schema import (
    AgentCapabilities,
    AuthMethodAgent,
    EnvVariable,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    ToolCallUpdate,
)


FEATURES = {
    name
    for name in os.environ.get("ACP_TEST_FEATURES", "").split(",")
    if name
}
if "all" in FEATURES:
    FEATURES = {"modes", "config", "commands", "list", "load", "resume", "close", "embedded"}

# Tasks started in the background, held until they finish.
BACKGROUND = set()

STORED = {
    "old-1": {"title": "Fix the parser", "updatedAt": "2026-11-30T10:00:00Z"},
    "old-2": {"title": None, "updatedAt": None},
}


def modes_state(current):
    return {
        "currentModeId": current,
        "availableModes": [
            {"id": "default", "name": "Default", "description": "asks before every edit"},
            {"id": "plan", "name": "Plan", "description": "reads, never writes"},
        ],
    }


def config_state(model, web):
    return [
        {"id": "model", "name": "Model", "category": "model", "type": "select",
         "currentValue": model,
         "options": [{"group": "small", "name": "Small models",
                      "options": [{"value": "fast", "name": "Fast"}]},
                     {"group": "large", "name": "Large models",
                      "options": [{"value": "smart", "name": "Smart", "description": "slower"}]}]},
        {"id": "web", "name": "Web search", "type": "boolean", "currentValue": web},
    ]


COMMANDS = [
    {"name": "review", "description": "Review the changes", "input": {"hint": "what to review"}},
    {"name": "summarize", "description": "Summarize the session"},
]


def error_code(exc):
    return getattr(exc, "code", None)


class TestAgent:
    def __init__(self):
        self.conn = None
        self.raw = {}
        self.session_id = "sess-1"
        self.cwd = None
        self.cancelled = asyncio.Event()
        self.authenticated = False
        self.mode = "default"
        self.model = "fast"
        self.web = False

    # -- connection -----------------------------------------------------------------------------

    def on_connect(self, conn):
        self.conn = conn
        conn._conn.add_observer(self.observe)

    def observe(self, event):
        message = event.message
        if event.direction == StreamDirection.INCOMING and message.get("method") in (
            "initialize",
            "session/new",
            "session/prompt",
            "session/load",
            "session/resume",
        ):
            self.raw[message["method"]] = message.get("params")

    @property
    def rpc(self):
        return self.conn._conn

    # -- agent methods --------------------------------------------------------------------------

    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kwargs):
        version = int(os.environ.get("ACP_TEST_PROTOCOL_VERSION", protocol_version))
        capabilities = {"loadSession": "load" in FEATURES, "sessionCapabilities": {
            name: {} for name in ("list", "resume", "close") if name in FEATURES
        }, "promptCapabilities": {"embeddedContext": "embedded" in FEATURES}}
        return InitializeResponse(
            protocol_version=version,
            agent_capabilities=AgentCapabilities.model_validate(capabilities),
            auth_methods=[
                AuthMethodAgent(id="test-login", name="Test login", description="always succeeds")
            ],
            agent_info=Implementation(name="acp-test-agent", title="ACP test agent", version="1.0"),
        )

    async def authenticate(self, method_id, **kwargs):
        if method_id != "test-login":
            raise RequestError.invalid_params({"methodId": method_id})
        self.authenticated = True
        return None

    def require_auth(self, sessions=False):
        """-32000 until `authenticate`, as ACP_TEST_REQUIRE_AUTH says."""
        need = os.environ.get("ACP_TEST_REQUIRE_AUTH")
        if not self.authenticated and (need == "1" or (need == "sessions" and sessions)):
            raise RequestError.auth_required()

    async def new_session(self, cwd, mcp_servers=None, **kwargs):
        self.require_auth()
        self.cwd = cwd
        self.announce_commands()
        return NewSessionResponse.model_validate({"sessionId": self.session_id, **self.setup()})

    def setup(self):
        setup = {}
        if "modes" in FEATURES:
            setup["modes"] = modes_state(self.mode)
        if "config" in FEATURES:
            setup["configOptions"] = config_state(self.model, self.web)
        return setup

    def announce_commands(self):
        """The commands, sent just after the session answer (as fast-agent does)."""
        if "commands" not in FEATURES:
            return

        async def send():
            await asyncio.sleep(0.1)
            await self.send_commands()

        # asyncio keeps only a weak reference to a task: without this one, the garbage collector
        # may drop the task before it sends (the commands then never arrive).
        task = asyncio.ensure_future(send())
        BACKGROUND.add(task)
        task.add_done_callback(BACKGROUND.discard)

    async def send_commands(self):
        """The commands now: a continued session sends them before its answer."""
        if "commands" not in FEATURES:
            return
        await self.rpc.send_notification("session/update", {
            "sessionId": self.session_id,
            "update": {"sessionUpdate": "available_commands_update", "availableCommands": COMMANDS},
        })

    async def set_session_mode(self, session_id, mode_id, **kwargs):
        if mode_id not in ("default", "plan"):
            raise RequestError.invalid_params({"modeId": mode_id})
        self.mode = mode_id
        return None

    async def set_config_option(self, config_id, session_id, value, **kwargs):
        if config_id == "model" and value in ("fast", "smart"):
            self.model = value
        elif config_id == "web" and isinstance(value, bool):
            self.web = value
        else:
            raise RequestError.invalid_params({"configId": config_id, "value": value})
        return SetSessionConfigOptionResponse.model_validate(
            {"configOptions": config_state(self.model, self.web)}
        )

    async def list_sessions(self, cwd=None, cursor=None, **kwargs):
        where = self.cwd or "/"
        page = {None: ("old-1", "page-2"), "page-2": ("old-2", None)}.get(cursor)
        if page is None:
            raise RequestError.invalid_params({"cursor": cursor})
        session_id, next_cursor = page
        info = {"sessionId": session_id, "cwd": where, **{
            key: value for key, value in STORED[session_id].items() if value is not None
        }}
        answer = {"sessions": [info]}
        if next_cursor:
            answer["nextCursor"] = next_cursor
        return ListSessionsResponse.model_validate(answer)

    async def load_session(self, cwd, session_id, mcp_servers=None, **kwargs):
        self.require_auth(sessions=True)
        if session_id not in STORED:
            raise RequestError.resource_not_found(session_id)
        self.session_id, self.cwd = session_id, cwd

        async def replay():
            await self.update(update_user_message_text("what is in the parser?"))
            await self.update(update_agent_message_text("The parser reads **tokens**.\n"))
            await self.update(start_tool_call("old-call", "Read parser.rs", kind="read", status="completed"))
            # A whole message without a line end, as Gemini CLI replays its answers.
            await self.update(update_user_message_text("and the lexer?"))
            await self.update(update_agent_message_text("The lexer makes *tokens*."))

        if os.environ.get("ACP_TEST_REPLAY_LATE") == "1":
            # As Gemini CLI: the answer first, the history after it.
            async def late():
                await asyncio.sleep(0.05)
                await replay()

            task = asyncio.ensure_future(late())
            BACKGROUND.add(task)
            task.add_done_callback(BACKGROUND.discard)
        else:
            await replay()
        await self.send_commands()
        return LoadSessionResponse.model_validate(self.setup())

    async def resume_session(self, session_id, cwd, mcp_servers=None, **kwargs):
        self.require_auth(sessions=True)
        if session_id not in STORED:
            raise RequestError.resource_not_found(session_id)
        self.session_id, self.cwd = session_id, cwd
        await self.send_commands()
        return ResumeSessionResponse.model_validate(self.setup())

    async def close_session(self, session_id, **kwargs):
        with open(os.path.join(self.cwd or "/tmp", "closed.txt"), "a") as handle:
            handle.write(session_id + "\n")
        return None

    async def cancel(self, session_id, **kwargs):
        self.cancelled.set()

    async def prompt(self, prompt, session_id, **kwargs):
        text = "".join(getattr(block, "text", "") for block in prompt)
        if text.startswith("/"):
            await self.report({"command": text, "session": session_id})
            return PromptResponse(stop_reason="end_turn")
        words = text.split()
        scenario = words[0] if words else "echo"
        handler = getattr(self, "scenario_" + scenario.replace("-", "_"), None)
        if handler is None:
            await self.say(f"unknown scenario {scenario!r}")
            return PromptResponse(stop_reason="refusal")
        result = await handler(words[1:], text)
        if isinstance(result, str):
            return PromptResponse(stop_reason=result)
        await self.report(result)
        return PromptResponse(stop_reason="end_turn")

    # -- helpers --------------------------------------------------------------------------------

    async def update(self, update):
        await self.conn.session_update(session_id=self.session_id, update=update)

    async def say(self, text):
        await self.update(update_agent_message_text(text))

    async def report(self, data):
        await self.say("REPORT " + json.dumps(data, sort_keys=True) + "\n")

    async def attempt(self, coro):
        """Runs one client call; returns {"ok": result} or {"error": code}."""
        try:
            result = await coro
        except RequestError as exc:
            return {"error": error_code(exc), "message": str(exc)}
        if hasattr(result, "model_dump"):
            result = result.model_dump(by_alias=True, exclude_none=True)
        return {"ok": result}

    def path(self, *parts):
        return os.path.join(self.cwd, *parts)

    # -- scenarios ------------------------------------------------------------------------------

    async def scenario_echo(self, args, text):
        return {"text": text, "prompt": self.raw.get("session/prompt", {}).get("prompt")}

    async def scenario_caps(self, args, text):
        init = self.raw.get("initialize", {})
        new = self.raw.get("session/new", {})
        return {
            "protocolVersion": init.get("protocolVersion"),
            "clientCapabilities": init.get("clientCapabilities"),
            "clientInfo": init.get("clientInfo"),
            "cwd": new.get("cwd"),
            "mcpServers": new.get("mcpServers"),
            "prompt": self.raw.get("session/prompt", {}).get("prompt"),
        }

    async def scenario_stop(self, args, text):
        return args[0]

    async def scenario_permission(self, args, text):
        variant = args[0] if args else "all"
        options = {
            "all": [
                PermissionOption(option_id="a-always", name="Allow always", kind="allow_always"),
                PermissionOption(option_id="r-always", name="Reject always", kind="reject_always"),
                PermissionOption(option_id="a-once", name="Allow once", kind="allow_once"),
                PermissionOption(option_id="r-once", name="Reject once", kind="reject_once"),
            ],
            "always-only": [
                PermissionOption(option_id="a-always", name="Allow always", kind="allow_always"),
                PermissionOption(option_id="r-always", name="Reject always", kind="reject_always"),
            ],
            "none": [],
        }.get(variant)
        tool_call = ToolCallUpdate(
            tool_call_id="perm-1",
            title="Delete the build directory",
            kind="delete",
            status="pending",
            raw_input={"command": "rm -rf build"},
        )
        if variant == "malformed":
            try:
                await self.rpc.send_request(
                    "session/request_permission", {"sessionId": self.session_id, "toolCall": {}}
                )
                return {"malformed": "answered"}
            except RequestError as exc:
                return {"malformed": error_code(exc)}
        started = time.monotonic()
        response = await self.conn.request_permission(
            session_id=self.session_id, tool_call=tool_call, options=options
        )
        outcome = response.outcome.model_dump(by_alias=True, exclude_none=True)
        return {"outcome": outcome, "seconds": round(time.monotonic() - started, 1)}

    async def scenario_fs(self, args, text):
        report = {}
        target = self.path("sub", "dir", "new.txt")
        content = "one\ntwo\nthree\nfour\n"
        report["write_new"] = await self.attempt(
            self.conn.write_text_file(session_id=self.session_id, path=target, content=content)
        )
        report["created_on_disk"] = open(target).read() if os.path.exists(target) else None
        read = lambda path, **kw: self.attempt(  # noqa: E731
            self.conn.read_text_file(session_id=self.session_id, path=path, **kw)
        )
        report["read_all"] = await read(target)
        report["read_line2_limit2"] = await read(target, line=2, limit=2)
        report["read_line4"] = await read(target, line=4)
        report["read_line9"] = await read(target, line=9)
        report["read_limit1"] = await read(target, limit=1)
        report["overwrite"] = await self.attempt(
            self.conn.write_text_file(session_id=self.session_id, path=target, content="replaced")
        )
        report["read_after_overwrite"] = await read(target)
        report["missing"] = await read(self.path("no-such-file.txt"))
        report["relative"] = await read("sub/dir/new.txt")
        report["dotdot"] = await read(self.path("sub", "..", "..", "etc", "passwd"))
        outside = tempfile.mkdtemp(prefix="acp-outside-")
        with open(os.path.join(outside, "secret.txt"), "w") as handle:
            handle.write("secret\n")
        os.symlink(outside, self.path("escape"))
        report["symlink_read"] = await read(self.path("escape", "secret.txt"))
        report["symlink_write"] = await self.attempt(
            self.conn.write_text_file(
                session_id=self.session_id, path=self.path("escape", "planted.txt"), content="x"
            )
        )
        report["planted_outside"] = os.path.exists(os.path.join(outside, "planted.txt"))
        os.symlink(os.path.join(outside, "secret.txt"), self.path("secret-link.txt"))
        report["file_symlink_read"] = await read(self.path("secret-link.txt"))
        not_utf8 = self.path("latin1.txt")
        with open(not_utf8, "wb") as handle:
            handle.write(b"caf\xe9\n")
        report["not_utf8"] = await read(not_utf8)
        report["wrong_session"] = await self.attempt(
            self.conn.read_text_file(session_id="other", path=target)
        )
        return report

    async def terminal_report(self, terminal_id):
        return await self.attempt(
            self.conn.terminal_output(session_id=self.session_id, terminal_id=terminal_id)
        )

    def tmux_panes(self, needle):
        """Which tmux sessions of the backend server show `needle` (seen from outside the client)."""
        try:
            names = subprocess.run(
                ["tmux", "-L", "termsprawl-acp", "list-sessions", "-F", "#{session_name}"],
                capture_output=True, text=True, timeout=10,
            ).stdout.split()
        except (OSError, subprocess.SubprocessError):
            return []
        found = []
        for name in names:
            pane = subprocess.run(
                ["tmux", "-L", "termsprawl-acp", "capture-pane", "-p", "-t", "=" + name + ":"],
                capture_output=True, text=True, timeout=10,
            ).stdout
            if needle in pane:
                found.append(name)
        return found

    async def scenario_terminal(self, args, text):
        report = {}
        created = await self.conn.create_terminal(
            session_id=self.session_id,
            command="printf 'to-stdout\\n'; printf 'to-stderr\\n' >&2; exit 3",
        )
        terminal_id = created.terminal_id
        await self.update(
            start_tool_call(
                "term-call", "Run a failing command", kind="execute", status="in_progress",
                content=[tool_terminal_ref(terminal_id)],
            )
        )
        report["wait"] = await self.attempt(
            self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=terminal_id)
        )
        report["output"] = await self.terminal_report(terminal_id)
        report["release"] = await self.attempt(
            self.conn.release_terminal(session_id=self.session_id, terminal_id=terminal_id)
        )
        report["output_after_release"] = await self.terminal_report(terminal_id)
        report["wait_after_release"] = await self.attempt(
            self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=terminal_id)
        )
        report["tmux_sessions_showing_output"] = self.tmux_panes("to-stdout")
        await self.update(update_tool_call("term-call", status="failed"))
        # A command with arguments, an environment and a cwd.
        subdir = self.path("work")
        os.makedirs(subdir, exist_ok=True)
        created = await self.conn.create_terminal(
            session_id=self.session_id,
            command="sh",
            args=["-c", "printf '%s|%s|%s\\n' \"$ACP_VAR\" \"$1\" \"$(pwd)\"", "arg0", "it's a b"],
            env=[EnvVariable(name="ACP_VAR", value="from env")],
            cwd=subdir,
        )
        report["args_wait"] = await self.attempt(
            self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=created.terminal_id)
        )
        report["args_output"] = await self.terminal_report(created.terminal_id)
        await self.conn.release_terminal(session_id=self.session_id, terminal_id=created.terminal_id)
        report["relative_cwd"] = await self.attempt(
            self.conn.create_terminal(session_id=self.session_id, command="true", cwd="relative")
        )
        return report

    async def scenario_canvas(self, args, text):
        """Terminals as the canvas backend serves them: the test watches canvas_list from outside
        while the first command runs."""
        report = {}
        created = await self.conn.create_terminal(
            session_id=self.session_id, command="sh", args=["-c", "echo hi; sleep 2; exit 3"],
        )
        terminal_id = created.terminal_id
        report["terminal_id"] = terminal_id
        await self.update(
            start_tool_call(
                "canvas-call", "Run a command on the canvas", kind="execute",
                status="in_progress", content=[tool_terminal_ref(terminal_id)],
            )
        )
        report["output_running"] = await self.terminal_report(terminal_id)
        report["wait"] = await self.attempt(
            self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=terminal_id)
        )
        report["output"] = await self.terminal_report(terminal_id)
        report["release"] = await self.attempt(
            self.conn.release_terminal(session_id=self.session_id, terminal_id=terminal_id)
        )
        report["output_after_release"] = await self.terminal_report(terminal_id)
        await self.update(update_tool_call("canvas-call", status="failed"))
        # kill ends a command that ignores SIGTERM; the terminal stays readable until release.
        created = await self.conn.create_terminal(
            session_id=self.session_id, command="trap '' TERM; echo started; sleep 300"
        )
        await asyncio.sleep(0.5)
        report["kill"] = await self.attempt(
            self.conn.kill_terminal(session_id=self.session_id, terminal_id=created.terminal_id)
        )
        report["kill_wait"] = await self.attempt(
            self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=created.terminal_id)
        )
        report["kill_output"] = await self.terminal_report(created.terminal_id)
        await self.conn.release_terminal(session_id=self.session_id, terminal_id=created.terminal_id)
        # outputByteLimit keeps the tail.
        created = await self.conn.create_terminal(
            session_id=self.session_id, command="seq 1 2000", output_byte_limit=100
        )
        await self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=created.terminal_id)
        report["limited"] = await self.terminal_report(created.terminal_id)
        await self.conn.release_terminal(session_id=self.session_id, terminal_id=created.terminal_id)
        return report

    async def scenario_watch(self, args, text):
        """A command that prints a line every 2 s, `watch LINES` of them (6 by default), shown in a
        tool call the agent waits on: the front end shows the wait's progress on the call."""
        seconds = int(args[0]) if args else 6
        created = await self.conn.create_terminal(
            session_id=self.session_id,
            command=f"for i in $(seq 1 {seconds}); do echo step-$i; sleep 2; done",
        )
        await self.update(
            start_tool_call(
                "watch-call", "Watch a build", kind="execute", status="in_progress",
                content=[tool_terminal_ref(created.terminal_id)],
            )
        )
        waited = await self.attempt(
            self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=created.terminal_id)
        )
        await self.update(update_tool_call("watch-call", status="completed"))
        await self.conn.release_terminal(session_id=self.session_id, terminal_id=created.terminal_id)
        return {"wait": waited}

    async def timed_kill(self, command):
        created = await self.conn.create_terminal(session_id=self.session_id, command=command)
        terminal_id = created.terminal_id
        await asyncio.sleep(0.5)
        started = time.monotonic()
        result = {"kill": await self.attempt(
            self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal_id)
        )}
        try:
            waited = await asyncio.wait_for(
                self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=terminal_id),
                timeout=30,
            )
            result["wait"] = waited.model_dump(by_alias=True)
        except asyncio.TimeoutError:
            result["wait"] = "timeout"
        result["seconds"] = round(time.monotonic() - started, 1)
        result["output_after_kill"] = await self.terminal_report(terminal_id)
        await self.conn.release_terminal(session_id=self.session_id, terminal_id=terminal_id)
        return result

    async def scenario_kill(self, args, text):
        return {
            "plain": await self.timed_kill("sleep 300"),
            "ignores_term": await self.timed_kill("trap '' TERM; sleep 300; sleep 300"),
        }

    async def scenario_bigoutput(self, args, text):
        report = {}
        created = await self.conn.create_terminal(
            session_id=self.session_id, command="seq 1 20000", output_byte_limit=1000
        )
        await self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=created.terminal_id)
        report["seq"] = await self.terminal_report(created.terminal_id)
        await self.conn.release_terminal(session_id=self.session_id, terminal_id=created.terminal_id)
        created = await self.conn.create_terminal(
            session_id=self.session_id,
            command="i=0; while [ $i -lt 150 ]; do printf 'éééééééééééééééééééé'; i=$((i+1)); done; echo",
            output_byte_limit=1000,
        )
        await self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=created.terminal_id)
        report["utf8"] = await self.terminal_report(created.terminal_id)
        await self.conn.release_terminal(session_id=self.session_id, terminal_id=created.terminal_id)
        created = await self.conn.create_terminal(
            session_id=self.session_id, command="echo small", output_byte_limit=1000
        )
        await self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=created.terminal_id)
        report["small"] = await self.terminal_report(created.terminal_id)
        await self.conn.release_terminal(session_id=self.session_id, terminal_id=created.terminal_id)
        return report

    async def scenario_cancel(self, args, text):
        marker = args[0] if args else "987654"
        created = await self.conn.create_terminal(
            session_id=self.session_id, command=f"sleep {marker}"
        )
        # A process of the agent's own that it never reaps: the client must not leave it behind.
        subprocess.Popen(["sleep", marker + ".5"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        await self.update(
            start_tool_call(
                "long-call", "Run a long command", kind="execute", status="in_progress",
                content=[tool_terminal_ref(created.terminal_id)],
            )
        )
        permission = asyncio.ensure_future(
            self.conn.request_permission(
                session_id=self.session_id,
                tool_call=ToolCallUpdate(tool_call_id="long-call", title="Keep running?"),
                options=[PermissionOption(option_id="yes", name="Yes", kind="allow_once")],
            )
        )
        await self.say("WAITING for a cancel\n")
        try:
            await asyncio.wait_for(self.cancelled.wait(), timeout=60)
        except asyncio.TimeoutError:
            return "end_turn"
        outcome = await asyncio.wait_for(permission, timeout=10)
        await self.say("permission outcome after cancel: " + outcome.outcome.outcome + "\n")
        return "cancelled"

    async def scenario_ignore_cancel(self, args, text):
        marker = args[0] if args else "987655"
        subprocess.Popen(["sleep", marker], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        await self.say("WAITING and ignoring any cancel\n")
        await asyncio.sleep(600)
        return "end_turn"

    async def scenario_updates(self, args, text):
        await self.update(update_agent_thought_text("thinking about updates"))
        await self.update(update_agent_message_text(""))
        await self.rpc.send_notification(
            "session/update",
            {"sessionId": self.session_id, "update": {"sessionUpdate": "future_variant_xyz", "x": 1}},
        )
        await self.rpc.send_notification(
            "session/update",
            {"sessionId": self.session_id, "update": {"sessionUpdate": "tool_call", "title": "no id"}},
        )
        await self.rpc.send_notification("session/update", {"update": "not even an object"})
        await self.rpc.send_notification("_vendor/unknown_notification", {"anything": [1, 2]})
        await self.rpc.send_notification(
            "session/update",
            {"sessionId": self.session_id, "update": {
                "sessionUpdate": "usage_update", "used": 10, "size": 100,
                "cost": {"amount": 0.5, "currency": "USD"}}},
        )
        await self.rpc.send_notification(
            "session/update",
            {"sessionId": self.session_id, "update": {
                "sessionUpdate": "available_commands_update", "availableCommands": []}},
        )
        await self.rpc.send_notification(
            "session/update",
            {"sessionId": self.session_id, "update": {
                "sessionUpdate": "current_mode_update", "currentModeId": "default"}},
        )
        await self.update(
            update_plan([
                plan_entry("Read the code", priority="high", status="completed"),
                plan_entry("Write the fix", priority="medium", status="in_progress"),
            ])
        )
        await self.update(
            start_tool_call(
                "edit-1", "Edit notes.txt", kind="edit", status="pending",
                content=[tool_diff_content(self.path("notes.txt"), "alpha\nbeta changed\n", "alpha\nbeta\n")],
            )
        )
        await self.update(
            update_tool_call("edit-1", status="completed",
                             content=[tool_content(text_block("edited 1 line"))])
        )
        await self.say("still ")
        await self.say("alive\n")
        probe = self.path("probe.txt")
        with open(probe, "w") as handle:
            handle.write("probe\n")
        read = await self.attempt(self.conn.read_text_file(session_id=self.session_id, path=probe))
        return {"read_after_odd_updates": read}

    async def scenario_unknown_method(self, args, text):
        report = {}
        for method, params in [
            ("elicitation/create", {"sessionId": self.session_id, "message": "hi", "mode": "form",
                                     "requestedSchema": {"type": "object", "properties": {}}}),
            ("_vendor/unknown", {}),
            ("session/load", {"sessionId": self.session_id}),
        ]:
            try:
                await self.rpc.send_request(method, params)
                report[method] = "answered"
            except RequestError as exc:
                report[method] = error_code(exc)
        try:
            await self.rpc.send_request("terminal/output", {"sessionId": self.session_id})
            report["terminal_output_without_id"] = "answered"
        except RequestError as exc:
            report["terminal_output_without_id"] = error_code(exc)
        report["unknown_terminal"] = await self.attempt(
            self.conn.terminal_output(session_id=self.session_id, terminal_id="term-999")
        )
        return report

    async def scenario_cancel_request(self, args, text):
        created = await self.conn.create_terminal(session_id=self.session_id, command="sleep 300")
        request_id = self.rpc._next_request_id
        waiting = asyncio.ensure_future(
            self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=created.terminal_id)
        )
        await asyncio.sleep(0.3)
        await self.rpc.send_notification("$/cancel_request", {"requestId": request_id})
        try:
            await asyncio.wait_for(waiting, timeout=20)
            result = "answered normally"
        except RequestError as exc:
            result = error_code(exc)
        except asyncio.TimeoutError:
            result = "timeout"
        await self.conn.release_terminal(session_id=self.session_id, terminal_id=created.terminal_id)
        return {"cancelled_wait": result}

    async def scenario_switch(self, args, text):
        """The agent changes its own mode and an option, as an agent leaving plan mode does."""
        self.mode, self.web = "plan", True
        await self.rpc.send_notification("session/update", {"sessionId": self.session_id, "update": {
            "sessionUpdate": "current_mode_update", "currentModeId": "plan"}})
        await self.rpc.send_notification("session/update", {"sessionId": self.session_id, "update": {
            "sessionUpdate": "config_option_update", "configOptions": config_state(self.model, True)}})
        return {"mode": self.mode, "model": self.model, "web": self.web}

    async def scenario_state(self, args, text):
        return {"mode": self.mode, "model": self.model, "web": self.web, "session": self.session_id}

    async def scenario_edit(self, args, text):
        """A file edit as agents do it: the tool call carries the diff, the permission ask only the
        tool call's id, then fs/write_text_file; the long result is shortened by the client."""
        target = self.path("notes.txt")
        with open(target, "w") as handle:
            handle.write("alpha\nbeta\n")
        await self.update(start_tool_call(
            "edit-1", "Edit notes.txt", kind="edit", status="pending",
            content=[tool_diff_content(target, "alpha\nBETA\n", "alpha\nbeta\n")],
        ))
        await self.update(update_tool_call("edit-1", status="pending"))
        # `edit full`: the ask carries the diff itself (claude-agent-acp does).
        ask_content = None
        if args[:1] == ["full"]:
            ask_content = [tool_diff_content(target, "alpha\nBETA\n", "alpha\nbeta\n")]
        response = await self.conn.request_permission(
            session_id=self.session_id,
            tool_call=ToolCallUpdate(tool_call_id="edit-1", content=ask_content),
            options=[
                PermissionOption(option_id="yes", name="Allow once", kind="allow_once"),
                PermissionOption(option_id="no", name="Reject once", kind="reject_once"),
            ],
        )
        outcome = response.outcome.model_dump(by_alias=True, exclude_none=True)
        if outcome.get("optionId") == "yes":
            await self.conn.write_text_file(
                session_id=self.session_id, path=target, content="alpha\nBETA\n"
            )
        result = "".join(f"result line {n}\n" for n in range(1, 21))
        await self.update(update_tool_call(
            "edit-1", status="completed", content=[tool_content(text_block(result))]
        ))
        await self.update(update_tool_call("edit-1", status="completed"))
        return {"outcome": outcome}

    async def ask_edit(self, tool_call_id, content=None, raw_input=None):
        """A permission ask about a file edit with Allow once / Reject once; True when allowed."""
        response = await self.conn.request_permission(
            session_id=self.session_id,
            tool_call=ToolCallUpdate(
                tool_call_id=tool_call_id, title="Edit", kind="edit", status="pending",
                content=content, raw_input=raw_input,
            ),
            options=[
                PermissionOption(option_id="yes", name="Allow once", kind="allow_once"),
                PermissionOption(option_id="no", name="Reject once", kind="reject_once"),
            ],
        )
        outcome = response.outcome.model_dump(by_alias=True, exclude_none=True)
        return outcome.get("optionId") == "yes"

    async def scenario_asks(self, args, text):
        """File edits described as real agents describe them (issue 35):

        - `overwrite`: fast-agent's write_text_file: the diff with no old text for an existing
          notes.md, an ask carrying only the tool call's id and the raw input, the diff again with
          the old text read back, then fs/write_text_file;
        - `line3`: claude-agent-acp's Edit: old_string and new_string of a one-line change on
          line 3 (no newlines), in the tool call and in the ask, the agent writing the file itself;
        - `new`: Gemini CLI's new file: the ask carries the diff, then fs/read_text_file (which must
          say `Resource not found`) and fs/write_text_file.
        """
        variant = args[0] if args else "overwrite"
        report = {"variant": variant}
        if variant == "overwrite":
            target = self.path("notes.md")
            with open(target, "w") as handle:
                handle.write("# Notes\nfirst old line\nsecond old line\n")
            content = "# Notes\nnew line 1\nnew line 2\nnew line 3\n"
            raw = {"path": target, "content": content}
            await self.update(start_tool_call(
                "w-1", "write_text_file", kind="edit", status="pending", raw_input=raw))
            await self.update(update_tool_call("w-1", content=[tool_diff_content(target, content)]))
            await self.update(update_tool_call("w-1", title="acp_filesystem/write_text_file", status="pending"))
            if await self.ask_edit("w-1", raw_input=raw):
                old = await self.conn.read_text_file(session_id=self.session_id, path=target)
                await self.update(update_tool_call(
                    "w-1", content=[tool_diff_content(target, content, old.content)]))
                await self.conn.write_text_file(
                    session_id=self.session_id, path=target, content=content)
                report["allowed"] = True
            await self.update(update_tool_call("w-1", status="completed"))
        elif variant == "line3":
            target = self.path("poem.txt")
            with open(target, "w") as handle:
                handle.write("one\ntwo\nthree\nfour\nfive\n")
            raw = {"file_path": target, "old_string": "three", "new_string": "THREE"}
            diff = [tool_diff_content(target, "THREE", "three")]
            await self.update(start_tool_call(
                "e-1", "Edit poem.txt", kind="edit", status="pending", content=diff, raw_input=raw))
            if await self.ask_edit("e-1", content=diff, raw_input=raw):
                with open(target) as handle:
                    current = handle.read()
                with open(target, "w") as handle:
                    handle.write(current.replace("three", "THREE", 1))
                report["allowed"] = True
            await self.update(update_tool_call("e-1", status="completed", content=diff))
        elif variant == "new":
            # Gemini CLI reads the file first and takes only these messages for "missing".
            target = self.path("made", "fresh.txt")
            content = "fresh 1\nfresh 2\n"
            try:
                await self.conn.read_text_file(session_id=self.session_id, path=target)
                report["read"] = "found"
            except RequestError as exc:
                report["read"] = {"code": exc.code, "message": str(exc), "data": exc.data}
                missing = ("Resource not found", "ENOENT", "does not exist", "No such file")
                if not any(word in str(exc) for word in missing):
                    report["error"] = "Error checking existing file"
                    return report
            diff = [tool_diff_content(target, content, "")]
            await self.update(start_tool_call("n-1", "WriteFile", kind="edit", status="pending"))
            if await self.ask_edit("n-1", content=diff):
                await self.conn.write_text_file(
                    session_id=self.session_id, path=target, content=content)
                report["allowed"] = True
            await self.update(update_tool_call("n-1", status="completed", content=diff))
        return report

    async def scenario_slow(self, args, text):
        """A turn that takes a while (`slow SECONDS`, 2 by default)."""
        await self.say("SLOW START\n")
        await asyncio.sleep(float(args[0]) if args else 2)
        return {"slept": True}

    async def scenario_tools(self, args, text):
        """Tool calls whose status changes: `t1` three times in a row, then `t2` and `t3` started
        together, so that `t2`'s end is not next to its first line."""
        await self.update(start_tool_call("t1", "Read a.txt", kind="read", status="pending"))
        await asyncio.sleep(0.05)
        await self.update(update_tool_call("t1", status="in_progress"))
        await asyncio.sleep(0.05)
        await self.update(update_tool_call("t1", status="completed"))
        await self.update(start_tool_call("t2", "Run tests", kind="execute", status="pending"))
        await self.update(start_tool_call("t3", "Fetch docs", kind="fetch", status="pending"))
        await self.update(update_tool_call("t2", status="failed"))
        await self.update(update_tool_call("t3", status="completed"))
        return "end_turn"

    async def scenario_markdown(self, args, text):
        """A Markdown answer in chunks that split lines and styles."""
        for chunk in ["# Tit", "le\nSome **bo", "ld** and `code`.\n```rust\nlet x = **y**;\n", "```\n- one\n", "the end"]:
            await self.say(chunk)
        return "end_turn"

    async def scenario_elicit(self, args, text):
        """Asks the person through elicitation/create (`form` or `url`) and reports the answer."""
        mode = args[0] if args else "form"
        params = {"sessionId": self.session_id, "mode": mode, "message": "Tell me about you"}
        if mode == "form":
            params["requestedSchema"] = {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "title": "Your name"},
                "age": {"type": "integer", "minimum": 0},
                "colour": {"type": "string", "oneOf": [{"const": "r", "title": "Red"},
                                                       {"const": "g", "title": "Green"}]},
                "news": {"type": "boolean", "default": False},
            }}
        else:
            params.update({"elicitationId": "e-1", "url": "https://example.test/consent"})
        try:
            answer = await self.rpc.send_request("elicitation/create", params)
        except RequestError as exc:
            return {"error": error_code(exc)}
        if mode == "url":
            await self.rpc.send_notification("elicitation/complete", {"elicitationId": "e-1"})
        return {"answer": answer}

    async def scenario_elicit_later(self, args, text):
        """Ends the turn, then asks between turns; the answer goes to elicited.json in the cwd."""
        async def later():
            await asyncio.sleep(0.3)
            params = {"sessionId": self.session_id, "mode": "form", "message": "Between turns",
                      "requestedSchema": {"type": "object", "properties": {
                          "name": {"type": "string"}}}}
            answer = await self.rpc.send_request("elicitation/create", params)
            with open(os.path.join(self.cwd, "elicited.json"), "a") as handle:
                handle.write(json.dumps(answer) + "\n")

        task = asyncio.ensure_future(later())
        BACKGROUND.add(task)
        task.add_done_callback(BACKGROUND.discard)
        return {"later": True}

    async def scenario_extras(self, args, text):
        """Usage, a notice, a compaction and an unknown variant (twice)."""
        async def send(update):
            await self.rpc.send_notification("session/update", {"sessionId": self.session_id,
                                                                "update": update})
        await send({"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited",
                    "description": "retrying in 2 s"})
        await send({"sessionUpdate": "compaction_update", "compactionId": "c-1", "status": "in_progress"})
        await send({"sessionUpdate": "compaction_summary_chunk", "compactionId": "c-1",
                    "content": {"type": "text", "text": "we talked"}})
        await send({"sessionUpdate": "compaction_update", "compactionId": "c-1", "status": "completed"})
        await send({"sessionUpdate": "hologram_update", "depth": 3})
        await send({"sessionUpdate": "hologram_update", "depth": 4})
        await send({"sessionUpdate": "usage_update", "used": 53_000, "size": 200_000,
                    "cost": {"amount": 0.42, "currency": "USD"}})
        await self.say("done\n")
        return "end_turn"

    async def scenario_stderr(self, args, text):
        print("a note on stderr", file=sys.stderr, flush=True)
        return {"stderr": True}

    async def scenario_exit(self, args, text):
        sys.stdout.flush()
        os._exit(5)

    async def scenario_orphan(self, args, text):
        """`orphan MARKER`: starts `sleep MARKER` in its process group (it does not read stdin),
        says so, and waits for a cancel."""
        child = subprocess.Popen(["sleep", args[0] if args else "600"], stdin=subprocess.DEVNULL)
        await self.say(f"ORPHAN {child.pid}\n")
        await self.cancelled.wait()
        return "cancelled"

    async def scenario_crash(self, args, text):
        """`crash MARKER`: leaves `sleep MARKER` running in its process group, says why on stderr,
        and dies with exit code 5 in the middle of the turn."""
        subprocess.Popen(["sleep", args[0] if args else "600"], start_new_session=False)
        await self.say("CRASHING\n")
        print("crashing on purpose", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(5)

    async def scenario_longline(self, args, text):
        # The SDK's writer made stdout non-blocking; write the whole line blocking, off the loop.
        line = b'{"jsonrpc":"2.0","method":"x","params":"' + b"a" * (17 * 1024 * 1024) + b'"}\n'

        def write_all():
            os.set_blocking(1, True)
            view = memoryview(line)
            while view:
                try:
                    view = view[os.write(1, view):]
                except BrokenPipeError:
                    return

        asyncio.get_running_loop().run_in_executor(None, write_all)
        await asyncio.sleep(30)
        return "end_turn"


def main():
    asyncio.run(run_agent(TestAgent(), use_unstable_protocol=True))


if __name__ == "__main__":
    main()
