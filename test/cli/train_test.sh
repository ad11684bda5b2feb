#!/usr/bin/env bash
# `mtbert train / eval / predict` end to end on the committed quickstart data
# with a tiny random encoder: a run completes and prints its table; bad
# config keys, corrupt rows and missing files are one line, exit code 2, and
# leave no run folder behind; SIGINT saves a checkpoint (exit 130) and
# --resume finishes the run; eval and predict read the run folder.
set -euo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
# The committed quickstart samples, not the shared data sets CTest may name.
unset MTBERT_DATA
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"

cd "$src"
tiny=(model.config.hidden_size=32 model.config.num_hidden_layers=1 model.config.num_attention_heads=2
      model.config.intermediate_size=64 tasks.sst.limit_train=200 tasks.para.limit_train=200
      tasks.sts.limit_train=200 tasks.sst.limit_dev=100 tasks.para.limit_dev=100 tasks.sts.limit_dev=100
      train.epochs=2 threads=1)

"$bin" train experiments/quickstart.yaml "${tiny[@]}" --out "$dir/run" --no-progress >"$dir/out" 2>"$dir/log"
check "a run prints its dev table" grep -q "^overall" "$dir/out"
check "summary: finished" grep -q '"status": "finished"' "$dir/run/summary.json"
check "leaderboard predictions" test -s "$dir/run/predictions/sst-test-output.csv"
# A folder name that is not UTF-8 (Latin-1) is a folder like any other; the
# JSON files record its byte as U+FFFD.
latin1="$dir/caf"$'\xe9'
"$bin" train experiments/quickstart.yaml "${tiny[@]}" train.max_steps=1 --out "$latin1" --no-progress >/dev/null \
  2>"$dir/latin1.log" && status=0 || status=$?
check "a run folder with a Latin-1 name trains (exit $status)" grep -q '"status": "finished"' "$latin1/summary.json"

"$bin" eval "$dir/run" --split dev >"$dir/eval" 2>/dev/null
check "eval reproduces the best dev score" \
  bash -c "[[ \"\$(grep '^overall' '$dir/eval' | awk '{print \$2}')\" == \"\$(grep '^overall' '$dir/out' | awk '{print \$2}')\" ]]"
(cd / && "$bin" eval "$dir/run" --split dev >"$dir/eval-elsewhere" 2>"$dir/eval-elsewhere.log") ||
  fail "eval from another folder: $(tail -1 "$dir/eval-elsewhere.log")"
check "eval from another folder reads the run's data (its paths are relative to where the run started)" \
  cmp -s "$dir/eval" "$dir/eval-elsewhere"
cp experiments/data/quickstart/sts-dev.csv "$dir/sts-dev-copy.csv"
(cd "$dir" && "$bin" eval "$dir/run" --split dev --data sts=sts-dev-copy.csv >"$dir/eval-data" 2>/dev/null)
check "  ... and --data is relative to the current folder" \
  bash -c "[[ \"\$(grep '^sts' '$dir/eval-data')\" == \"\$(grep '^sts' '$dir/eval')\" ]]"
expect_error_after_logs "eval --data without TASK= is one line" '--data "sts-dev-copy.csv": expected TASK=PATH' -- \
  eval "$dir/run" --split dev --data sts-dev-copy.csv
# The output rule: eval writes neither inside the folders it reads nor over
# its data (a data file named as the prediction file would be).
expect_error_after_logs "eval --predictions inside the run's checkpoints is refused" \
  "--predictions $dir/run/checkpoints/best would write inside $dir/run/checkpoints, which this command reads" -- \
  eval "$dir/run" --split dev --predictions "$dir/run/checkpoints/best"
mkdir -p "$dir/preds"
cp experiments/data/quickstart/sts-dev.csv "$dir/preds/sts-dev-output.csv"
expect_error_after_logs "eval --predictions over a data file it reads is refused" \
  "--predictions $dir/preds/sts-dev-output.csv would overwrite $dir/preds/sts-dev-output.csv, which this command reads" -- \
  eval "$dir/run" --split dev --data sts="$dir/preds/sts-dev-output.csv" --predictions "$dir/preds"
check "  ... leaving the data file as it was" cmp -s experiments/data/quickstart/sts-dev.csv "$dir/preds/sts-dev-output.csv"
check "predict sst prints a class, its name and its probability" \
  bash -c "'$bin' predict '$dir/run' --task sst --text 'a dull film' 2>/dev/null | grep -Pq '^([0-4])\t(very negative|negative|neutral|positive|very positive)\t\(p = [0-9.]+\)$'"
check "  ... the name of its index" bash -c "'$bin' predict '$dir/run' --task sst --text 'a dull film' 2>/dev/null |
  grep -Pq '^(0\tvery negative|1\tnegative|2\tneutral|3\tpositive|4\tvery positive)\t'"
check "predict para prints a label, its name and its probability" \
  bash -c "'$bin' predict '$dir/run' --task para --text 'a man sings' 'a man is singing' 2>/dev/null | grep -Pq '^(0\tnot duplicate|1\tduplicate)\t\(p\(is_duplicate = 1\) = [0-9.]+\)$'"
check "predict sts prints a score" \
  bash -c "'$bin' predict '$dir/run' --task sts --text 'a man sings' 'a man is singing' 2>/dev/null | grep -Eq '^[0-9.]+$'"

printf '\tid\tsentence\tsentiment\n0\tabc\tfine text\t1\n1\tdef\tanother\tseven\n' >"$dir/bad.csv"
expect_error_after_logs "an unknown key, with a suggestion" 'train.batch_sise: unknown key (did you mean "batch_size"?)' -- \
  train experiments/quickstart.yaml train.batch_sise=4 --out "$dir/r1"
expect_error_after_logs "a corrupt data row names file and line" "$dir/bad.csv:3" -- \
  train experiments/quickstart.yaml "${tiny[@]}" tasks.sst.train="$dir/bad.csv" train.on_bad_row=error --out "$dir/r2"
check "  ... and leaves no run folder" test ! -e "$dir/r2"
expect_error_after_logs "a missing data file" "$dir/missing.csv" -- \
  train experiments/quickstart.yaml "${tiny[@]}" tasks.sts.dev="$dir/missing.csv" --out "$dir/r3"
check "  ... and leaves no run folder" test ! -e "$dir/r3"
expect_error_after_logs "a missing pretrained folder says so, and how to get one" \
  "model folder $dir/absent does not exist: convert bert-base-uncased into it" -- \
  train experiments/quickstart.yaml "${tiny[@]}" model.pretrained="$dir/absent" --out "$dir/r4"
check "  ... and leaves no run folder" test ! -e "$dir/r4"

# A pretrained encoder keeps its tokenizer and its shape (issue 35): the
# quickstart's own tokenizer (a SentencePiece vocabulary trained from the
# tasks) and encoder shape cannot be paired with it.
fixtures="${MTBERT_FIXTURES:?MTBERT_FIXTURES must name the test fixtures}"
encoder="$fixtures/models/bert-legacy"
pretrained=(tasks.sst.limit_train=100 tasks.para.limit_train=100 tasks.sts.limit_train=100 tasks.sst.limit_dev=50
            tasks.para.limit_dev=50 tasks.sts.limit_dev=50 train.epochs=1 threads=1 model.pretrained="$encoder")
expect_error_after_logs "a tokenizer trained afresh is refused for a pretrained encoder" \
  "model.tokenizer trains a new SentencePiece vocabulary, but the pretrained encoder $encoder learned its embeddings for its own: use the encoder's own tokenizer with model.tokenizer.kind=auto" -- \
  train experiments/quickstart.yaml "${pretrained[@]}" model.config=null --out "$dir/r5"
check "  ... and leaves no run folder" test ! -e "$dir/r5"
head -100 "$encoder/vocab.txt" >"$dir/vocab-100.txt"
expect_error_after_logs "another WordPiece vocabulary is refused, naming the difference" \
  "is not the tokenizer of the pretrained encoder $encoder: it has 100 pieces, the encoder's 210" -- \
  train experiments/quickstart.yaml "${pretrained[@]}" model.config=null model.tokenizer.kind=wordpiece \
  model.tokenizer.vocab="$dir/vocab-100.txt" --out "$dir/r6"
expect_error_after_logs "the same vocabulary without lowercasing is refused" \
  "it does not lowercase, the encoder's tokenizer does" -- \
  train experiments/quickstart.yaml "${pretrained[@]}" model.config=null model.tokenizer.kind=wordpiece \
  model.tokenizer.vocab="$encoder/vocab.txt" model.tokenizer.lower_case=false --out "$dir/r6"
expect_error_after_logs "an experiment's encoder shape is refused for a pretrained encoder" \
  "model.config.hidden_size is 128, but the pretrained encoder $encoder has 32: a pretrained encoder's shape is its checkpoint's" -- \
  train experiments/quickstart.yaml "${pretrained[@]}" model.tokenizer=null --out "$dir/r6"
check "  ... and leaves no run folder" test ! -e "$dir/r6"
"$bin" train experiments/quickstart.yaml "${pretrained[@]}" model.config=null model.config.hidden_dropout_prob=0.2 \
  model.tokenizer.kind=wordpiece model.tokenizer.vocab="$encoder/vocab.txt" --out "$dir/r7" --no-progress \
  --threads 2 >/dev/null 2>"$dir/r7.log" && ok "the encoder's own vocabulary, named, and a dropout change train" ||
  fail "the encoder's own vocabulary, named, and a dropout change train: $(tail -1 "$dir/r7.log")"
check "--threads is what config.resolved.yaml records (the config said 1)" grep -q "^threads: 2" "$dir/r7/config.resolved.yaml"
expect_error_after_logs "a finished run is not overwritten" "already holds a finished run" -- \
  train experiments/quickstart.yaml --out "$dir/run"
# Without --out, running an experiment again makes a new run folder.
for round in 1 2; do
  "$bin" train experiments/quickstart.yaml "${tiny[@]}" train.epochs=1 output_dir="$dir/again" --no-progress \
    >/dev/null 2>"$dir/again.log" || fail "an experiment runs again without --out: $(tail -1 "$dir/again.log")"
done
check "  ... into <output_dir>-2, and says so" grep -q "$dir/again holds a finished run: this one goes to $dir/again-2" "$dir/again.log"
check "  ... which finished" grep -q '"status": "finished"' "$dir/again-2/summary.json"
# A run killed after making its folders and before writing its config (the
# fault test's SIGKILL rounds met this window) starts again there; a folder
# holding anything else is refused.
mkdir -p "$dir/skeleton/checkpoints" "$dir/skeleton/predictions"
"$bin" train experiments/quickstart.yaml "${tiny[@]}" --out "$dir/skeleton" --no-progress >/dev/null 2>"$dir/skeleton.log" &&
  ok "a run killed before its config starts again in its folder" ||
  fail "a run killed before its config starts again in its folder: $(tail -1 "$dir/skeleton.log")"
check "  ... and finishes" grep -q '"status": "finished"' "$dir/skeleton/summary.json"
mkdir -p "$dir/foreign/predictions" && echo x >"$dir/foreign/predictions/mine.csv"
expect_error_after_logs "a folder with other files is not taken over" "exists and is not a run folder" -- \
  train experiments/quickstart.yaml "${tiny[@]}" --out "$dir/foreign"

# SIGINT: a checkpoint, exit 130, then --resume finishes the run.
"$bin" train experiments/quickstart.yaml "${tiny[@]}" train.epochs=40 --out "$dir/int" --no-progress \
  >/dev/null 2>"$dir/int.log" &
pid=$!
for _ in $(seq 1 600); do [[ -d "$dir/int/checkpoints/last" ]] && break; sleep 0.1; done
kill -INT "$pid"
status=0; wait "$pid" || status=$?
check "SIGINT ends with exit 130 ($status)" test "$status" -eq 130
check "  ... status interrupted" grep -q '"status": "interrupted"' "$dir/int/summary.json"
expect_error "pretrain --resume on a fine-tuning run names train --resume" \
  "is a fine-tuning run: resume it with mtbert train --resume $dir/int" -- pretrain --resume "$dir/int"
"$bin" train --resume "$dir/int" train.epochs=40 >/dev/null 2>&1 && fail "--resume refuses overrides" || ok "--resume refuses overrides"
(cd / && "$bin" train --resume "$dir/int" --no-progress >/dev/null 2>"$dir/resume.log")
check "--resume finishes the run, from another folder (the data paths are the run's)" \
  grep -q '"status": "finished"' "$dir/int/summary.json"
# A run whose checkpoints/last was removed by hand (it is the larger one) keeps
# its best checkpoint: neither resumed nor cleared for a new run.
cp -a "$dir/int" "$dir/nolast"
rm -r "$dir/nolast/checkpoints/last"
sed -i 's/"status": "finished"/"status": "interrupted"/' "$dir/nolast/summary.json"
expect_error "--resume of a run without checkpoints/last says why" \
  "has checkpoints/best but no checkpoints/last, so it cannot be resumed" -- train --resume "$dir/nolast"
expect_error_after_logs "  ... and a new run there is refused" "holds a run with checkpoints/best but no checkpoints/last" \
  -- train experiments/quickstart.yaml "${tiny[@]}" --out "$dir/nolast"
check "  ... its best checkpoint kept" cmp -s "$dir/int/checkpoints/best/state.json" "$dir/nolast/checkpoints/best/state.json"

finish "train, eval and predict"
