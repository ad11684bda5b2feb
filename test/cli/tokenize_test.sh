#!/usr/bin/env bash
# `mtbert tokenize` end to end: output formats, pairs, line endings, and the
# one-line errors (exit code 2) for user mistakes. Uses a tiny vocabulary of
# its own, so it needs no shared data.
set -euo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"

# ids:                      0     1     2     3      4     5      6    7  8
printf '%s\n' '[PAD]' '[UNK]' '[CLS]' '[SEP]' '[MASK]' hello world ! a > "$dir/vocab.txt"

expect() {  # expect NAME WANT GOT
  if [[ "$2" == "$3" ]]; then ok "$1"; else fail "$1"; echo "  want: $2"; echo "  got:  $3"; fi
}

# tokenize_error NAME STDERR_PATTERN -- ARGS...: `mtbert tokenize ARGS` on $input fails with one line.
tokenize_error() { expect_error "$1" "$2" -- tokenize "${@:4}" < <(printf '%b' "$input"); }

tok() { "$bin" tokenize --vocab "$dir/vocab.txt" "$@"; }

expect "one line of ids per input line" $'2 5 6 7 3\n2 3\n2 8 1 3' \
  "$(printf 'Hello world!\n\na zzz\n' | tok)"
expect "CRLF line ends and a last line without newline" $'2 5 3\n2 6 3' "$(printf 'hello\r\nworld' | tok)"
expect "special tokens in the text" "2 2 5 4 3 3" "$(echo '[CLS]hello [MASK][SEP]' | tok)"
expect "truncation" "2 5 6 3" "$(echo 'hello world world' | tok --max-length 4)"
expect "pairs with longest_first truncation" "2 5 6 3 8 3" \
  "$(printf 'hello world world\ta a\n' | tok --pairs --max-length 6)"
expect "json format" \
  '{"tokens":["[CLS]","hello","[SEP]","world","[SEP]"],"ids":[2,5,3,6,3],"token_type_ids":[0,0,0,1,1],"attention_mask":[1,1,1,1,1]}' \
  "$(printf 'hello\tworld\n' | tok --pairs --format json)"
expect "cased vocabulary" "2 1 5 3" "$(echo 'Hello hello' | tok --no-lower-case)"
expect "empty input gives no output" "" "$(printf '' | tok)"
mkdir "$dir/model" && cp "$dir/vocab.txt" "$dir/model/"
echo '{"do_lower_case": false}' >"$dir/model/tokenizer_config.json"
expect "--model reads tokenizer_config.json" "2 1 3" "$(echo 'Hello' | "$bin" tokenize --model "$dir/model")"

input='hello\tworld\nno tab here\n'
tokenize_error "a pair line without a tab names its line" "stdin:2:" -- --vocab "$dir/vocab.txt" --pairs
input='a\tb\tc\n'
tokenize_error "a pair line with two tabs" "stdin:1:" -- --vocab "$dir/vocab.txt" --pairs
input='fine\nbroken \xff byte\n'
tokenize_error "invalid UTF-8 names its line" "stdin:2: invalid UTF-8 at byte 8 of the line" -- --vocab "$dir/vocab.txt"
input='hello\n'
tokenize_error "max length below the special tokens" "max_length" -- --vocab "$dir/vocab.txt" --pairs --max-length 2
tokenize_error "negative max length" "max_length" -- --vocab "$dir/vocab.txt" --max-length -1
tokenize_error "no tokenizer given" "exactly one of" --
tokenize_error "two tokenizers given" "excludes" -- --vocab "$dir/vocab.txt" --model "$dir/model"
tokenize_error "a missing vocabulary" "missing.txt" -- --vocab "$dir/missing.txt"
mkdir "$dir/empty"
tokenize_error "a folder without tokenizer" "$dir/empty" -- --model "$dir/empty"
tokenize_error "a missing SentencePiece model" "missing.model" -- --spm "$dir/missing.model"
tokenize_error "--no-lower-case only with --vocab" "requires" -- --spm "$dir/missing.model" --no-lower-case
tokenize_error "unknown format" "format" -- --vocab "$dir/vocab.txt" --format xml

finish "tokenize"
