#include <cstdlib>

#include "config/experiment_config.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

namespace {

// Writes the resolved YAML of `c` and loads it back.
mtbert::ExperimentConfig reload(const mtbert::test::TempDir& dir, const mtbert::ExperimentConfig& c) {
  return mtbert::load_experiment(dir.write("config.resolved.yaml", mtbert::resolved_yaml(c)));
}

// Every field, compared one by one (source excepted: it names the file read).
void check_same(const mtbert::ExperimentConfig& a, const mtbert::ExperimentConfig& b) {
  CHECK(a.name == b.name);
  CHECK(a.seed == b.seed);
  CHECK(a.threads == b.threads);
  CHECK(a.device == b.device);
  CHECK(a.precision == b.precision);
  CHECK(a.output_dir == b.output_dir);
  CHECK(a.model.pretrained == b.model.pretrained);
  CHECK(a.model.config == b.model.config);
  CHECK(a.model.freeze_encoder == b.model.freeze_encoder);
  CHECK(a.model.pals.kind == b.model.pals.kind);
  CHECK(a.model.pals.rank == b.model.pals.rank);
  CHECK(a.model.pals.heads == b.model.pals.heads);
  const auto &ta = a.model.tokenizer, &tb = b.model.tokenizer;
  CHECK(ta.kind == tb.kind);
  CHECK(ta.vocab == tb.vocab);
  CHECK(ta.lower_case == tb.lower_case);
  CHECK(ta.model == tb.model);
  CHECK(ta.train_from == tb.train_from);
  CHECK(ta.vocab_size == tb.vocab_size);
  REQUIRE(a.tasks.size() == b.tasks.size());
  for (size_t i = 0; i < a.tasks.size(); ++i) {
    const auto &x = a.tasks[i], &y = b.tasks[i];
    INFO("task " << x.name);
    CHECK(x.name == y.name);
    CHECK(x.type == y.type);
    CHECK(x.train == y.train);
    CHECK(x.dev == y.dev);
    CHECK(x.test == y.test);
    CHECK(x.limit_train == y.limit_train);
    CHECK(x.limit_dev == y.limit_dev);
    CHECK(x.limit_test == y.limit_test);
    CHECK(x.subset == y.subset);
    CHECK(x.loss_weight == y.loss_weight);
    CHECK(x.pooling == y.pooling);
    CHECK(x.pair_mode == y.pair_mode);
    CHECK(x.combine == y.combine);
    CHECK(x.dropout == y.dropout);
    CHECK(x.max_length == y.max_length);
    CHECK(x.smart.enabled == y.smart.enabled);
    CHECK(x.smart.weight == y.smart.weight);
    CHECK(x.smart.steps == y.smart.steps);
    CHECK(x.smart.step_size == y.smart.step_size);
    CHECK(x.smart.epsilon == y.smart.epsilon);
    CHECK(x.smart.noise_std == y.smart.noise_std);
    CHECK(x.smart.bregman == y.smart.bregman);
    CHECK(x.smart.bregman_weight == y.smart.bregman_weight);
    CHECK(x.smart.momentum == y.smart.momentum);
    CHECK(x.smart.radius == y.smart.radius);
    CHECK(x.sift.enabled == y.sift.enabled);
    CHECK(x.sift.weight == y.sift.weight);
    CHECK(x.sift.step_size == y.sift.step_size);
    CHECK(x.sift.noise_std == y.sift.noise_std);
  }
  const auto &ra = a.train, &rb = b.train;
  CHECK(ra.epochs == rb.epochs);
  CHECK(ra.max_steps == rb.max_steps);
  CHECK(ra.batch_size == rb.batch_size);
  CHECK(ra.eval_batch_size == rb.eval_batch_size);
  CHECK(ra.lr == rb.lr);
  CHECK(ra.head_lr == rb.head_lr);
  CHECK(ra.weight_decay == rb.weight_decay);
  CHECK(ra.adam_beta1 == rb.adam_beta1);
  CHECK(ra.adam_beta2 == rb.adam_beta2);
  CHECK(ra.adam_eps == rb.adam_eps);
  CHECK(ra.grad_clip == rb.grad_clip);
  CHECK(ra.grad_accumulation == rb.grad_accumulation);
  CHECK(ra.schedule.kind == rb.schedule.kind);
  CHECK(ra.schedule.warmup_epochs == rb.schedule.warmup_epochs);
  CHECK(ra.schedule.warmup_steps == rb.schedule.warmup_steps);
  CHECK(ra.schedule.final_lr == rb.schedule.final_lr);
  CHECK(ra.sampler.kind == rb.sampler.kind);
  CHECK(ra.sampler.temperature == rb.sampler.temperature);
  CHECK(ra.sampler.anneal_min == rb.sampler.anneal_min);
  CHECK(ra.sampler.steps_per_epoch == rb.sampler.steps_per_epoch);
  CHECK(ra.pcgrad.enabled == rb.pcgrad.enabled);
  CHECK(ra.pcgrad.reduction == rb.pcgrad.reduction);
  CHECK(ra.bucket_by_length == rb.bucket_by_length);
  CHECK(ra.join_tasks == rb.join_tasks);
  CHECK(ra.eval_every_steps == rb.eval_every_steps);
  CHECK(ra.early_stopping_patience == rb.early_stopping_patience);
  CHECK(ra.on_bad_row == rb.on_bad_row);
  CHECK(a.distributed.backend == b.distributed.backend);
  CHECK(a.distributed.timeout_seconds == b.distributed.timeout_seconds);
  CHECK(a.distributed.bucket_mb == b.distributed.bucket_mb);
}

}  // namespace

TEST_CASE("base.yaml's resolved YAML loads back to the same config", "[resolved_yaml]") {
  ::setenv("MTBERT_DATA", "/data with spaces/$HOME", 1);
  const auto c = mtbert::load_experiment(mtbert::test::source_dir() / "experiments" / "base.yaml");
  ::unsetenv("MTBERT_DATA");
  const mtbert::test::TempDir dir;
  const auto back = reload(dir, c);
  check_same(c, back);
  CHECK(back.tasks[0].train == "/data with spaces/$HOME/ids-sst-train.csv");
  CHECK(mtbert::resolved_yaml(back) == mtbert::resolved_yaml(c));
}

TEST_CASE("every field and awkward values survive the round trip", "[resolved_yaml]") {
  mtbert::ExperimentConfig c;
  c.name = "odd name: #1";
  c.seed = 18446744073709551615ull;
  c.threads = 3;
  c.device = mtbert::DeviceChoice::automatic;
  c.precision = mtbert::Precision::bf16;
  c.output_dir = "";  // the default, runs/<name>, on reading
  c.model.pretrained = "";
  c.model.config = {{"hidden_dropout_prob", 0.30000000000000004},
                    {"num_hidden_layers", 2},
                    {"hidden_act", "gelu_new"},
                    {"relative_attention", false},
                    {"pos_att_type", {"c2p", "p2c"}}};
  c.model.freeze_encoder = false;
  c.model.pals = {mtbert::PalKind::top, 132, 6};
  c.model.tokenizer.kind = mtbert::TokenizerKind::sentencepiece;
  c.model.tokenizer.model = "spm $$.model";
  c.model.tokenizer.train_from = {"tasks", "null", "yes", "", " padded "};
  c.model.tokenizer.lower_case = false;
  c.model.tokenizer.vocab = "0123";
  c.model.tokenizer.vocab_size = 123;
  mtbert::TaskConfig t;
  t.name = "my-task_2";
  t.type = "sts";
  t.train = "${NOT_A_VAR} \"q\" \\ \n\t é.csv";
  t.dev = "~";
  t.test = "- dash";
  t.limit_train = 5;
  t.limit_dev = 6;
  t.limit_test = 7;
  t.subset = mtbert::Subset::random;
  t.loss_weight = 0.1 + 0.2;
  t.pooling = mtbert::Pooling::mean;
  t.pair_mode = mtbert::PairMode::siamese;
  t.combine = mtbert::PairCombine::cosine;
  t.dropout = 1e-300;
  t.max_length = 512;
  t.smart.enabled = true;
  t.smart.weight = 2.5;
  t.smart.steps = 3;
  t.smart.step_size = 1e-4;
  t.smart.epsilon = 1e-7;
  t.smart.noise_std = 2e-6;
  t.smart.radius = 0.01;
  t.smart.bregman = true;
  t.smart.bregman_weight = 0.5;
  t.smart.momentum = 0.995;
  t.sift = {true, 0.7, 2e-3, 3e-6};
  c.tasks.push_back(t);
  t.name = "sst";
  t.type = "sst";
  t.combine = mtbert::PairCombine::concat;
  c.tasks.push_back(t);
  auto& r = c.train;
  r.epochs = 0;
  r.max_steps = 1000;
  r.batch_size = 8;
  r.eval_batch_size = 9;
  r.lr = 3e-5;
  r.head_lr = 1e-3;
  r.weight_decay = 0.01;
  r.adam_beta1 = 0.8;
  r.adam_beta2 = 0.98;
  r.adam_eps = 1e-6;
  r.grad_clip = 0;
  r.grad_accumulation = 1;  // PCGrad (below) needs 1; 4 is checked with it off
  r.schedule = {mtbert::ScheduleKind::cosine, 0, 100, 1e-7};
  r.sampler = {mtbert::SamplerKind::mixed, 1.5, 0.3, 77};
  r.pcgrad = {true, mtbert::PcgradReduction::mean};
  r.bucket_by_length = false;
  r.join_tasks = false;
  r.eval_every_steps = 50;
  r.early_stopping_patience = 0;
  r.on_bad_row = mtbert::BadRowPolicy::skip;
  c.distributed = {mtbert::DistributedBackend::gloo, 17, 0.5};

  const mtbert::test::TempDir dir;
  const auto back = reload(dir, c);
  c.output_dir = "runs/odd name: #1";
  check_same(c, back);
  CHECK(mtbert::resolved_yaml(back) == mtbert::resolved_yaml(c));

  // The other value of the booleans PCGrad and freezing exclude together,
  // and the gradient accumulation PCGrad excludes.
  c.model.freeze_encoder = true;
  c.train.pcgrad.enabled = false;
  c.train.grad_accumulation = 4;
  check_same(c, reload(dir, c));
}

TEST_CASE("the resolved YAML names every key", "[resolved_yaml]") {
  mtbert::ExperimentConfig c;
  c.name = "n";
  c.output_dir = "runs/n";
  mtbert::TaskConfig t;
  t.name = "sst";
  t.type = "sst";
  t.train = "a";
  c.tasks.push_back(t);
  const auto text = mtbert::resolved_yaml(c);
  for (const char* key : {"\nseed: 11711\n", "\n  config: {}\n", "\n    train_from: []\n", "\n      radius: 1e-05\n",
                          "\n    anneal_min: 0.2\n", "\n  on_bad_row: \"error\"\n", "\n    final_lr: 0\n",
                          "\n  lr: 1e-05\n"}) {
    INFO(key);
    CHECK_THAT(text, ContainsSubstring(key));
  }
}
