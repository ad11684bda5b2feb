#!/usr/bin/env python3
"""docs/config-reference.md is what `mtbert config-reference` writes from the
schema: a key added, renamed or re-documented in src/config/ without the page
regenerated fails here, and so does a key without a Doc."""
import difflib
import os
import subprocess
import sys
from pathlib import Path

SOURCE = Path(os.environ.get("MTBERT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BINARY = Path(os.environ.get("MTBERT_BINARY", SOURCE / "build" / "mtbert"))
PAGE = SOURCE / "docs" / "config-reference.md"


def main():
    generated = subprocess.run([str(BINARY), "config-reference"], check=True, stdout=subprocess.PIPE,
                               text=True).stdout
    failed = False
    if "(undocumented)" in generated:
        keys = [line.split("|")[1].strip() for line in generated.splitlines() if "(undocumented)" in line]
        print("keys without a Doc in their describe() line:", ", ".join(keys))
        failed = True
    committed = PAGE.read_text() if PAGE.exists() else ""
    if generated != committed:
        diff = difflib.unified_diff(committed.splitlines(), generated.splitlines(), "docs/config-reference.md",
                                    "mtbert config-reference", lineterm="")
        print("\n".join(list(diff)[:60]))
        print("docs/config-reference.md differs from the schema; regenerate it with\n"
              "  build/mtbert config-reference --output docs/config-reference.md")
        failed = True
    if not failed:
        print(f"docs/config-reference.md matches the schema ({generated.count(chr(10))} lines)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
