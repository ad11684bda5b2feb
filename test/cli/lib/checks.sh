# Sourced by the test/cli/*_test.sh scripts: a scratch folder removed on exit,
# the checks they count, and `finish`, which ends the test. (Not a test itself:
# CTest registers only files named *_test.sh.)

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
failures=0

ok() { echo "ok: $1"; }
fail() { echo "FAILED: $1"; failures=$((failures + 1)); }

check() {  # check NAME COMMAND...
  local name="$1"; shift
  if "$@"; then ok "$name"; else fail "$name"; fi
}

# expect_error NAME STDERR_PATTERN -- ARGS...: `$bin ARGS` (stdin: the caller's)
# exits with code 2 and writes exactly one "mtbert: error:" line, matching the
# pattern; any other stderr line must be a log line ("[hh:mm:ss level] ...").
expect_error() {
  local name="$1" pattern="$2"; shift 3
  local status=0
  "$bin" "$@" >"$dir/out" 2>"$dir/err" || status=$?
  if [[ $status -eq 2 ]] && [[ $(grep -c "^mtbert: error:" "$dir/err") -eq 1 ]] &&
     grep "^mtbert: error:" "$dir/err" | grep -q -- "$pattern" &&
     ! grep -v -e "^mtbert: error:" -e "^\[[0-9:]* [a-z]*\] " "$dir/err" | grep -q .; then
    ok "$name"
  else
    fail "$name (exit $status, stderr: $(cat "$dir/err"))"
  fi
}

finish() {  # finish WHAT: exit 1 if a check failed
  if [[ $failures -ne 0 ]]; then
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "all $1 checks passed"
}
