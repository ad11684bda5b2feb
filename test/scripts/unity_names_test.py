"""A library's files share a translation unit in a unity build (CI builds so:
scripts/build.sh, MTBERT_UNITY_BUILD=1), so no two files of one library may
define the same name in their anonymous namespaces or as file statics: the
unit would hold it twice. A developer's build compiles each file alone and
would not notice; this test does, by reading the sources. It reads what the
project's format puts at column 0 (clang-format indents nothing inside a
namespace), which is where such helpers are defined."""
import collections
import os
import re
import sys

SOURCE = os.environ.get("MTBERT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))

KEYWORDS = {"if", "for", "while", "return", "namespace", "using", "switch", "operator"}
DEFINITION = [
    re.compile(r"^(?:struct|class|enum(?: class)?|union)\s+([A-Za-z_]\w*)\s*(?:final\s*)?[:{]"),
    re.compile(r"^using\s+([A-Za-z_]\w*)\s*="),
    re.compile(r"^(?:template\s*<.*>\s*)?[A-Za-z_][\w:<>,\s\*&]*?\b([A-Za-z_]\w*)\s*(?:\(|=|\{|\[)"),
]


def local_names(path):
    """Names defined at the top of the file's anonymous namespaces, or static."""
    names = set()
    inside = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if re.match(r"^namespace\s*\{", line):
                inside = True
                continue
            if inside and re.match(r"^\}\s*//\s*namespace\s*$", line):
                inside = False
                continue
            if not inside:
                m = re.match(r"^static\s.*?\b([A-Za-z_]\w*)\s*(?:\(|=|\{|\[)", line)
                if m:
                    names.add(m.group(1))
                continue
            # Indented lines are inside a definition; a namespace alias
            # (namespace fs = ...) may be declared again.
            if line[:1] in (" ", "}", "/", "#", "\n", ")") or line.startswith("namespace "):
                continue
            for pattern in DEFINITION:
                m = pattern.match(line)
                if m and m.group(1) not in KEYWORDS:
                    names.add(m.group(1))
                    break
    return names


def main():
    src = os.path.join(SOURCE, "src")
    clashes = []
    libraries = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    for library in libraries:
        folder = os.path.join(src, library)
        where = collections.defaultdict(list)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".cpp"):
                for symbol in local_names(os.path.join(folder, name)):
                    where[symbol].append(name)
        for symbol, files in sorted(where.items()):
            if len(files) > 1:
                clashes.append(f"src/{library}: {symbol} is defined by {', '.join(files)}")
    for clash in clashes:
        print(f"FAILED: {clash} (rename it in all but one, or share it through a header)")
    if clashes:
        sys.exit(1)
    print(f"ok: no name defined twice in one library's local scopes ({len(libraries)} libraries)")


if __name__ == "__main__":
    main()
