"""A scripted ACP agent that writes exact bytes, for the message orders real agents produce.

The SDK agent (acp_agent.py) cannot put two messages into one write or leave a request unanswered
on purpose; the registry agents do both (Gemini CLI writes its session/new answer and a
session/update for the new session in one write; a browser login never answers). This agent reads
JSON-RPC lines with the standard library only and answers as the scenario in ACP_RAW_SCENARIO says.
ACP_RAW_STATE is a directory for files the test reads back (the login marker, pids).

Scenarios:
  update-with-session  session/new answer + an update for that session in one write
  idle-updates         three bookkeeping updates and one message after session/new, while idle
  env-auth             authMethods env_var (ACP_RAW_TEST_KEY) and agent; session/new needs a login
  terminal-auth        authMethods terminal (args --login); the login run writes a marker
  auth-menu            two agent methods; session/new needs a login
  auth-hang            env_var method whose authenticate is never answered
  auth-menu-hang       two agent methods whose authenticate is never answered
  error-data           session/prompt fails with -32603 and a data member
  prompt-fails         session/prompt fails with -32603 (no data)
  ignore-cancel        session/prompt is never answered, session/cancel is ignored
  mcp-start            starts the injected MCP server and talks MCP initialize to it
  sigkill              mcp-start, then a turn that never ends; ignores the end of its input
  mcp-skip             ignores the injected MCP server
  models               the unstable `models` in the session/new answer (as Claude Code 0.16 sends),
                       `session/set_model` recorded and answered; a prompt reports the model
  showcase             a turn with a thought, a plan, a tool card, a long paragraph, a list, a
                       quote, a table and a code block, streamed in chunks cut mid-word; a prompt
                       with "slow" in it waits 3 s while the tool runs
  many-commands        60 agent commands with long descriptions (as Claude Code announces)
  mode-option          its modes as a configuration option of category `mode` (as opencode sends
                       them), `session/set_config_option` answered; a prompt reports the mode
"""

import json
import os
import subprocess
import sys
import time

SCENARIO = os.environ.get("ACP_RAW_SCENARIO", "")
STATE = os.environ.get("ACP_RAW_STATE", "/tmp")
SESSION = "raw-1"


def write(*messages):
    data = b"".join(json.dumps(message).encode() + b"\n" for message in messages)
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


def result(request, value):
    return {"jsonrpc": "2.0", "id": request["id"], "result": value}


def error(request, code, message, data=None):
    body = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request["id"], "error": body}


def update(session_update, **members):
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": SESSION, "update": dict(sessionUpdate=session_update, **members)},
    }


def say(text):
    return update("agent_message_chunk", content={"type": "text", "text": text})


SHOWCASE_TEXT = (
    "Here is what I found in the project. The notes describe a small tool that reads a "
    "configuration file, checks every entry against the schema and reports each problem "
    "with its line number, so that a person can fix it without reading the code.\n"
    "\n"
    "## Summary\n"
    "\n"
    "- The parser is in `src/parse.rs` and handles **every** documented key.\n"
    "- Errors are collected, not thrown: the checker keeps going after the first problem "
    "and reports all of them at the end of the run.\n"
    "  1. nested item one\n"
    "\n"
    "> Note: the schema file is generated; edit the source and run the generator again "
    "instead of changing it by hand.\n"
    "\n"
    "| File | Lines | Purpose |\n"
    "|:-----|------:|---------|\n"
    "| src/parse.rs | 412 | reads the configuration and keeps each entry's line number |\n"
    "| src/check.rs | 187 | compares entries with the schema |\n"
    "\n"
    "```python\n"
    "def check(entries, schema):\n"
    "    # every problem, not only the first\n"
    "    return [e for e in entries if e.key not in schema]  # \"unknown\"\n"
    "print(\"checked\")\n"
    "```\n"
    "That is all."
)


def chunks(text, size=37):
    return [text[index:index + size] for index in range(0, len(text), size)]


COMMANDS = [
    {"name": "command-%02d" % index,
     "description": "A command of the agent whose description is long enough to need more than "
                    "one row in a narrow pane (number %d)" % index}
    for index in range(60)
]


def showcase(message, text):
    write(update("agent_thought_chunk", content={"type": "text", "text": "Let me read the notes first.\n"}))
    write(update("plan", entries=[
        {"content": "Read the notes", "priority": "high", "status": "completed"},
        {"content": "Summarise the project", "priority": "medium", "status": "in_progress"},
        {"content": "Suggest next steps", "priority": "low", "status": "pending"},
    ]))
    write(update("tool_call", toolCallId="t1", title="Read notes.md", kind="read", status="pending"))
    write(update("tool_call_update", toolCallId="t1", status="in_progress"))
    if "slow" in text:
        time.sleep(3)
    write(update("tool_call_update", toolCallId="t1", status="completed",
                 content=[{"type": "content", "content": {"type": "text", "text": "notes: 2 lines"}}]))
    for piece in chunks(SHOWCASE_TEXT):
        write(say(piece))
        time.sleep(0.01)
    write(result(message, {"stopReason": "end_turn"}))


def record(name, value):
    with open(os.path.join(STATE, name), "w") as handle:
        json.dump(value, handle)


AUTH_METHODS = {
    "env-auth": [
        {"type": "env_var", "id": "test-key", "name": "Test API key",
         "vars": [{"name": "ACP_RAW_TEST_KEY"}]},
        {"id": "browser", "name": "Browser login", "description": "opens a browser"},
    ],
    "auth-hang": [
        {"type": "env_var", "id": "test-key", "name": "Test API key",
         "vars": [{"name": "ACP_RAW_TEST_KEY"}]},
    ],
    "terminal-auth": [
        {"type": "terminal", "id": "tui-login", "name": "Log in here", "args": ["--login"],
         "env": {"ACP_RAW_LOGIN": "yes"}},
    ],
    "auth-menu": [
        {"id": "first", "name": "First login"},
        {"id": "second", "name": "Second login"},
    ],
    "auth-menu-hang": [
        {"id": "browser", "name": "Browser login", "description": "never finishes"},
        {"id": "second", "name": "Second login"},
    ],
}


def logged_in():
    return os.path.exists(os.path.join(STATE, "logged-in"))


def terminal_login():
    """The agent rerun by the client for a terminal login: a tiny TUI on the person's terminal."""
    print("LOGIN UI: type ok", flush=True)
    line = sys.stdin.readline().strip()
    if line != "ok" or os.environ.get("ACP_RAW_LOGIN") != "yes":
        print("LOGIN FAILED", flush=True)
        sys.exit(3)
    open(os.path.join(STATE, "logged-in"), "w").close()
    print("LOGIN DONE", flush=True)
    sys.exit(0)


class Agent:
    def __init__(self):
        self.authenticated = False
        self.mcp = None
        self.pending_prompt = None
        self.model = "default"
        self.mode = "build"

    def mode_options(self):
        return [{"id": "mode", "name": "Mode", "category": "mode", "type": "select",
                 "currentValue": self.mode,
                 "options": [{"value": "build", "name": "Build", "description": "edits files"},
                             {"value": "plan", "name": "Plan"}]}]

    def start_mcp(self, servers):
        server = servers[0]
        env = dict(os.environ)
        env.update({entry["name"]: entry["value"] for entry in server.get("env", [])})
        self.mcp = subprocess.Popen(
            [server["command"], *server["args"]],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "acp-raw-agent", "version": "1"}}}
        self.mcp.stdin.write(json.dumps(initialize).encode() + b"\n")
        self.mcp.stdin.flush()
        # As real agents do: session/new is answered once the MCP server has answered.
        answer = self.mcp.stdout.readline()
        record("mcp-initialize.json", json.loads(answer) if answer else None)

    def handle(self, message):
        method = message.get("method")
        if "id" not in message or method is None:
            return
        if method == "initialize":
            record("initialize.json", message.get("params"))
            record("agent-pid.json", os.getpid())
            write(result(message, {
                "protocolVersion": 1,
                "agentCapabilities": {"loadSession": False},
                "authMethods": AUTH_METHODS.get(SCENARIO, []),
                "agentInfo": {"name": "acp-raw-agent", "version": "1.0"},
            }))
        elif method == "authenticate":
            method_id = message["params"]["methodId"]
            record("authenticate.json", message["params"])
            if SCENARIO in ("auth-hang", "auth-menu-hang"):
                return
            if SCENARIO == "env-auth" and method_id == "test-key" and not os.environ.get("ACP_RAW_TEST_KEY"):
                write(error(message, -32000, "Authentication required", "ACP_RAW_TEST_KEY is not set"))
                return
            self.authenticated = True
            write(result(message, {}))
        elif method == "session/new":
            params = message["params"]
            needs_login = SCENARIO in ("env-auth", "auth-menu", "auth-hang", "auth-menu-hang")
            if needs_login and not self.authenticated:
                write(error(message, -32000, "Authentication required"))
                return
            if SCENARIO == "terminal-auth" and not logged_in():
                write(error(message, -32000, "Authentication required"))
                return
            if SCENARIO in ("mcp-start", "sigkill") and params["mcpServers"]:
                self.start_mcp(params["mcpServers"])
            answer = result(message, {"sessionId": SESSION})
            if SCENARIO == "models":
                answer["result"]["models"] = {"currentModelId": "default", "availableModels": [
                    {"modelId": "default", "name": "Default (recommended)", "description": "Sonnet"},
                    {"modelId": "opus", "name": "Opus"},
                ]}
            if SCENARIO == "mode-option":
                answer["result"]["configOptions"] = self.mode_options()
            if SCENARIO == "update-with-session":
                write(answer, say("EARLY UPDATE for the new session\n"))
            elif SCENARIO == "many-commands":
                write(answer, update("available_commands_update", availableCommands=COMMANDS))
            elif SCENARIO == "idle-updates":
                write(answer)
                time.sleep(0.3)
                for _ in range(3):
                    write(update("available_commands_update", availableCommands=[]))
                    time.sleep(0.1)
                write(say("IDLE NOTE from the agent\n"))
            else:
                write(answer)
        elif method == "session/set_model" and SCENARIO == "models":
            record("set-model.json", message["params"])
            self.model = message["params"]["modelId"]
            write(result(message, {}))
        elif method == "session/set_config_option" and SCENARIO == "mode-option":
            record("set-config-option.json", message["params"])
            self.mode = message["params"]["value"]
            write(result(message, {"configOptions": self.mode_options()}))
        elif method == "session/prompt":
            text = "".join(block.get("text", "") for block in message["params"]["prompt"])
            if SCENARIO == "models":
                text += " with " + self.model
            if SCENARIO == "mode-option":
                text += " in " + self.mode
            if SCENARIO == "error-data":
                write(error(message, -32603, "Internal error",
                            "stream disconnected before completion: /v1/responses"))
            elif SCENARIO == "prompt-fails":
                write(error(message, -32603, "Internal error"))
            elif SCENARIO == "showcase":
                showcase(message, text)
            elif SCENARIO in ("ignore-cancel", "sigkill"):
                pids = {"agent": os.getpid(), "mcp": self.mcp.pid if self.mcp else None}
                record("pids.json", pids)
                write(say("WAITING " + json.dumps(pids) + "\n"))
                self.pending_prompt = message
            else:
                write(say("TURN " + text + "\n"), result(message, {"stopReason": "end_turn"}))
        else:
            write(error(message, -32601, "Method not found: " + method))


def main():
    if "--login" in sys.argv[1:]:
        terminal_login()
    agent = Agent()
    for line in sys.stdin.buffer:
        line = line.strip()
        if line:
            agent.handle(json.loads(line))
    if SCENARIO == "sigkill":
        # Like agents that do not stop at the end of their input (and keep their MCP servers).
        time.sleep(600)


if __name__ == "__main__":
    main()
