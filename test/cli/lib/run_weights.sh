# Sourced by the data-parallel test/cli/*_test.sh scripts (after checks.sh):
# comparing two run folders' final weights, and a free port for a launcher.
# Needs $py (a Python with torch) and $src (the source folder).

# The largest absolute difference between two runs' final weights.
max_diff() {
  "$py" - "$src/scripts" "$1/checkpoints/last/model.safetensors" "$2/checkpoints/last/model.safetensors" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from mtbert_py.safetensors_io import read_safetensors
a, _ = read_safetensors(sys.argv[2])
b, _ = read_safetensors(sys.argv[3])
assert a.keys() == b.keys(), "different parameters"
print(max((a[k].double() - b[k].double()).abs().max().item() for k in a))
PY
}

within() {  # within RUN_A RUN_B TOLERANCE
  local d
  d="$(max_diff "$1" "$2")"
  echo "  max |difference| $d"
  "$py" -c "import sys; sys.exit(0 if $d <= $3 else 1)"
}

free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
