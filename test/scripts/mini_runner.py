"""A few lines of test runner for the Python script tests (no pytest on the
machines that build mtbert). Each test file defines `test_*` functions that use
plain asserts and ends with `sys.exit(run_tests(globals()))`."""
import contextlib
import io
import sys
import time
import traceback
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parents[2]
# The scripts' importable helpers and the reference implementations.
sys.path.insert(0, str(SOURCE_DIR / "scripts"))
sys.path.insert(0, str(SOURCE_DIR / "test" / "reference"))


def call_main(main, argv):
    """Runs a script's main(argv) in-process, argv items as strings:
    (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def run_tests(namespace):
    """Runs every test_* function of namespace in definition order; prints one
    line per test and `N passed, M failed`; returns the exit code."""
    tests = [(name, f) for name, f in namespace.items() if name.startswith("test_") and callable(f)]
    failed = 0
    for name, test in tests:
        start = time.monotonic()
        try:
            test()
        except Exception:  # a failing test, whatever it raised: report and go on
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc(file=sys.stdout)
        else:
            print(f"ok   {name} ({time.monotonic() - start:.2f}s)")
        sys.stdout.flush()
    print(f"{len(tests) - failed} passed, {failed} failed")
    return 1 if failed else 0
