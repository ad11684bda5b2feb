#!/usr/bin/env bash
# Data-parallel `mtbert train` on CPU, Gloo over loopback, end to end:
# 2 ranks x batch B give the weights of 1 rank x batch 2B (dropout off; plain,
# PCGrad, gradient accumulation); the three launch paths (--nproc, torchrun,
# srun-style variables) train the same run; an interrupted 2-rank run resumes
# exactly; a rank that dies ends the others with one line and exit != 0;
# the ranks' library chatter stays out of the terminal; malformed launcher
# variables are one line and exit 2.
set -euo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
py="${MTBERT_PYTHON:-/usr/bin/python3}"
unset MTBERT_DATA RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT SLURM_PROCID SLURM_NTASKS
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/run_weights.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/torchrun.sh"
cd "$src"

# A tiny encoder without dropout, 48 examples per task, evaluation at the end.
tiny=(model.config.hidden_size=32 model.config.num_hidden_layers=1 model.config.num_attention_heads=2
      model.config.intermediate_size=64 model.config.hidden_dropout_prob=0 model.config.attention_probs_dropout_prob=0
      tasks.sst.dropout=0 tasks.para.dropout=0 tasks.sts.dropout=0
      tasks.sst.limit_train=48 tasks.para.limit_train=48 tasks.sts.limit_train=48
      tasks.sst.limit_dev=40 tasks.para.limit_dev=40 tasks.sts.limit_dev=40 train.epochs=1 threads=1
      distributed.timeout_seconds=60)

# The first run trains the SentencePiece vocabulary; every other run reuses it.
"$bin" train experiments/quickstart.yaml "${tiny[@]}" train.batch_size=8 --out "$dir/one" --no-progress \
  >/dev/null 2>"$dir/one.log"
tiny+=(model.tokenizer.model="$dir/one/tokenizer/spm.model")

"$bin" train experiments/quickstart.yaml "${tiny[@]}" train.batch_size=4 --nproc 2 --out "$dir/two" --no-progress \
  >"$dir/two.out" 2>"$dir/two.log"
check "--nproc 2 finishes the run" grep -q '"status": "finished"' "$dir/two/summary.json"
check "  ... rank 0 prints the table" grep -q "^overall" "$dir/two.out"
check "  ... the summary counts 2 ranks" grep -q '"ranks": 2' "$dir/two/summary.json"
check "  ... and the examples of both" bash -c "grep -q '\"examples_seen\": 144' '$dir/two/summary.json'"
check "  ... threads=1 reaches each rank's BLAS library too" grep -Eq '"blas_threads": (1|null)' "$dir/two/summary.json"
check "2 ranks x batch 4 == 1 rank x batch 8 (<= 1e-5)" within "$dir/one" "$dir/two" 1e-5
"$bin" eval "$dir/two" --split dev >"$dir/two.eval" 2>/dev/null
check "  ... its sharded evaluation is the one process's" \
  bash -c "[[ \"\$(grep '^overall' '$dir/two.eval' | awk '{print \$2}')\" == \"\$(grep '^overall' '$dir/two.out' | awk '{print \$2}')\" ]]"

pcgrad=(train.sampler.kind=mixed train.pcgrad.enabled=true)
"$bin" train experiments/quickstart.yaml "${tiny[@]}" "${pcgrad[@]}" train.batch_size=8 --out "$dir/pc1" --no-progress \
  >/dev/null 2>&1
"$bin" train experiments/quickstart.yaml "${tiny[@]}" "${pcgrad[@]}" train.batch_size=4 --nproc 2 --out "$dir/pc2" \
  --no-progress >/dev/null 2>"$dir/pc2.log"
check "PCGrad: 2 ranks x batch 4 == 1 rank x batch 8" within "$dir/pc1" "$dir/pc2" 1e-5

# The mixed sampler's step: one encoder pass over the three tasks' batches
# (train.join_tasks, the default), against one pass per task and on 2 ranks.
mixed=(train.sampler.kind=mixed)
"$bin" train experiments/quickstart.yaml "${tiny[@]}" "${mixed[@]}" train.batch_size=8 --out "$dir/mix1" --no-progress \
  >/dev/null 2>"$dir/mix1.log"
"$bin" train experiments/quickstart.yaml "${tiny[@]}" "${mixed[@]}" train.join_tasks=false train.batch_size=8 \
  --out "$dir/mix1-apart" --no-progress >/dev/null 2>&1
"$bin" train experiments/quickstart.yaml "${tiny[@]}" "${mixed[@]}" train.batch_size=4 --nproc 2 --out "$dir/mix2" \
  --no-progress >/dev/null 2>&1
check "mixed sampler: the log says the tasks share one encoder pass" \
  grep -q "tasks sst, para, sts share one encoder pass and one backward per step" "$dir/mix1.log"
check "  ... which trains as one pass per task does (<= 1e-5)" within "$dir/mix1" "$dir/mix1-apart" 1e-5
check "  ... and 2 ranks x batch 4 as 1 rank x batch 8" within "$dir/mix1" "$dir/mix2" 1e-5

accumulate=(train.grad_accumulation=2)
"$bin" train experiments/quickstart.yaml "${tiny[@]}" "${accumulate[@]}" train.batch_size=8 --out "$dir/acc1" \
  --no-progress >/dev/null 2>&1
"$bin" train experiments/quickstart.yaml "${tiny[@]}" "${accumulate[@]}" train.batch_size=4 --nproc 2 --out "$dir/acc2" \
  --no-progress >/dev/null 2>&1
check "gradient accumulation: 2 ranks x batch 4 == 1 rank x batch 8" within "$dir/acc1" "$dir/acc2" 1e-5

# The launchers are compared exactly: every rank computes with threads=1 in
# LibTorch and in the BLAS library alike (set_thread_count sets both, whatever
# OMP_NUM_THREADS says), on the same machine, so the arithmetic is the same by
# construction. Before `threads` reached OpenBLAS, a rank's GEMMs used as many
# BLAS threads as its launcher's OMP_NUM_THREADS allowed, and the launchers
# differed by ~1e-7 on machines where OpenBLAS splits these shapes.
# torchrun, as a user would start it (underscored options: torch 1.13's
# spelling, still accepted by 2.x). Debian's torch 1.13 on Python 3.11 cannot
# parse its own default --redirects/--tee "0" (IntFlag iteration skips the
# zero member), so they are given as 1.
if command -v torchrun >/dev/null; then
  OMP_NUM_THREADS=1 run_torchrun --nproc_per_node 2 --master_port "$(free_port)" \
    --redirects 1 --tee 1 --no_python "$bin" train experiments/quickstart.yaml "${tiny[@]}" train.batch_size=4 \
    --out "$dir/torchrun" --no-progress >/dev/null 2>"$dir/torchrun.log" || true
  check "torchrun --nproc_per_node 2 trains the same run as --nproc 2" within "$dir/two" "$dir/torchrun" 0
else
  skip_part "torchrun (none here)"
fi

# srun's variables, set by hand: two tasks of one step, with no OMP_NUM_THREADS.
port="$(free_port)"
for r in 0 1; do
  SLURM_PROCID=$r SLURM_NTASKS=2 SLURM_LOCALID=$r SLURM_LAUNCH_NODE_IPADDR=127.0.0.1 MASTER_PORT=$port \
    "$bin" train experiments/quickstart.yaml "${tiny[@]}" train.batch_size=4 --out "$dir/srun" --no-progress \
    >/dev/null 2>"$dir/srun$r.log" &
  pids[$r]=$!
done
wait "${pids[0]}" && wait "${pids[1]}" && ok "srun-style ranks end with success" || fail "srun-style ranks ($(cat "$dir"/srun*.log))"
check "  ... and train the same run as --nproc 2" within "$dir/two" "$dir/srun" 0

# SIGINT to the launcher: every rank saves and stops (exit 130); --resume
# ends where the uninterrupted run does.
long=(train.epochs=3 train.eval_every_steps=4)
"$bin" train experiments/quickstart.yaml "${tiny[@]}" "${long[@]}" train.batch_size=4 --nproc 2 --out "$dir/full" \
  --no-progress >/dev/null 2>&1
"$bin" train experiments/quickstart.yaml "${tiny[@]}" "${long[@]}" train.batch_size=4 --nproc 2 --out "$dir/int" \
  --no-progress >/dev/null 2>"$dir/int.log" &
pid=$!
for _ in $(seq 1 600); do [[ -d "$dir/int/checkpoints/last" ]] && break; sleep 0.1; done
kill -INT "$pid"
status=0; wait "$pid" || status=$?
check "SIGINT to --nproc 2 ends with exit 130 ($status)" test "$status" -eq 130
check "  ... status interrupted" grep -q '"status": "interrupted"' "$dir/int/summary.json"
check "  ... and its hint carries --nproc 2" grep -q "continue with mtbert train --resume $dir/int --nproc 2" "$dir/int.log"
cp -r "$dir/int" "$dir/int-copy"
expect_error_after_logs "a 2-rank run does not resume as one process" "trained with 2 rank(s)" -- \
  train --resume "$dir/int-copy"
"$bin" train --resume "$dir/int" --nproc 2 --no-progress >/dev/null 2>"$dir/resume.log" ||
  fail "--resume --nproc 2 exits 0: $(tail -3 "$dir/resume.log" | tr '\n' ' ')"
check "--resume --nproc 2 finishes the run" grep -q '"status": "finished"' "$dir/int/summary.json"
check "  ... with exactly the weights of the uninterrupted run" within "$dir/full" "$dir/int" 0

# A rank killed mid-run: the other stops within the timeout, one line, exit != 0.
port="$(free_port)"
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$bin" train experiments/quickstart.yaml "${tiny[@]}" train.epochs=200 train.batch_size=4 \
    distributed.timeout_seconds=20 --out "$dir/kill" --no-progress >/dev/null 2>"$dir/kill$r.log" &
  pids[$r]=$!
done
for _ in $(seq 1 600); do [[ -d "$dir/kill/checkpoints/last" ]] && break; sleep 0.1; done
kill -KILL "${pids[1]}"
start=$SECONDS
status=0; wait "${pids[0]}" || status=$?
check "killing rank 1 ends rank 0 with exit != 0 ($status) within the timeout ($((SECONDS - start)) s)" \
  test "$status" -ne 0 -a $((SECONDS - start)) -le 20
check "  ... and one line saying so" bash -c "[[ \$(grep -c '^mtbert: error: rank 0 of 2: .* failed: another rank exited' '$dir/kill0.log') -eq 1 ]]"
wait "${pids[1]}" 2>/dev/null || true

# A rank that hangs (stopped): the other gives up after distributed.timeout_seconds.
port="$(free_port)"
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$bin" train experiments/quickstart.yaml "${tiny[@]}" train.epochs=200 train.batch_size=4 \
    distributed.timeout_seconds=5 --out "$dir/hang" --no-progress >/dev/null 2>"$dir/hang$r.log" &
  pids[$r]=$!
done
for _ in $(seq 1 600); do [[ -d "$dir/hang/checkpoints/last" ]] && break; sleep 0.1; done
kill -STOP "${pids[1]}"
start=$SECONDS
status=0; wait "${pids[0]}" || status=$?
check "a hung rank 1 ends rank 0 with exit != 0 ($status) after the 5 s timeout ($((SECONDS - start)) s)" \
  test "$status" -ne 0 -a $((SECONDS - start)) -ge 4 -a $((SECONDS - start)) -le 30
check "  ... and one line saying so" bash -c "[[ \$(grep -c '^mtbert: error: rank 0 of 2: .* within 5 s' '$dir/hang0.log') -eq 1 ]]"
kill -KILL "${pids[1]}"
wait "${pids[1]}" 2>/dev/null || true

"$bin" train experiments/quickstart.yaml "${tiny[@]}" train.epochs=200 train.batch_size=4 --nproc 2 \
  --out "$dir/nkill" --no-progress >/dev/null 2>"$dir/nkill.log" &
pid=$!
for _ in $(seq 1 600); do [[ -d "$dir/nkill/checkpoints/last" ]] && break; sleep 0.1; done
kill -KILL "$(pgrep -P "$pid" | tail -1)"  # one of its ranks
status=0; wait "$pid" || status=$?
check "--nproc: a killed rank ends the run with exit != 0 ($status)" test "$status" -ne 0
check "  ... naming it" grep -Eq "^mtbert: error: rank [01] of 2 was killed by signal 9" "$dir/nkill.log"

# Bad input that every rank meets: one line (not one per rank, nor a rank's
# "barrier failed" about the peer that stopped), exit 2, as without --nproc.
expect_error_after_logs "--nproc: a missing data file is one line naming its key, exit 2" "tasks.sst.dev: .*missing-dev.csv does not exist" -- \
  train experiments/quickstart.yaml "${tiny[@]}" tasks.sst.dev="$dir/missing-dev.csv" --nproc 2 --out "$dir/badn"
expect_error_after_logs "--nproc: a max_length beyond the positions is one line, exit 2" \
  "tasks.sst.max_length is 1000 but the model has only" -- \
  train experiments/quickstart.yaml "${tiny[@]}" tasks.sst.max_length=1000 --nproc 2 --out "$dir/badn"
check "  ... leaving no run folder" test ! -e "$dir/badn"

# Library chatter (Gloo's "INFO Rank 1 is connected" lines on newer LibTorch)
# stays out of the terminal: each rank's stderr is its log file. Debian 12's
# LibTorch prints none, so a stand-in prints one where Gloo does, on connect.
cat >"$dir/chatter.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
int connect(int fd, const struct sockaddr* address, socklen_t length) {
  int (*real)(int, const struct sockaddr*, socklen_t) = dlsym(RTLD_NEXT, "connect");
  if (getenv("RANK")) dprintf(2, "[./gloo/transport/tcp/context.cc:243] INFO Rank %s is connected to 1 peer ranks\n", getenv("RANK"));
  return real(fd, address, length);
}
C
if "${CC:-cc}" -shared -fPIC -o "$dir/chatter.so" "$dir/chatter.c" -ldl 2>"$dir/chatter.cc.log"; then
  LD_PRELOAD="$dir/chatter.so" expect_error_after_logs "--nproc: a rank's library chatter stays out of a bad input's one line" \
    "tasks.sst.max_length is 1000 but the model has only" -- \
    train experiments/quickstart.yaml "${tiny[@]}" tasks.sst.max_length=1000 --nproc 2 --out "$dir/badn"
  LD_PRELOAD="$dir/chatter.so" MTBERT_RANK_LOGS="$dir/rank-logs" "$bin" train experiments/quickstart.yaml "${tiny[@]}" \
    train.batch_size=4 --nproc 2 --out "$dir/quiet" --no-progress >/dev/null 2>"$dir/quiet.log" ||
    fail "--nproc 2 with chatter: $(tail -3 "$dir/quiet.log" | tr '\n' ' ')"
  check "--nproc: a run's library chatter stays out of the terminal" bash -c "! grep -q 'INFO Rank' '$dir/quiet.log'"
  check "  ... while rank 0's own lines reach it" grep -q "(2 ranks x 1 threads)" "$dir/quiet.log"
  check "  ... and each rank's log (MTBERT_RANK_LOGS) keeps it" \
    bash -c "grep -q 'INFO Rank 0 is connected' '$dir/rank-logs/rank0.log' && grep -q 'INFO Rank 1' '$dir/rank-logs/rank1.log'"
else
  skip_part "library chatter (no C compiler to build the stand-in: $(head -1 "$dir/chatter.cc.log"))"
fi

RANK=one WORLD_SIZE=2 expect_error "a malformed RANK is one line" 'RANK="one" is not a whole number' -- \
  train experiments/quickstart.yaml --out "$dir/bad"
SLURM_PROCID=0 SLURM_NTASKS=2 expect_error "srun variables without a master address" "needs rank 0's address" -- \
  train experiments/quickstart.yaml --out "$dir/bad"

finish "data-parallel training"
