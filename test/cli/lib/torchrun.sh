# Sourced by the data-parallel test/cli/*_test.sh scripts (needs $py, a Python
# with torch): `run_torchrun ARGS...` starts torchrun (torch.distributed.run,
# what /usr/bin/torchrun runs) as a user would.
#
# Debian 13's python3-torch (2.6) is built without libuv, yet its TCPStore
# asks for the libuv server by default and torchrun's rendezvous gives it no
# way out ("use_libuv was requested but PyTorch was build without libuv
# support"). Where that is so, torchrun runs here with TCPStore defaulting to
# the classic server, the one torch before 2.4 always used.
run_torchrun() {
  "$py" - "$@" <<'PY'
import sys
import torch.distributed as dist

class ClassicTCPStore(dist.TCPStore):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("use_libuv", False)
        super().__init__(*args, **kwargs)

try:
    dist.TCPStore("127.0.0.1", 0, 1, True, use_libuv=True)
except TypeError:
    pass  # a torch without the libuv option: its only server is the classic one
except RuntimeError:
    dist.TCPStore = ClassicTCPStore

from torch.distributed.run import main
sys.argv = ["torchrun"] + sys.argv[1:]
main()
PY
}
