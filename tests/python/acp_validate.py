"""Validates a `termsprawlctl acp --trace` file against the ACP v1 JSON Schema, per method.

Usage: acp_validate.py SCHEMA TRACE

Every line is `{"dir":"in"|"out","time":...,"msg":<JSON-RPC message>}`. Requests are checked
against the schema's definition for their method (`x-method`, `x-side`), responses against the
response definition of the request they answer (ids correlated per direction), errors against
`Error`, notifications against their method. Messages we send ("out") must all pass; failures of
messages the agent sent ("in") are listed separately, since test scenarios send broken ones on
purpose. Prints a JSON summary on stdout.
"""

import json
import sys

from jsonschema import Draft202012Validator


def main():
    schema_path, trace_path = sys.argv[1], sys.argv[2]
    schema = json.load(open(schema_path))
    defs = schema["$defs"]
    # (side handling the method, method, "request"|"response"|"notification") -> definition name
    table = {}
    for name, definition in defs.items():
        method = definition.get("x-method")
        side = definition.get("x-side")
        if not method:
            continue
        if name.endswith("Request"):
            kind = "request"
        elif name.endswith("Response"):
            kind = "response"
        else:
            kind = "notification"
        table[(side, method, kind)] = name
    validators = {}

    def validator(name):
        if name not in validators:
            validators[name] = Draft202012Validator(
                {"$schema": schema["$schema"], "$ref": "#/$defs/" + name, "$defs": defs}
            )
        return validators[name]

    # The side that handles a message sent in each direction.
    handler = {"out": "agent", "in": "client"}
    pending = {"out": {}, "in": {}}  # requests sent in a direction: id -> method
    summary = {"checked": 0, "methods": {}, "out_failures": [], "in_failures": [], "unchecked": []}

    def check(direction, name, value, label):
        errors = sorted(validator(name).iter_errors(value), key=lambda e: list(e.path))
        summary["checked"] += 1
        summary["methods"][label] = summary["methods"].get(label, 0) + 1
        if errors:
            summary[direction + "_failures"].append(
                {"what": label, "errors": [e.message[:300] for e in errors[:3]], "value": value}
            )

    for number, line in enumerate(open(trace_path), 1):
        record = json.loads(line)
        direction, message = record["dir"], record["msg"]
        if not isinstance(message, dict):
            summary[direction + "_failures"].append({"what": f"line {number}", "errors": ["not an object"]})
            continue
        if message.get("jsonrpc") != "2.0":
            summary[direction + "_failures"].append({"what": f"line {number}", "errors": ["jsonrpc is not 2.0"]})
        method = message.get("method")
        if method is not None and "id" in message:
            pending[direction][json.dumps(message["id"])] = method
            name = table.get((handler[direction], method, "request"))
            if name is None:
                summary["unchecked"].append(f"{direction} request {method}")
                continue
            check(direction, name, message.get("params"), f"{direction} request {method}")
        elif method is not None:
            side = "protocol" if method.startswith("$/") else handler[direction]
            name = table.get((side, method, "notification"))
            if name is None:
                summary["unchecked"].append(f"{direction} notification {method}")
                continue
            check(direction, name, message.get("params"), f"{direction} notification {method}")
        else:
            # A response answers a request that travelled the other way.
            other = "in" if direction == "out" else "out"
            answered = pending[other].pop(json.dumps(message.get("id")), None)
            if "error" in message:
                check(direction, "Error", message["error"], f"{direction} error {answered}")
                continue
            if answered is None:
                summary["unchecked"].append(f"{direction} response to an unknown id")
                continue
            name = table.get((handler[other], answered, "response"))
            if name is None:
                summary["unchecked"].append(f"{direction} response {answered}")
                continue
            check(direction, name, message.get("result"), f"{direction} response {answered}")
    json.dump(summary, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
