# Sourced by the test/cli/*_test.sh scripts: a scratch folder removed on exit,
# the checks they count, and `finish`, which ends the test. (Not a test itself:
# CTest registers only files named *_test.sh.)

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# What the commands under test leave in the temporary folder (the rank logs of
# a killed launcher, say) goes with the scratch folder.
export TMPDIR="$dir"
failures=0
skipped_parts=()

ok() { echo "ok: $1"; }
fail() { echo "FAILED: $1"; failures=$((failures + 1)); }

check() {  # check NAME COMMAND...
  local name="$1"; shift
  if "$@"; then ok "$name"; else fail "$name"; fi
}

# expect_error NAME STDERR_PATTERN -- ARGS...: `$bin ARGS` (stdin: the caller's)
# exits with code 2 and its whole stderr is one line, "mtbert: error: ...",
# matching the pattern.
expect_error() { one_error_line none "$@"; }
# The same for commands that log while they load (train, eval, predict): log
# lines ("[hh:mm:ss level] ...") may stand beside the one error line.
expect_error_after_logs() { one_error_line logs "$@"; }

one_error_line() {  # one_error_line none|logs NAME STDERR_PATTERN -- ARGS...
  local allowed="$1" name="$2" pattern="$3"; shift 4
  local status=0 noise
  "$bin" "$@" >"$dir/out" 2>"$dir/err" || status=$?
  noise="$(grep -v "^mtbert: error:" "$dir/err" || true)"
  [[ $allowed == logs ]] && noise="$(grep -v "^\[[0-9:]* [a-z]*\] " <<<"$noise" || true)"
  if [[ $status -eq 2 ]] && [[ $(grep -c "^mtbert: error:" "$dir/err") -eq 1 ]] && [[ -z $noise ]] &&
     grep "^mtbert: error:" "$dir/err" | grep -q -- "$pattern"; then
    ok "$name"
  else
    fail "$name (exit $status, stderr: $(cat "$dir/err"))"
  fi
}

# skip_part WHY: a part of the test this machine cannot run. CTest marks a
# test whose output says "SKIPPED:" as skipped whatever its exit code, so the
# line is written only by `finish`, and only when no check failed: a partial
# skip can never hide a failure in the parts that ran.
skip_part() { echo "not run here: $1"; skipped_parts+=("$1"); }

finish() {  # finish WHAT: exit 1 if a check failed
  if [[ $failures -ne 0 ]]; then
    echo "$failures check(s) failed"
    exit 1
  fi
  if [[ ${#skipped_parts[@]} -ne 0 ]]; then
    echo "SKIPPED: in part; all $1 checks that ran passed; not run here: $(IFS=';'; echo "${skipped_parts[*]}")"
    exit 0
  fi
  echo "all $1 checks passed"
}
