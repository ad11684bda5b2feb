#!/bin/bash
# Session 10 quiet-machine measurements (issues 45, 46). Output: one log per config.
cd /work/main
M=/work/measure-s10
NOW=$M/now/mtbert
cb() {  # name baseline candidate rounds steps -- bench args
  local name=$1 base=$2 cand=$3 rounds=$4 steps=$5; shift 5
  { echo "# $(date -u +%H:%M:%S) load: $(cut -d' ' -f1-3 /proc/loadavg) :: $base vs $cand :: $*"
    /usr/bin/python3 bench/compare_builds.py "$base" "$cand" --rounds "$rounds" --steps "$steps" --warmup 3 --max-wait 20 -- "$@"
    echo "# end $(date -u +%H:%M:%S) load: $(cut -d' ' -f1-3 /proc/loadavg)"; } > $M/$name.log 2>&1
}
pe() {  # name -- compare.py args
  local name=$1; shift
  { echo "# $(date -u +%H:%M:%S) load: $(cut -d' ' -f1-3 /proc/loadavg) :: peer :: $*"
    /usr/bin/python3 bench/compare.py --build $M/now --raw $M/$name.raw.jsonl --max-wait 20 "$@"
    echo "# end $(date -u +%H:%M:%S) load: $(cut -d' ' -f1-3 /proc/loadavg)"; } > $M/$name.log 2>&1
}
F="--case encoder_forward --preset small --threads 2"
for prec in fp32 bf16; do
  for n in 64 128; do
    cb 46c1-$prec-$n /work/mtbert-baseline-46 /work/mtbert-46-step1 5 30 $F --length $n --precision $prec
    cb 46c2-$prec-$n /work/mtbert-46-step1 /work/mtbert-46-step2 5 30 $F --length $n --precision $prec
  done
done
for prec in fp32 bf16; do
  cb 45-small-$prec /work/mtbert-pre45 $NOW 5 20 --case train_step --preset small --length 64 --threads 2 --precision $prec
  cb 46all-small-$prec /work/mtbert-pre45 $NOW 5 30 $F --length 64 --precision $prec
done
for prec in fp32 bf16; do
  pe peer-small-$prec --rounds 3 --steps 10 --case train_step --case encoder_forward --preset small --length 64 --threads 2 --precision $prec
done
for prec in fp32 bf16; do
  cb 45-base-$prec /work/mtbert-pre45 $NOW 3 8 --case train_step --preset base --length 64 --threads 2 --precision $prec
  pe peer-base-$prec --rounds 2 --steps 5 --case train_step --case encoder_forward --preset base --length 64 --threads 2 --precision $prec
done
echo done > $M/DONE
