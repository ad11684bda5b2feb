# Sourced by the scripts' end-to-end tests (after checks.sh, in the source
# folder): a data folder shaped like ../shared/data, made of the committed
# quickstart tasks, the fixtures' vocabulary as bert-base-uncased's, and a few
# lines as the Brown Corpus. Sets $data; needs $dir and $fixtures.
data="$dir/data"
mkdir -p "$data/corpus" "$data/bert-base-uncased"
cp experiments/data/quickstart/*.csv "$data/"
cp "$fixtures/models/bert-legacy/vocab.txt" "$data/bert-base-uncased/vocab.txt"
for i in $(seq 1 30); do
  echo "the movie was very good and the music is really fun"
  echo "this film is not funny but the actors are good"
  echo
done >"$data/corpus/brown.txt"
