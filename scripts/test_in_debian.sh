#!/usr/bin/env bash
# Runs mtbert's setup, build and test suite inside another Debian release, in a
# chroot made with debootstrap, so that one machine tests several LibTorch
# versions (bookworm 1.13, trixie 2.6, sid 2.14 and on).
#
#   scripts/test_in_debian.sh [options] RELEASE [ctest arguments...]
#
#   RELEASE       bookworm | trixie | sid (or 12 | 13)
#   --fresh       start from the bare base system again: no packages, no build
#   --ci          test a fresh `git clone` of this checkout's HEAD by running its
#                 .ci/run, instead of the working tree's scripts/test.sh
#   --carry PATH  copy PATH of the checkout too, though git ignores it (e.g.
#                 .debs for scripts/gpu/check.sh --configure); repeatable
#   --run CMD     run CMD (a shell command) in the copied checkout instead of
#                 scripts/test.sh: `--run scripts/build.sh` only builds,
#                 `--run scripts/setup.sh` only installs the packages, `--run bash`
#                 opens a shell there
#
# The base system of each release is made once (debootstrap --variant=minbase)
# and kept under $MTBERT_CHROOTS (default /var/cache/mtbert/chroots), outside
# the checkout: RELEASE.base stays bare, RELEASE is the copy that tests run in,
# which keeps its packages and its build folder, so a second run rebuilds only
# what changed. The working tree (tracked files and untracked ones git does not
# ignore, uncommitted changes included) is copied to /mtbert/main in it, and the
# data in ../shared, where this checkout has it, is bound read-only at
# /mtbert/shared, so the tests that need it run there too.
#
# Runs as root (debootstrap, chroot and mount need it); sudo otherwise. Needs
# Debian's archive, as apt does.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
if [[ "$(id -u)" -ne 0 ]]; then exec sudo --preserve-env=MTBERT_CHROOTS,MTBERT_BUILD_JOBS,MTBERT_TEST_JOBS,MTBERT_UNITY_BUILD,CCACHE_DISABLE "$0" "$@"; fi

fresh=0 ci=0 run="" carry=()
while [[ $# -gt 0 && "$1" == --* ]]; do
  case "$1" in
    --fresh) fresh=1 ;;
    --ci) ci=1 ;;
    --run) [[ $# -ge 2 ]] || usage; run="$2"; shift ;;
    --carry) [[ $# -ge 2 ]] || usage; carry+=("$2"); shift ;;
    --help) usage ;;
    *) echo "test_in_debian.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ $# -ge 1 ]] || usage
case "$1" in
  bookworm|12) release=bookworm ;;
  trixie|13) release=trixie ;;
  sid|unstable) release=sid ;;
  *) echo "test_in_debian.sh: unknown release '$1' (bookworm, trixie or sid)" >&2; exit 2 ;;
esac
shift

top="$(cd "$(dirname "$0")/.." && pwd)"
chroots="${MTBERT_CHROOTS:-/var/cache/mtbert/chroots}"
base="$chroots/$release.base"
root="$chroots/$release"
mirror="${MTBERT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
started=$SECONDS
phase() { echo "test_in_debian [$release, $((SECONDS - started)) s]: $*"; }

if ! command -v debootstrap >/dev/null; then
  phase "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null; }
fi

# The bare base system, made once; a half-made one is never left under its name.
if [[ ! -d "$base" ]]; then
  phase "debootstrap --variant=minbase $release (once)"
  mkdir -p "$chroots"
  rm -rf "$base.tmp"
  debootstrap --variant=minbase "$release" "$base.tmp" "$mirror" >"$chroots/$release.debootstrap.log" 2>&1 ||
    { tail -20 "$chroots/$release.debootstrap.log" >&2; echo "test_in_debian.sh: debootstrap $release failed (log: $chroots/$release.debootstrap.log)" >&2; exit 1; }
  # Sid's Release file can be past its Valid-Until date on a mirror that lags.
  echo 'Acquire::Check-Valid-Until "false";' >"$base.tmp/etc/apt/apt.conf.d/99mtbert-no-valid-until"
  mv "$base.tmp" "$base"
fi

mounts=()
unmount_all() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
  mounts=()
}
trap unmount_all EXIT
bind() {  # bind SOURCE TARGET [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2"
  mounts+=("$2")
  if [[ "${3:-}" == ro ]]; then mount -o remount,bind,ro "$2"; fi
}

# Nothing may stay mounted inside a chroot that is about to be deleted.
if grep -q " $root/" /proc/mounts; then
  echo "test_in_debian.sh: $root has mounts left (another run of this script?); unmount them first" >&2
  exit 1
fi
if [[ "$fresh" -eq 1 || ! -d "$root" ]]; then
  phase "copying the bare base system to $root"
  rm -rf "$root"
  cp -a "$base" "$root.tmp"
  mv "$root.tmp" "$root"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

mkdir -p "$root/proc" "$root/dev" "$root/sys"
mount -t proc proc "$root/proc"; mounts+=("$root/proc")
bind /dev "$root/dev"
bind /dev/pts "$root/dev/pts"
mkdir -p "$root/dev/shm"
mount -t tmpfs -o mode=1777 shm "$root/dev/shm"; mounts+=("$root/dev/shm")
mount -t sysfs -o ro sysfs "$root/sys" 2>/dev/null && mounts+=("$root/sys") || true
[[ -d "$top/../shared" ]] && bind "$top/../shared" "$root/mtbert/shared" ro

# The source: the working tree (keeping the build folder of an earlier run), or
# a fresh clone of HEAD for --ci.
work="$root/mtbert/main"
mkdir -p "$work"
find "$work" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
if [[ "$ci" -eq 1 ]]; then
  rm -rf "$work"
  git clone -q --no-local "$top" "$work"
  phase "cloned HEAD $(git -C "$work" rev-parse --short=12 HEAD)"
else
  # --touch: the copies are newer than the kept build, so every file is
  # compiled again (ccache answers the unchanged ones). With the checkout's
  # own times, a file edited before the previous run's build (a --ci clone
  # of an older HEAD, say) would look up to date and keep its stale object.
  (cd "$top" && git ls-files -z --cached --others --exclude-standard |
     tar -cf - --null --no-recursion --ignore-failed-read -T - 2>/dev/null) | tar -xf - --touch -C "$work"
  cp -a "$top/.git" "$work/.git"
  for path in "${carry[@]}"; do
    mkdir -p "$(dirname "$work/$path")"
    cp -a "$top/$path" "$work/$path"
  done
  phase "copied the working tree ($(git -C "$top" rev-parse --short=12 HEAD)$([[ -n "$(git -C "$top" status --porcelain)" ]] && echo ", with uncommitted changes"))"
fi

if [[ "$ci" -eq 1 ]]; then
  inner=".ci/run"
elif [[ -n "$run" ]]; then
  inner="$run"
else
  inner="scripts/test.sh"
  [[ $# -eq 0 ]] || inner+="$(printf ' %q' "$@")"
fi
phase "running $inner"
status=0
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  MTBERT_BUILD_JOBS="${MTBERT_BUILD_JOBS:-2}" MTBERT_TEST_JOBS="${MTBERT_TEST_JOBS:-2}" \
  MTBERT_UNITY_BUILD="${MTBERT_UNITY_BUILD:-0}" ${CCACHE_DISABLE+CCACHE_DISABLE="$CCACHE_DISABLE"} \
  bash -c "cd /mtbert/main && $inner" || status=$?
phase "$inner ended with status $status"
exit "$status"
