#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""audit-check.py SCHEMA FILE [--forbid TEXT]... [--max-bytes N]

Validate every line of a cordon audit log (JSON Lines) against
docs/audit.schema.json: each line must be one JSON object the schema
accepts, the file must end with a newline, no line may hold any --forbid
text (an environment value, a token that redaction must hide), and the
file may be at most --max-bytes long. Prints the event names, one per
line; exits 1 with the reason on stderr at the first violation.
"""
import json
import sys

import jsonschema


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema_path, log_path = argv[1], argv[2]
    forbid, max_bytes = [], None
    rest = argv[3:]
    while rest:
        flag, value, rest = rest[0], rest[1], rest[2:]
        if flag == "--forbid":
            forbid.append(value.encode())
        elif flag == "--max-bytes":
            max_bytes = int(value)
        else:
            print(f"audit-check: unknown option {flag}", file=sys.stderr)
            return 2
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    with open(log_path, "rb") as f:
        data = f.read()
    if max_bytes is not None and len(data) > max_bytes:
        print(f"audit-check: {len(data)} bytes, above the cap {max_bytes}", file=sys.stderr)
        return 1
    if data and not data.endswith(b"\n"):
        print("audit-check: the last line is not whole", file=sys.stderr)
        return 1
    for n, raw in enumerate(data.splitlines(), 1):
        for text in forbid:
            if text in raw:
                print(f"audit-check: line {n} holds {text!r}", file=sys.stderr)
                return 1
        try:
            # Strict UTF-8: a line the log writes must decode without loss.
            event = json.loads(raw.decode("utf-8", errors="strict"))
        except (UnicodeDecodeError, ValueError) as e:
            print(f"audit-check: line {n} is not JSON: {e}", file=sys.stderr)
            return 1
        errors = sorted(validator.iter_errors(event), key=lambda e: e.path)
        if errors:
            print(f"audit-check: line {n} fails the schema: {errors[0].message}: {raw[:300]!r}",
                  file=sys.stderr)
            return 1
        print(event["event"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
