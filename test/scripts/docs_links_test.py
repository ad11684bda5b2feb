#!/usr/bin/env python3
"""The relative links of README.md, BENCHMARKS.md, REPRODUCTION.md and
docs/*.md lead somewhere: each file exists, and each #anchor into a Markdown
file names one of its headings (GitHub's anchors: lowercase, punctuation
dropped, spaces as hyphens). And each subcommand's --help names a page that
exists (src/cli/docs_pages.cpp)."""
import os
import re
import subprocess
import sys
from pathlib import Path

SOURCE = Path(os.environ.get("MTBERT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BINARY = Path(os.environ.get("MTBERT_BINARY", SOURCE / "build" / "mtbert"))

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def anchors(page):
    """GitHub's anchor of each heading of a Markdown file (code blocks skipped)."""
    found, block = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            block = not block
        elif not block and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def link_problems(page):
    problems, block = [], False
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if line.startswith("```"):
            block = not block
            continue
        if block:
            continue
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(SOURCE)}:{number}: {target}"
            if not resolved.exists():
                problems.append(f"{where}: no such file")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                problems.append(f"{where}: no heading with that anchor")
    return problems


def help_problems():
    """Each subcommand's help ends with "Documentation: PAGE"; PAGE exists."""
    if not BINARY.exists():
        return [f"{BINARY} not built"]
    top = subprocess.run([str(BINARY), "--help"], stdout=subprocess.PIPE, text=True).stdout
    names = re.findall(r"^  ([a-z][a-z-]+)\s", top.split("Subcommands:", 1)[-1], re.M)
    problems = [] if names else ["mtbert --help lists no subcommands"]
    for name in names:
        text = subprocess.run([str(BINARY), name, "--help"], stdout=subprocess.PIPE, text=True).stdout
        page = re.search(r"Documentation: (\S+)", text)
        if not page:
            problems.append(f"mtbert {name} --help names no documentation page")
        elif not (SOURCE / page.group(1)).exists():
            problems.append(f"mtbert {name} --help names {page.group(1)}, which does not exist")
    return problems


def main():
    pages = [SOURCE / name for name in ("README.md", "BENCHMARKS.md", "REPRODUCTION.md")]
    pages += sorted((SOURCE / "docs").glob("*.md"))
    problems = [p for page in pages for p in link_problems(page)] + help_problems()
    for problem in problems:
        print(problem)
    print(f"{len(pages)} pages checked, {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
