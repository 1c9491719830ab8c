#!/usr/bin/env python3
"""Prints 'N skipped', then the closing line 'N passed, N failed', for one `bazel test` invocation.

Usage: test_summary.py BEP_JSON_FILE [BAZEL_EXIT_CODE]

Reads the Build Event Protocol file written by
`bazel test --build_event_json_file=FILE` (so only this invocation's tests
count, not stale logs under bazel-testlogs/), and counts gtest test cases from
each test's test.xml. A test target without test.xml (crash, timeout, build
failure) counts as one failed test.
"""
import json
import sys
import urllib.parse
import xml.etree.ElementTree as ET


def count_xml(path):
    passed = failed = skipped = 0
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.get("result") == "skipped" or case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main(bep_file, bazel_rc):
    passed = failed = skipped = 0
    with open(bep_file) as f:
        for line in f:
            event = json.loads(line)
            if "testResult" not in event.get("id", {}):
                continue
            result = event.get("testResult", {})
            status = result.get("status", "NO_STATUS")
            xml = [o["uri"] for o in result.get("testActionOutput", [])
                   if o.get("name") == "test.xml" and "uri" in o]
            counts = None
            if xml:
                path = urllib.parse.unquote(urllib.parse.urlparse(xml[0]).path)
                try:
                    counts = count_xml(path)
                except (OSError, ET.ParseError):
                    counts = None
            if counts is None or (status != "PASSED" and counts[1] == 0):
                counts = (0, 1, 0) if status != "PASSED" else (1, 0, 0)
            passed, failed, skipped = (a + b for a, b in
                                       zip((passed, failed, skipped), counts))
    if bazel_rc != 0 and failed == 0:
        failed = 1  # the build failed before any test could report
    print(f"{skipped} skipped")
    print(f"{passed} passed, {failed} failed")  # last: CI reads the closing line
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0))
