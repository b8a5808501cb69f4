#!/usr/bin/env python3
"""Totals over meson test logs whose tests speak TAP.

usage: tap-summary.py [--failed-step TEXT]... LABEL=BUILDDIR/meson-logs/testlog.json...

testlog.json holds one JSON object per test run; the fields used are "name"
("project:suite / test"), "result" (OK, FAIL, ERROR, TIMEOUT, SKIP,
EXPECTEDFAIL, UNEXPECTEDPASS) and "stdout" (the TAP stream). Counting:
  ok N              passed, or skipped when it carries "# SKIP reason"
  not ok N          failed, or skipped when it carries "# TODO"
  a test that FAILed/ERRORed/TIMEOUTed without any "not ok" line: 1 failure
  a test with no TAP result line at all: 1 by its meson result
  each --failed-step (a build that failed, a missing log): 1 failure
Prints the failures, the skip reasons, and as the very last line
"N passed, N failed" or "N passed, N failed, N skipped". Exits 1 when
anything failed.
"""

import json
import re
import sys

RESULT_LINE = re.compile(r"^(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?(.*)$")
# The directive starts at the first "#" not escaped as "\#".
DIRECTIVE = re.compile(r"(?<!\\)#\s*(SKIP|TODO)\S*\s*(.*)$", re.IGNORECASE)
PLAN_SKIP = re.compile(r"^1\.\.0\b.*?#\s*SKIP\S*\s*(.*)$", re.IGNORECASE)
FAILING = {"FAIL", "ERROR", "TIMEOUT", "UNEXPECTEDPASS"}


class Totals:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.failures = []  # text lines
        self.skips = {}  # (test, reason) -> count

    def skip(self, test, reason):
        key = (test, reason.strip() or "no reason given")
        self.skips[key] = self.skips.get(key, 0) + 1
        self.skipped += 1

    def fail(self, text):
        self.failed += 1
        self.failures.append(text)


def count_test(totals, label, entry):
    name = entry.get("name", "?")
    if label:
        name = "[%s] %s" % (label, name)
    result = str(entry.get("result", "")).upper()
    stdout = entry.get("stdout") or ""
    seen_result = False
    seen_not_ok = False
    plan_skip = None

    for line in stdout.splitlines():
        line = line.rstrip("\r")
        m = PLAN_SKIP.match(line)
        if m:
            plan_skip = m.group(1)
            continue
        m = RESULT_LINE.match(line)
        if not m:
            continue
        seen_result = True
        ok = m.group(1) == "ok"
        desc = m.group(3)
        d = DIRECTIVE.search(desc)
        kind = d.group(1).upper() if d else None
        reason = d.group(2) if d else ""
        what = "%s: %s" % (name, line.strip())
        if ok:
            if kind == "SKIP":
                totals.skip(name, reason)
            else:
                totals.passed += 1
        else:
            if kind == "TODO":
                totals.skip(name, "TODO " + reason)
            elif kind == "SKIP":
                totals.skip(name, reason)
            else:
                seen_not_ok = True
                totals.fail(what)

    if not seen_result:
        if result == "SKIP" or plan_skip is not None:
            totals.skip(name, plan_skip or "skipped as a whole")
        elif result in FAILING:
            totals.fail("%s: %s, no TAP result lines (exit status %s)"
                        % (name, result, entry.get("returncode")))
        else:
            totals.passed += 1
    elif result in FAILING and not seen_not_ok:
        totals.fail("%s: %s (exit status %s) with no failing TAP line"
                    % (name, result, entry.get("returncode")))


def main(argv):
    totals = Totals()
    logs = []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--failed-step":
            if not args:
                sys.exit("tap-summary: --failed-step needs an argument")
            totals.fail(args.pop(0))
        elif "=" in a:
            logs.append(tuple(a.split("=", 1)))
        else:
            logs.append(("", a))

    for label, path in logs:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
        except OSError as e:
            totals.fail("%s: no test log (%s)" % (label or path, e.strerror))
            continue
        for n, raw in enumerate(lines, 1):
            raw = raw.strip()
            if not raw:
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                totals.fail("%s:%d: unreadable test log line" % (path, n))
                continue
            count_test(totals, label, entry)

    if totals.failures:
        print("Failed:")
        for text in totals.failures[:50]:
            print("  - " + text)
        if len(totals.failures) > 50:
            print("  ... and %d more" % (len(totals.failures) - 50))
    if totals.skips:
        print("Skipped:")
        items = sorted(totals.skips.items())
        for (test, reason), count in items[:40]:
            times = " (x%d)" % count if count > 1 else ""
            print("  - %s: %s%s" % (test, reason, times))
        if len(items) > 40:
            print("  ... and %d more reasons" % (len(items) - 40))

    line = "%d passed, %d failed" % (totals.passed, totals.failed)
    if totals.skipped:
        line += ", %d skipped" % totals.skipped
    print(line)
    return 1 if totals.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
