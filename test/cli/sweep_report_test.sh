#!/usr/bin/env bash
# `mtbert sweep` and `mtbert report` end to end: a sweep of two tiny runs
# (a random 1-layer encoder on the committed quickstart data, a few steps)
# trained two at a time under a smoke overlay; a rerun that skips them; resume
# and restart of runs left interrupted or failed; the report in every format;
# the Slurm script; and the one-line errors (exit code 2) for bad files.
set -uo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"
data="$src/experiments/data/quickstart"
cd "$dir"

mkdir -p experiments/tiny sweeps tables
cat >experiments/tiny/quick.yaml <<YAML
# A random 1-layer encoder with its own SentencePiece vocabulary.
seed: 11711
threads: 1
device: cpu
model:
  pretrained: ""
  config: {hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 64,
           max_position_embeddings: 64}
  tokenizer: {kind: sentencepiece, model: $dir/spm.model, train_from: [tasks], vocab_size: 300}
tasks:
  sst: {train: $data/ids-sst-train.csv, dev: $data/ids-sst-dev.csv, test: $data/ids-sst-test-student.csv,
        max_length: 32}
  para: {train: $data/quora-dev-split-train.csv, dev: $data/quora-dev-split-dev.csv, max_length: 32}
  sts: {train: $data/sts-train.csv, dev: $data/sts-dev.csv, test: $data/sts-test-student.csv, max_length: 32}
train: {epochs: 1, batch_size: 8, lr: 1.0e-4}
YAML
cat >smoke.yaml <<'YAML'
tags: [smoke]
tasks:
  sst: {limit_train: 48, limit_dev: 24, limit_test: 8}
  para: {limit_train: 48, limit_dev: 24}
  sts: {limit_train: 48, limit_dev: 24, limit_test: 8}
train: {max_steps: 3}
YAML
cat >sweeps/quick.yaml <<'YAML'
name: quick
output_root: runs/quick
experiments: [../experiments/tiny/quick.yaml]
seeds: [1, 2]
YAML
cat >tables/quick.yaml <<'YAML'
title: "Quick table"
sweep: ../sweeps/quick.yaml
columns: {overall: Overall, sst: SST, para: Quora, sts: STS}
rows:
  - {label: quick, run: quick, paper: {overall: 0.635, sst: 0.453, para: 0.789, sts: 0.324}}
  - {label: quick (test), run: quick, split: test, paper: {sst: 0.5}}
YAML

# --- dry run, then the sweep, two at a time
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml --dry-run >out 2>err
check "dry run lists both runs as missing, to start" \
  grep -Eq '^quick-seed2 +missing +start +runs/quick/quick-seed2 seed=2$' out
check "dry run trains nothing" test ! -e runs/quick
status=0
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml --dry-run model.pretrained=models/absent >out 2>err || status=$?
check "dry run: a missing model folder cannot start, and says which" \
  grep -Eq '^quick-seed1 +missing +cannot start +runs/quick/quick-seed1 seed=1  \(missing model.pretrained: models/absent\)$' out
check "  ... and the dry run fails as the sweep would (exit 2)" test "$status" -eq 2
check "  ... saying how many cannot start" grep -q "2 of the 2 runs cannot start: a file they read is missing" err
expect_error "--out naming a file is one line" "--out: smoke.yaml exists and is not a folder" -- \
  sweep sweeps/quick.yaml --overlay smoke.yaml --dry-run --out smoke.yaml
expect_error "--only: a pattern that selects no run is one line naming it" \
  "--only quick-seed\[3-9\]: no run of sweep quick has that name" -- \
  sweep sweeps/quick.yaml --overlay smoke.yaml --dry-run --only 'quick-seed[3-9]'
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml --dry-run --only quick-seed2 >out 2>err
check "--only: the dry run lists the selected run" grep -Eq '^quick-seed2 +missing +start ' out
check "  ... and no other" bash -c "! grep -q '^quick-seed1 ' out"
check "  ... and says how many of the sweep's runs it selected" grep -q -- "--only: 1 of the sweep's 2 runs" err
status=0
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml --jobs 2 >out 2>err || status=$?
check "the sweep succeeds" test "$status" -eq 0
check "the sweep shares the cores between 2 runs" grep -q '2 to train (2 at a time' out
check "one status line per run" test "$(grep -Ec '^\[[12]/2\] quick-seed[12]  finished  overall [0-9.-]+' out)" -eq 2
for seed in 1 2; do
  run=runs/quick/quick-seed$seed
  check "seed $seed: finished" grep -q '"status": "finished"' $run/summary.json
  check "seed $seed: named by the sweep" grep -q "\"name\": \"quick-seed$seed\"" $run/summary.json
  check "seed $seed: its seed" grep -q "^seed: $seed\$" $run/config.resolved.yaml
  check "seed $seed: the overlay's tag" grep -A1 -q '"tags": \[' $run/summary.json
  check "seed $seed: the overlay's tag is smoke" test "$(grep -A1 '"tags": \[' $run/summary.json | tail -1 | tr -d ' ')" = '"smoke"'
  check "seed $seed: the overlay's limits" grep -q '^    limit_train: 48$' $run/config.resolved.yaml
  check "seed $seed: train.log holds the command and its output" grep -q "mtbert sweep: .* train .*--overlay smoke.yaml" $run/train.log
done
check "the overlay's 3 steps" grep -q '"steps": 3' runs/quick/quick-seed1/summary.json

# --- a rerun skips finished runs
cp runs/quick/quick-seed1/summary.json before.json
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml --jobs 2 >out 2>err
check "a rerun trains nothing" grep -q '0 to train .* 2 finished' out
check "a rerun leaves the runs alone" cmp -s before.json runs/quick/quick-seed1/summary.json
# A run records the --threads the sweep gave it; another count is no change.
sed -i 's/^threads: 1$/threads: 7/' runs/quick/quick-seed1/config.resolved.yaml
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml --dry-run >out 2>err
check "the threads a run was given are not a config change" bash -c "! grep -q 'config changed' err"
sed -i 's/^threads: 7$/threads: 1/' runs/quick/quick-seed1/config.resolved.yaml

# --- an interrupted run is resumed, a run that failed before a checkpoint restarted
sed -i 's/"status": "finished"/"status": "interrupted"/' runs/quick/quick-seed1/summary.json
rm -rf runs/quick/quick-seed2/checkpoints
sed -i 's/"status": "finished"/"status": "running"/' runs/quick/quick-seed2/summary.json
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml --dry-run >out 2>err
check "dry run: interrupted -> resume" grep -Eq '^quick-seed1 +interrupted +resume ' out
check "dry run: failed -> restart" grep -Eq '^quick-seed2 +failed +restart ' out
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml --jobs 2 >out 2>err
check "the interrupted run resumed" grep -q 'train --resume runs/quick/quick-seed1' runs/quick/quick-seed1/train.log
check "the failed run restarted, its old log kept" test "$(grep -c 'mtbert sweep: .* --out runs/quick/quick-seed2' runs/quick/quick-seed2/train.log)" -eq 2
check "both finished again" test "$(grep -l '"status": "finished"' runs/quick/*/summary.json | wc -l)" -eq 2

# --- a changed experiment is reported, not retrained
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml train.lr=2e-4 --dry-run >out 2>err
check "a changed config is named" grep -q 'quick-seed1: its config changed since it was trained (train.lr: the run has 0.0001, the sweep now gives 0.0002)' err

# --- the report
"$bin" report tables/quick.yaml >report.md 2>err
check "md: smoke banner" grep -q "SMOKE RUNS, NOT THE PAPERS' SETTING" report.md
check "md: the row over 2 seeds, mean ± std" grep -Eq '^\| quick \| dev \| 2 \| 0\.635 \| [0-9.]+ ± [0-9.]+ \| [+-][0-9.]+ \|' report.md
check "md: unlabeled test" grep -q '^| quick (test) | test | 2 | | n/a (unlabeled)' <(sed 's/  */ /g' report.md)
check "a warning on stderr for smoke runs" grep -q "tagged smoke" err
"$bin" report tables/quick.yaml --format csv --output report.csv 2>/dev/null
check "csv: header and a row per table row" test "$(wc -l <report.csv)" -eq 3
check "csv: the smoke tag" grep -q '^quick,quick,dev,2,2,0.635,.*,smoke,$' report.csv
"$bin" report tables/quick.yaml --format latex >report.tex 2>/dev/null
cp tables/quick.yaml quick-table.bak
expect_error_after_logs "report --output over its own table file is refused" \
  "--output tables/quick.yaml would overwrite tables/quick.yaml, which this command reads" -- \
  report tables/quick.yaml --output tables/quick.yaml
check "  ... leaving the table as it was" cmp -s quick-table.bak tables/quick.yaml
check "latex: booktabs" grep -q '\\toprule' report.tex
mean=$(/usr/bin/python3 - <<'PY'
import json
v = [json.load(open(f"runs/quick/quick-seed{s}/summary.json"))["best"]["overall"] for s in (1, 2)]
print(f"{sum(v) / 2:.6g}")
PY
)
check "csv: the mean of the two seeds' overall" grep -q "^quick,quick,dev,2,2,0.635,$mean," report.csv

# --- rows against a reference: paired-bootstrap intervals from the runs' dev predictions
cat >tables/against.yaml <<'YAML'
title: "Seeds against each other"
sweep: ../sweeps/quick.yaml
columns: {overall: Overall, sst: SST, para: Quora, sts: STS}
rows:
  - {label: seed 1, run: quick-seed1}
  - {label: seed 2, run: quick-seed2}
  - {label: both seeds, run: quick}
  - {label: test, run: quick, split: test}
against: seed 1
YAML
"$bin" report tables/against.yaml --bootstrap-samples 200 >against.md 2>err
check "md: the differences section" grep -q '^### Against seed 1$' against.md
check "md: the reference row" grep -q '^| seed 1 | reference | reference |' against.md
check "md: a difference with its interval" \
  grep -Eq '^\| seed 2 \| [+-][0-9.]+ \[[+-][0-9.]+, [+-][0-9.]+\]( ~)? \|' against.md
check "md: a test row is not compared" grep -q '^| test | test split |' against.md
"$bin" report tables/against.yaml --against "both seeds" --format csv --output against.csv 2>/dev/null
check "csv: the interval columns" grep -q ',overall_vs_against,overall_vs_against_low,overall_vs_against_high,' against.csv
check "csv: --against replaces the table's" grep -q '^seed 1,quick-seed1,dev,1,1,.*,both seeds,' against.csv
"$bin" report tables/against.yaml --format latex >against.tex 2>/dev/null
check "latex: a second table" test "$(grep -c '\\begin{tabular}' against.tex)" -eq 2
"$bin" report tables/against.yaml --bootstrap-samples 200 -o all.md -o all.csv -o all.tex 2>/dev/null
"$bin" report tables/against.yaml --bootstrap-samples 200 --format csv >against-200.csv 2>/dev/null
check "one pass, three outputs: md as the md report" cmp -s all.md against.md
check "  ... csv as the csv report (the same intervals)" cmp -s all.csv against-200.csv
check "  ... tex from its extension" grep -q '\\toprule' all.tex
expect_error "--format with several --output" "--format with several --output" -- \
  report tables/against.yaml --format csv -o a.csv -o b.csv
expect_error "an --output given twice" "--output ./all.md: the same file as --output all.md" -- report tables/against.yaml -o all.md -o ./all.md
"$bin" report tables/against.yaml --bootstrap-samples 200 --against "both seeds" --format csv >vs-both-200.csv 2>/dev/null
mkdir -p several
"$bin" report tables/against.yaml --bootstrap-samples 200 -o several/all.md -o several/all.csv \
  --also-against "vs-both=both seeds" 2>/dev/null
check "--also-against: the table's comparison as before" cmp -s several/all.md against.md
check "  ... and the other reference beside it, as a report of that comparison alone" \
  cmp -s several/vs-both.csv vs-both-200.csv
check "  ... in each --output's format" grep -q '^### Against both seeds$' several/vs-both.md
expect_error "--also-against without STEM=" "--also-against both seeds: expected STEM=LABEL" -- \
  report tables/against.yaml -o x.md --also-against "both seeds"
expect_error "--also-against onto an --output" "--also-against all=seed 2: would write over --output several/all.md" -- \
  report tables/against.yaml -o several/all.md --also-against "all=seed 2"
expect_error "--also-against without --output" "--also-against writes each --output again" -- \
  report tables/against.yaml --also-against "x=seed 2"
rm -f several/vs-x.md
expect_error "--also-against an unknown row writes nothing" 'against: no row "seed 9"' -- \
  report tables/against.yaml -o several/new.md --also-against "vs-x=seed 9"
check "  ... not even the table's own output" test ! -e several/new.md -a ! -e several/vs-x.md
expect_error "an unknown reference row" 'against: no row "seed 3" in tables/against.yaml (did you mean "seed 1"?)' -- \
  report tables/against.yaml --against "seed 3"
expect_error "a test row as reference" 'row "test" of tables/against.yaml cannot be the reference: its split is test' -- \
  report tables/against.yaml --against test

# --- a folder's runs without a table file: a row per run group over its seeds
mkdir -p adhoc
for seed in 1 2; do
  cp -r runs/quick/quick-seed$seed adhoc/a-seed$seed
  cp -r runs/quick/quick-seed$seed adhoc/b-seed$seed
done
status=0
"$bin" report --runs adhoc --against a --bootstrap-samples 200 >adhoc.md 2>err || status=$?
check "report --runs DIR without a table succeeds (exit $status: $(tail -1 err))" test "$status" -eq 0
check "  ... a row per run group, over its 2 seeds, mean ± std" grep -Eq '^\| a \| 2 \| [0-9.]+ ± [0-9.]+ \|' adhoc.md
check "  ... and the other group" grep -Eq '^\| b \| 2 \| [0-9.]+ ± [0-9.]+ \|' adhoc.md
check "  ... columns: overall, then the runs' tasks" grep -q '^| Model | n | Overall | sst | para | sts |$' adhoc.md
check "  ... a against itself: the reference" grep -q '^| a | reference | reference |' adhoc.md
check "  ... b against a, with its interval (the same runs: 0)" grep -Eq '^\| b \| \+0\.000 \[\+0\.000, \+0\.000\] ~ \|' adhoc.md
"$bin" report --runs adhoc --format csv --output adhoc.csv 2>/dev/null
check "  ... csv: a header and a line per group" test "$(wc -l <adhoc.csv)" -eq 3
expect_error "report --runs: an unknown --against row" 'against: no row "c" in adhoc (did you mean "a"?)' -- \
  report --runs adhoc --against c
expect_error "report --runs: a folder without runs" "--runs sweeps holds no run folders" -- report --runs sweeps
expect_error "report without a table or --runs" "report needs TABLE.yaml, or --runs DIR" -- report

# --- a Slurm array for what is left
rm -rf runs/quick/quick-seed2
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml --emit slurm >out 2>err
check "slurm: the script's path is printed" grep -q '^runs/quick/quick.sbatch$' out
check "slurm: one array task, the missing run" grep -q '^#SBATCH --array=0-0$' runs/quick/quick.sbatch
check "slurm: valid bash" bash -n runs/quick/quick.sbatch
check "slurm: nothing trained" test ! -e runs/quick/quick-seed2
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml --emit slurm --nodes 2 --gpus-per-run 4 >out 2>err
check "slurm --nodes 2 --gpus-per-run 4: 2 ranks and 2 GPUs on each node" \
  grep -q '^#SBATCH --ntasks-per-node=2$' runs/quick/quick.sbatch
check "  ... one srun of 4 tasks per run" grep -q '^launch=(srun --nodes=2 --ntasks=4 ' runs/quick/quick.sbatch
check "  ... valid bash" bash -n runs/quick/quick.sbatch
expect_error "--gpus-per-run must spread evenly over --nodes" "cannot be spread evenly over --nodes 3" -- \
  sweep sweeps/quick.yaml --emit slurm --nodes 3 --gpus-per-run 4
expect_error "--nodes shapes Slurm scripts only" "use them with --emit slurm" -- sweep sweeps/quick.yaml --nodes 2
"$bin" report tables/quick.yaml >report.md 2>/dev/null
check "md: a missing run is marked" grep -q '^- quick: quick-seed2 missing' report.md
status=0
"$bin" report tables/against.yaml --against "seed 2" >against.md 2>err || status=$?
check "a reference row without finished runs still reports" test "$status" -eq 0
check "  ... its runs listed as missing" grep -q '^- seed 2: quick-seed2 missing' against.md
check "  ... the other rows not compared, and why" grep -q '^| seed 1 | the reference has no finished run |' against.md
"$bin" report tables/against.yaml --against "" >against.md 2>err
check "--against \"\" turns the table's comparison off" bash -c "! grep -q '^### Against' against.md"

# --- every run data-parallel on 2 local ranks
status=0
"$bin" sweep sweeps/quick.yaml --overlay smoke.yaml --out runs/dp --nproc 2 >out 2>err || status=$?
check "sweep --nproc 2 succeeds" test "$status" -eq 0
check "  ... each run trained by 2 ranks" test "$(grep -l '"ranks": 2' runs/dp/quick-seed*/summary.json | wc -l)" -eq 2
expect_error "--nproc is for this machine, not Slurm scripts" "in a Slurm script use --gpus-per-run" -- \
  sweep sweeps/quick.yaml --emit slurm --nproc 2

# --- errors: one line, exit code 2, before any run starts
cat >sweeps/bad.yaml <<'YAML'
experiments: [../experiments/tiny/quick.yaml]
grid:
  train.lrr: [1, 2]
YAML
expect_error "a bad key in the grid names the sweep file's line" "sweeps/bad.yaml:3: train.lrr: unknown key" -- \
  sweep sweeps/bad.yaml --out runs/bad
check "nothing ran" test ! -e runs/bad
printf 'experiments: [../experiments/tiny/quick.yaml]\nseeds: [1, 2]\ngird: {}\n' >sweeps/typo.yaml
expect_error "an unknown sweep key" 'sweeps/typo.yaml:3: gird: unknown key (did you mean "grid"?)' -- sweep sweeps/typo.yaml
printf 'experiments: [../experiments/tiny/absent.yaml]\n' >sweeps/absent.yaml
expect_error "a missing experiment" "sweeps/absent.yaml:1: experiments\[0\]: .*absent.yaml does not exist" -- \
  sweep sweeps/absent.yaml
sed "s|$data/sts-dev.csv|$dir/nowhere.csv|" experiments/tiny/quick.yaml >experiments/tiny/nodata.yaml
printf 'experiments: [../experiments/tiny/nodata.yaml]\n' >sweeps/nodata.yaml
expect_error "a missing data file, before any run starts" "run nodata: tasks.sts.dev: $dir/nowhere.csv does not exist" -- \
  sweep sweeps/nodata.yaml --out runs/nodata
check "nothing ran" test ! -e runs/nodata
# A refusal that needs only the config is the loader's: --dry-run sees it.
printf 'experiments: [../experiments/tiny/quick.yaml]\ngrid:\n  train.grad_accumulation: [1, 2]\n' >sweeps/pcgrad.yaml
expect_error "PCGrad with gradient accumulation, seen by --dry-run" \
  "train.pcgrad.enabled: train.pcgrad needs train.grad_accumulation 1 (got 2)" -- \
  sweep sweeps/pcgrad.yaml --dry-run train.pcgrad.enabled=true train.sampler.kind=mixed
sed 's/run: quick, split/run: quik, split/' tables/quick.yaml >tables/typo.yaml
expect_error "an unknown run in a table" 'tables/typo.yaml:6: rows\[1\].run: no run "quik" in sweep .* (did you mean "quick"?)' -- \
  report tables/typo.yaml
expect_error "an unknown format" "format" -- report tables/quick.yaml --format html

finish "sweep and report"
