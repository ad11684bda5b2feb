#!/usr/bin/env bash
# Runs on the GPU machine (the device tool), from the repository root with
# .debs/ carried (scripts/gpu/prepare.sh): builds mtbert against pip's
# LibTorch with CUDA and runs what needs a GPU, each stage under a time limit
# and timed, writing its log and a line of check.json into $OUT as it goes.
#
#   scripts/gpu/check.sh              everything, inside CHECK_BUDGET seconds
#                                     (default 570: one device call)
#   scripts/gpu/check.sh --configure  unpack and configure only (a dry run of
#                                     the build here: any LibTorch, no GPU)
#   scripts/gpu/check.sh --dry-run BUILD
#                                     everything after the build, on the CPU,
#                                     with BUILD's mtbert, tests and op library
#                                     and tiny models: the dry run of the
#                                     stages and benchmarks here
#   scripts/gpu/check.sh --hf         HuggingFace's DeBERTa-v2 with the op
#                                     patched in (test/scripts/hf_deberta_patch_test.py,
#                                     then bench/hf_deberta_patch.py at N = 512,
#                                     1024, 2048: hf_patch.jsonl), building only
#                                     the op's library; a second call on the
#                                     warm machine reuses the first one's build
#
# Stages: unpack the Debian packages into a prefix; configure (pip's LibTorch,
# TORCH_CUDA_ARCH_LIST, default 9.0 for an H100/H200); build mtbert and its
# tests with all cores and -k 0, so that one call shows every compile error;
# the test fixtures. Then the correctness stages, all at once: the tests tagged
# [cuda] (the op against the CPU in every dtype, banded and full, at B*H*N^2 >
# 2^31, gradcheck in double, a bad band as a catchable error, the parity
# fixtures with TF32 off, a training step against the CPU, bf16 autocast,
# fused against explicit attention, resume across devices, FusedAdamW's
# foreach step, the step replayed from CUDA graphs against the eager one, its
# dropout, its length buckets, a run resumed from a replayed run's
# checkpoint, and evaluations replayed against eager ones; the p2p term in
# all of them); compute-sanitizer memcheck on
# the op's tests; the op from Python and patched into HuggingFace's DeBERTa-v2;
# a short `mtbert train` (BERT, and DeBERTa with all four terms in bf16) and
# `mtbert pretrain` on CUDA. Then the timings, one at a time, most wanted
# first, each inside what is left of the budget: the small step's operator
# profile; bench/gpu_peer.py (mtbert, its steps and forwards eager and in CUDA graphs,
# against transformers' BertModel and DebertaV2Model, eager: peer.jsonl);
# bench/hf_deberta_patch.py (the attention
# alone and DeBERTa-v3-base, HF's against the op: hf_patch.jsonl); where the
# machine's CPU has AMX (issue 37; cpu.txt names the CPU), bench/compare.py on
# that CPU, mtbert against the eager peer in bf16 and fp32 (cpu.jsonl); the
# peer under torch.compile with whatever time is left.
set -uo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
out="${OUT:-$root/gpu-check-out}"
mkdir -p "$out"
mode="${1:-all}"
case "$mode" in
  all|--configure|--hf) ;;
  --dry-run) [[ -x "${2:-}/mtbert" ]] || { echo "check.sh: --dry-run needs a build folder with mtbert" >&2; exit 2; } ;;
  *) echo "check.sh: unknown argument $mode (none, --configure, --dry-run BUILD or --hf)" >&2; exit 2 ;;
esac
jobs="$(nproc)"
export root build="$root/build-gpu" prefix="$root/.debs/root"
# The device and model sizes of the runs and benchmarks.
dev=cuda
peer_args=(--size base)
hf_bench_args=(--size base --lengths 512 1024 2048 --batch 4 --reps 6)
if [[ $mode == --dry-run ]]; then
  build="$(cd "$2" && pwd)"
  dev=cpu
  peer_args=(--size tiny --case bert_step_bf16 --case deberta_step_bf16 --case bert_forward_bf16_n128)
  hf_bench_args=(--size tiny --lengths 64 128 --batch 2 --reps 2)
fi
report="$out/check.json"
runs="$(mktemp -d)"
: >"$report"
: >"$out/stages.log"
started=$SECONDS
# The stages that failed so far: check.json's lines whose status is not 0
# (stages run in the background too, so no counter in this shell would see them).
failed_stages() { grep -vc '"status": 0' "$report"; }

# stage NAME SECONDS COMMAND...: runs COMMAND under `timeout`, its output
# appended to $OUT/stages.log (the build's to $OUT/build.log: few files come
# back from the device), and appends {"stage", "status", "seconds"} to
# check.json.
stage() {
  local name="$1" limit="$2"
  shift 2
  local begin=$SECONDS status=0 log="${STAGE_LOG:-$out/stages.log}"
  [[ $name == build ]] && log="$out/build.log"
  echo "== $name (at most $limit s)" | tee -a "$log"
  if declare -F "$1" >/dev/null; then  # a function of this script, in a shell of its own under timeout
    timeout "$limit" bash -c "set -uo pipefail; $(declare -f "$1"); $(printf '%q ' "$@")" >>"$log" 2>&1 || status=$?
  else
    timeout "$limit" "$@" >>"$log" 2>&1 || status=$?
  fi
  local took=$((SECONDS - begin))
  echo "{\"stage\": \"$name\", \"status\": $status, \"seconds\": $took}" >>"$report"
  echo "== $name: exit $status in $took s" | tee -a "$log"
  return $status
}

unpack() {
  rm -rf "$prefix"
  mkdir -p "$prefix"
  for deb in "$root"/.debs/*.deb; do dpkg-deb -x "$deb" "$prefix" || return 1; done
  # The .pc files name /usr: point them at the prefix.
  grep -rl '^prefix=/usr' "$prefix/usr" --include='*.pc' | xargs -r sed -i "s|^prefix=/usr|prefix=$prefix/usr|"
  ls "$prefix/usr/include" | head -20
}

configure() {
  local torch_prefix
  torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)" || torch_prefix=""
  echo "LibTorch from: ${torch_prefix:-the system}"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="${torch_prefix:+$torch_prefix;}$prefix/usr" \
    -DPKG_CONFIG_EXECUTABLE="$prefix/usr/bin/pkgconf" \
    -DTORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}" \
    -DMTBERT_PYTHON="$(command -v python3)"
}

export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_PATH="$prefix/usr/lib/x86_64-linux-gnu/pkgconfig:$prefix/usr/share/pkgconfig"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv >"$out/gpu.txt" 2>&1

if [[ $mode != --dry-run ]]; then
  stage unpack 60 unpack || exit 1
  stage configure 180 configure || exit 1
fi
if [[ $mode == --configure ]]; then
  echo "configured in $((SECONDS - started)) s (--configure: nothing built)"
  exit 0
fi
if [[ $mode == --hf ]]; then
  stage build-ops 300 cmake --build "$build" -j "$jobs" --target mtbert_ops_module
  export MTBERT_OPS_LIBRARY="$build/libmtbert_ops.so"
  stage hf-patch-test 120 python3 test/scripts/hf_deberta_patch_test.py
  # deberta-v3-base's shape, batch 4: HF's unpatched backward at N = 2048
  # keeps several [B*12, N, N] float tensors per layer.
  stage hf-patch-bench 300 python3 bench/hf_deberta_patch.py --device cuda --lengths 512 1024 2048 \
    --batch 4 --reps 10 --out "$out/hf_patch.jsonl"
  rm -rf "$runs"
  failed=$(failed_stages)
  echo "check.sh --hf: $failed stage(s) failed, $((SECONDS - started)) s in all"
  [[ $failed -eq 0 ]]
  exit
fi
# The executable, the tests and the op's Python library (benchmark binaries
# are not run here).
[[ $mode == --dry-run ]] ||
  stage build 330 cmake --build "$build" -j "$jobs" --target mtbert mtbert_tests mtbert_ops_module -- -k 0
tests="$build/test/mtbert_tests"
# Which C++ runtime the libraries took: on 2026-11-27 (H200) the op's library
# crashed in a Python process inside its own copy of libstdc++'s stream code
# (the image's compiler is /opt/gcc/bin/g++), most likely a static libstdc++
# linked in; configure now links the op's library against a shared one when
# the compiler would embed it (cmake/shared_libstdcxx.cmake, whose line is in
# the configure log). These lines say what the build took.
toolchain() {
  grep -E '^CMAKE_CXX_COMPILER:|^CMAKE_CUDA_HOST_COMPILER:' "$build/CMakeCache.txt"
  local cxx
  cxx="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"
  "$cxx" --version | head -1
  echo "libstdc++.so: $("$cxx" -print-file-name=libstdc++.so)  libstdc++.a: $("$cxx" -print-file-name=libstdc++.a)"
  "$cxx" -dumpspecs | grep -A1 -i 'static-libstdc\|^\*link:' | cut -c1-300 | head -6
  for lib in "$build/libmtbert_ops.so" "$build/mtbert"; do
    echo "$lib: $(ldd "$lib" | grep -c 'libstdc++') libstdc++.so in ldd; $(nm -D --defined-only "$lib" | c++filt |
      grep -c 'std::locale::\|std::basic_ostream<char, std::char_traits<char> >::_M_insert') of libstdc++'s locale/ostream symbols defined inside"
  done
}
[[ $mode == --dry-run ]] || stage toolchain 30 toolchain
export MTBERT_FIXTURES="$build/fixtures" MTBERT_SOURCE_DIR="$root" OMP_WAIT_POLICY=PASSIVE
export MTBERT_OPS_LIBRARY="$build/libmtbert_ops.so"
stage fixtures 60 python3 scripts/make_test_fixtures.py --out "$build/fixtures"

# Correctness, all at once (16 cores, one GPU with room for all): each stage
# logs to a file of its own, appended to stages.log when all are done.
tiny=(device=$dev threads=2 model.config.hidden_size=64 model.config.num_hidden_layers=2
      model.config.num_attention_heads=2 model.config.intermediate_size=128 tasks.sst.limit_train=256
      tasks.para.limit_train=256 tasks.sts.limit_train=256 train.epochs=3)
deberta=("$build/mtbert" train experiments/quickstart.yaml "${tiny[@]}" precision=bf16
         model.config.relative_attention=true model.config.pos_att_type=c2p\|p2c\|p2p --no-progress)
deberta_train() {
  if ! stage train-cuda-bf16 90 "${deberta[@]}" --out "$runs/deberta"; then
    # Where it crashed: gdb's backtrace, or scripts/gpu/fault_trace.c's report
    # preloaded into the process (the image has no gdb).
    if command -v gdb >/dev/null; then
      stage backtrace 90 gdb -q -batch -ex run -ex bt --args "${deberta[@]}" --out "$runs/deberta-gdb"
    else
      gcc -shared -fPIC -o "$runs/fault_trace.so" scripts/gpu/fault_trace.c
      LD_PRELOAD="$runs/fault_trace.so" stage backtrace 90 "${deberta[@]}" --out "$runs/deberta-trace"
      # Frames in mtbert itself ("mtbert(+0x...)") as functions and lines.
      grep -o 'mtbert(+0x[0-9a-f]*)' "$STAGE_LOG" | grep -o '0x[0-9a-f]*' |
        xargs -r addr2line -f -C -i -e "$build/mtbert" >>"$STAGE_LOG" 2>&1
    fi
  fi
}
cat >"$runs/pretrain.yaml" <<YAML
extends: $root/experiments/pretrain/base.yaml
device: $dev
model:
  config: {hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 2, intermediate_size: 128,
           max_position_embeddings: 64}
  tokenizer: {kind: wordpiece, vocab: $build/fixtures/models/bert-legacy/vocab.txt}
corpus: {experiment: experiments/quickstart.yaml, tasks: [sst, sts], max_length: 32, cache_dir: $runs/cache}
train: {max_steps: 40, batch_size: 16, eval_every_steps: 20, eval_segments: 64}
YAML
parallel() {  # parallel NAME COMMAND...: a stage in the background, logging to a file of its own
  local name="$1"
  shift
  STAGE_LOG="$runs/$name.log" "$@" &
  parallel_logs+=("$runs/$name.log")
}
parallel_logs=()
parallel cuda-tests stage cuda-tests 180 "$tests" "[cuda]" --durations yes
parallel attention-tests stage attention-tests 90 "$tests" "[attention],[autocast]" --durations yes
# The op from pip's torch (libmtbert_ops.so built against its LibTorch), CUDA
# against CPU included; then HuggingFace's DeBERTa-v2 with the op patched in.
parallel py-ops stage py-ops 60 python3 test/scripts/ops_test.py
parallel hf-patch-test stage hf-patch-test 120 python3 test/scripts/hf_deberta_patch_test.py
parallel train-cuda stage train-cuda 90 "$build/mtbert" train experiments/quickstart.yaml "${tiny[@]}" --out "$runs/train" --no-progress
parallel train-cuda-bf16 deberta_train
parallel pretrain-cuda stage pretrain-cuda 90 "$build/mtbert" pretrain "$runs/pretrain.yaml" --out "$runs/pretrain" --no-progress
if command -v compute-sanitizer >/dev/null; then
  parallel memcheck stage memcheck 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$tests" "[relpos][cuda]~[large]"
else
  echo '{"stage": "memcheck", "status": "no compute-sanitizer", "seconds": 0}' >>"$report"
fi
wait
for log in "${parallel_logs[@]}"; do cat "$log" >>"$out/stages.log" 2>/dev/null; done
# Finite train losses that fall, in each of the three runs.
stage losses-fall 30 python3 scripts/gpu/losses_fall.py "$runs/train" "$runs/deberta" "$runs/pretrain"

# Timings, one at a time on a quiet machine, most wanted first, inside the
# call's budget (CHECK_BUDGET seconds from the start, default 570).
budget="${CHECK_BUDGET:-570}"
left() { echo $((budget - (SECONDS - started))); }
# Where the small step's host time goes (it is bound by the host).
stage small-step-profile 60 "$build/mtbert" bench --device $dev --case train_step --preset small --length 128 \
  --batch 32 --steps 10 --warmup 3 --precision bf16 --profile
# Issue 37 while on this machine: which CPU it has (cpu.txt) and, where that
# CPU has AMX, the CPU comparison below, whose time is kept back here.
{ grep -m1 'model name' /proc/cpuinfo; grep -ow 'amx_bf16\|amx_tile\|avx512_bf16' /proc/cpuinfo | sort -u; } >"$out/cpu.txt"
amx=0
grep -qw amx_bf16 /proc/cpuinfo && amx=1
cpu_extra=""
if [[ $mode == --dry-run ]]; then
  amx=1
  cpu_extra="--hidden 64 --layers 1 --heads 2 --intermediate 128"
fi
cpu_reserve=$((amx ? 100 : 0))
# mtbert against transformers' BertModel / DebertaV2Model, eager (peer.jsonl),
# leaving about 110 s (and the CPU comparison's) for what follows.
stage peer-eager "$(( $(left) - 100 - cpu_reserve > 60 ? $(left) - 100 - cpu_reserve : 60 ))" python3 bench/gpu_peer.py \
  --mtbert "$build/mtbert" --device $dev "${peer_args[@]}" --compile no --steps 10 --warmup 3 --rounds 2 \
  --deadline "$(( $(left) - 125 - cpu_reserve ))" --out "$out/peer.jsonl"
# The disentangled attention alone and the whole DeBERTa-v3-base, HF's own
# against the op patched in (hf_patch.jsonl).
stage hf-patch-bench "$(( $(left) - cpu_reserve > 110 ? 100 : 60 ))" python3 bench/hf_deberta_patch.py --device $dev \
  "${hf_bench_args[@]}" --out "$out/hf_patch.jsonl"
# On an AMX CPU: mtbert against the eager PyTorch peer on the CPU, as issue 37
# measured it (small preset, N = 64, 2 threads; bf16 under CPU autocast, then
# fp32): cpu.jsonl. BUILD RAW [EXTRA: more bench flags for both].
cpu_compare() {
  local precision
  for precision in bf16 fp32; do
    python3 bench/compare.py --build "$1" --python python3 --case encoder_forward --case train_step --preset small \
      --length 64 --precision "$precision" --threads 2 --rounds 2 --steps 6 --warmup 2 --max-wait 5 --raw "$2" \
      --extra "${3:-}" || return
  done
}
if ((amx && $(left) >= 60)); then
  stage cpu-amx "$(( $(left) - 10 < cpu_reserve ? $(left) - 10 : cpu_reserve ))" cpu_compare "$build" \
    "$out/cpu.jsonl" "$cpu_extra"
fi
# Whatever time is left: the peer under torch.compile, mode "default", then
# "reduce-overhead" (CUDA graphs) where time is left (gpu_peer.py starts a
# compile case with 100 s and 120 s left); its summary lines read mtbert
# against the fastest peer variant of this call and the eager one.
if (( $(left) > 120 )); then
  stage peer-compile "$(( $(left) - 10 ))" python3 bench/gpu_peer.py --mtbert "$build/mtbert" --compile only \
    --mode default --mode reduce-overhead --device $dev "${peer_args[@]}" --steps 10 --warmup 3 \
    --deadline "$(( $(left) - 15 ))" --out "$out/peer.jsonl"
fi
rm -rf "$runs"
failed=$(failed_stages)
echo "check.sh: $failed stage(s) failed, $((SECONDS - started)) s in all"
[[ $failed -eq 0 ]]
