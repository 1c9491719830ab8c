#!/usr/bin/env python3
"""Checks the repository's references into docs/ and its Markdown links.

Every `docs/<page>.md` or `docs/<page>.md#<anchor>` written anywhere in the sources, build files and
READMEs must name a page that exists and, with an anchor, one of its headings. Every relative link of a
Markdown file must name a file that exists and, for a Markdown target with an anchor, one of its
headings. Anchors are GitHub's: the heading in lower case, punctuation dropped, spaces as '-'.

Usage: check_refs.py [ROOT]. Without ROOT, the repository is found from this script's real path
(under `bazel test`, the runfiles link back into the source tree). Exit 0: all good; 1: bad references,
listed as file:line: message.
"""
import os
import re
import sys

SOURCE_EXTS = (".cc", ".h", ".rules", ".bazel", ".bzl", ".md", ".py", ".sh", ".def", ".re", ".proto", ".bazelrc")
SOURCE_NAMES = ("BUILD", "WORKSPACE", "run")
SKIP_DIRS = {".git", ".bazel", "third_party"}
CITATION = re.compile(r"docs/([A-Za-z0-9_]+\.md)(?:#([A-Za-z0-9_-]+))?")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, seen, fenced = set(), {}, False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("```"):
                    fenced = not fenced
                m = None if fenced else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m:
                    a = slug(m.group(1))
                    n = seen.get(a, 0)
                    seen[a] = n + 1
                    found.add(a if n == 0 else "%s-%d" % (a, n))
        cache[path] = found
    return cache[path]


def check_target(root, path, anchor, where, errors):
    shown = os.path.relpath(path, root)
    if not os.path.exists(path):
        errors.append("%s: %s does not exist" % (where, shown))
    elif anchor and path.endswith(".md") and anchor not in anchors(path):
        errors.append("%s: %s has no heading #%s" % (where, shown, anchor))


def source_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("bazel-"))
        for name in sorted(files):
            if name.endswith(SOURCE_EXTS) or name in SOURCE_NAMES:
                yield os.path.join(d, name)


def check(root):
    errors, cited = [], 0
    for path in source_files(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        fenced = False
        for n, line in enumerate(lines, 1):
            where = "%s:%d" % (rel, n)
            for m in CITATION.finditer(line):
                cited += 1
                check_target(root, os.path.join(root, "docs", m.group(1)), m.group(2), where, errors)
            if not path.endswith(".md"):
                continue
            if line.startswith("```"):
                fenced = not fenced
            if fenced:
                continue
            for m in MD_LINK.finditer(re.sub(r"`[^`]*`", "", line)):  # code spans are not links
                target = m.group(1)
                if re.match(r"[a-z]+:", target) or re.fullmatch(r"\.+", target):
                    continue  # http:, mailto:, and `op[k](...)` in prose
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                check_target(root, dest, anchor, where, errors)
    return errors, cited


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    if not os.path.exists(os.path.join(root, "WORKSPACE")) or not os.path.isdir(os.path.join(root, "docs")):
        print("check_refs: %s is not the repository (no WORKSPACE and docs/ there)" % root)
        return 1
    errors, cited = check(root)
    if cited == 0:
        errors.append("no citation of docs/ found under %s: not the source tree?" % root)
    for e in errors:
        print(e)
    print("check_refs: %d citations of docs/ checked, %d bad references" % (cited, len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
