// ModelConfig's DeBERTa keys: HuggingFace's names and defaults (deberta-v2),
// the "p2c|c2p" string form, round trips through config.json, and the
// one-line errors for values no encoder can be built from.
#include <nlohmann/json.hpp>

#include "models/model_config.h"
#include "support/test_support.h"
#include "support/user_error_of.h"

using namespace mtbert;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("DeBERTa config keys: HF names, defaults and validation", "[models][deberta]") {
  auto parse = [](const nlohmann::json& j) { return model_config_from_json(j, "config.json"); };
  SECTION("deberta-v3-base's config.json") {
    auto c = parse({{"model_type", "deberta-v2"},   {"hidden_size", 768},          {"num_hidden_layers", 12},
                    {"num_attention_heads", 12},    {"intermediate_size", 3072},   {"vocab_size", 128100},
                    {"max_position_embeddings", 512}, {"relative_attention", true}, {"position_buckets", 256},
                    {"norm_rel_ebd", "layer_norm"}, {"share_att_key", true},       {"pos_att_type", "p2c|c2p"},
                    {"layer_norm_eps", 1e-7},       {"max_relative_positions", -1}, {"position_biased_input", false},
                    {"type_vocab_size", 0}});
    CHECK(c.pos_att_type == std::vector<std::string>{"p2c", "c2p"});
    CHECK(c.has_c2p());
    CHECK(c.relative_span() == 256);
    CHECK(c.effective_max_relative_positions() == 512);
    CHECK(c.layer_norm_relative_embeddings());
    CHECK(!c.has_position_embeddings());
    // Written back and read again: the same.
    auto again = parse(model_config_to_json(c));
    CHECK(again.pos_att_type == c.pos_att_type);
    CHECK(again.position_buckets == 256);
    CHECK(again.position_biased_input == false);
  }
  SECTION("deberta-v2 defaults differ from BERT's") {
    auto c = parse({{"model_type", "deberta-v2"}, {"hidden_size", 32}, {"num_attention_heads", 4}});
    CHECK(c.type_vocab_size == 0);
    CHECK(c.layer_norm_eps == 1e-7);
    CHECK(c.relative_span() == 512);
    auto bert = parse({{"model_type", "bert"}});
    CHECK(bert.type_vocab_size == 2);
    CHECK(!bert.disentangled());
    CHECK(!model_config_to_json(bert).contains("relative_attention"));
  }
  SECTION("bad values") {
    CHECK_THROWS_WITH(parse({{"relative_attention", 1}}), Catch::Matchers::ContainsSubstring("true or false"));
    CHECK_THROWS_WITH(parse({{"pos_att_type", 3}}), Catch::Matchers::ContainsSubstring("pos_att_type"));
    CHECK_THROWS_WITH(parse({{"norm_rel_ebd", "batch_norm"}}), Catch::Matchers::ContainsSubstring("norm_rel_ebd"));
    CHECK_THROWS_WITH(parse({{"position_buckets", 256}, {"max_relative_positions", 100}}),
                      Catch::Matchers::ContainsSubstring("position_buckets"));
    CHECK_THROWS_WITH(parse({{"model_type", "deberta-v2"}, {"conv_kernel_size", 3}}),
                      Catch::Matchers::ContainsSubstring("conv_kernel_size"));
    CHECK_THROWS_WITH(parse({{"emd_layers", 2}, {"embedding_size", 128}}), Catch::Matchers::ContainsSubstring("embedding_size"));
    CHECK_THROWS_WITH(parse({{"model_type", "roberta"}}), Catch::Matchers::ContainsSubstring("model_type"));
  }
}

TEST_CASE("model sizes are bounded before anything is allocated, bert-base has HF's parameter count",
          "[models][limits]") {
  ModelConfig bert_base;  // BERT's defaults are bert-base-uncased's shape
  bert_base.vocab_size = 30522;
  bert_base.hidden_size = 768;
  bert_base.num_hidden_layers = 12;
  bert_base.num_attention_heads = 12;
  bert_base.intermediate_size = 3072;
  bert_base.max_position_embeddings = 512;
  bert_base.type_vocab_size = 2;
  CHECK(bert_base.parameter_count() == 109'482'240);  // BertModel(bert-base-uncased).num_parameters()
  CHECK_NOTHROW(bert_base.validate("bert-base"));

  auto error_of = [&](auto change) {
    ModelConfig c = bert_base;
    change(c);
    return mtbert::test::user_error_of([&] { c.validate("x.yaml:3: model.config"); });
  };
  CHECK_THAT(error_of([](ModelConfig& c) { c.vocab_size = int64_t{1} << 40; }),
             ContainsSubstring("x.yaml:3: model.config: vocab_size 1099511627776 is above the limit of 4194304"));
  CHECK_THAT(error_of([](ModelConfig& c) { c.num_hidden_layers = 100'000'000; }),
             ContainsSubstring("num_hidden_layers 100000000 is above the limit"));
  CHECK_THAT(error_of([](ModelConfig& c) {
               c.hidden_size = 65536;
               c.num_attention_heads = 64;
               c.intermediate_size = 262144;
               c.num_hidden_layers = 1000;
             }),
             ContainsSubstring("parameters is above the limit of"));
}
