#include "data/task_spec.h"

#include "core/user_error.h"
#include "support/test_support.h"

using mtbert::TaskMetric;

TEST_CASE("the built-in tasks of the CS224N default project", "[task_spec]") {
  CHECK(mtbert::builtin_task_names() == std::vector<std::string>{"sst", "para", "sts", "cfimdb"});

  const auto& sst = mtbert::builtin_task("sst");
  CHECK(sst.input == mtbert::TaskInput::single);
  CHECK(sst.target == mtbert::TaskTarget::classes);
  CHECK(sst.metric == TaskMetric::accuracy);
  CHECK(sst.num_classes == 5);
  CHECK(sst.label_min == 0.0);
  CHECK(sst.label_max == 4.0);
  CHECK(sst.text_columns == std::vector<std::string>{"sentence"});
  CHECK(sst.label_column == "sentiment");
  CHECK(sst.prediction_column == "Predicted_Sentiment");
  CHECK(sst.prediction_format == mtbert::PredictionFormat::integer);

  const auto& para = mtbert::builtin_task("para");
  CHECK(para.input == mtbert::TaskInput::pair);
  CHECK(para.target == mtbert::TaskTarget::binary);
  CHECK(para.metric == TaskMetric::accuracy);
  CHECK(para.num_classes == 2);
  CHECK(para.label_max == 1.0);
  CHECK(para.text_columns == std::vector<std::string>{"sentence1", "sentence2"});
  CHECK(para.label_column == "is_duplicate");
  CHECK(para.prediction_column == "Predicted_Is_Paraphrase");
  CHECK(para.prediction_format == mtbert::PredictionFormat::float32);

  const auto& sts = mtbert::builtin_task("sts");
  CHECK(sts.input == mtbert::TaskInput::pair);
  CHECK(sts.target == mtbert::TaskTarget::regression);
  CHECK(sts.metric == TaskMetric::pearson);
  CHECK(sts.num_classes == 0);
  CHECK(sts.label_min == 0.0);
  CHECK(sts.label_max == 5.0);
  CHECK(sts.label_column == "similarity");
  CHECK(sts.prediction_column == "Predicted_Similiarity");  // sic: the starter code's spelling
  CHECK(sts.prediction_format == mtbert::PredictionFormat::float32);

  const auto& cfimdb = mtbert::builtin_task("cfimdb");
  CHECK(cfimdb.input == mtbert::TaskInput::single);
  CHECK(cfimdb.target == mtbert::TaskTarget::binary);
  CHECK(cfimdb.num_classes == 2);
  CHECK(cfimdb.label_column == "sentiment");
  CHECK(cfimdb.prediction_column == "Predicted_Sentiment");
  CHECK(cfimdb.prediction_format == mtbert::PredictionFormat::integer);
}

TEST_CASE("every classification task names its labels, one per class", "[task_spec]") {
  using Names = std::vector<std::string>;
  CHECK(mtbert::builtin_task("sst").label_names ==
        Names{"very negative", "negative", "neutral", "positive", "very positive"});
  CHECK(mtbert::builtin_task("para").label_names == Names{"not duplicate", "duplicate"});
  CHECK(mtbert::builtin_task("cfimdb").label_names == Names{"negative", "positive"});
  CHECK(mtbert::builtin_task("sts").label_names.empty());  // a score
  for (const auto& name : mtbert::builtin_task_names()) {
    const auto& spec = mtbert::builtin_task(name);
    INFO(name);
    if (spec.target != mtbert::TaskTarget::regression)
      CHECK(static_cast<int64_t>(spec.label_names.size()) == spec.num_classes);
  }
}

TEST_CASE("an unknown task name lists the known ones", "[task_spec]") {
  CHECK_THROWS_AS(mtbert::builtin_task("quora"), mtbert::UserError);
  CHECK_THROWS_WITH(mtbert::builtin_task("quora"),
                    Catch::Matchers::ContainsSubstring("quora") && Catch::Matchers::ContainsSubstring("sst, para, sts, cfimdb"));
}

TEST_CASE("normalized metrics and the overall score", "[task_spec]") {
  CHECK(mtbert::normalized_metric(TaskMetric::accuracy, 0.52) == 0.52);
  CHECK(mtbert::normalized_metric(TaskMetric::pearson, 0.8) == Approx(0.9).epsilon(1e-15));
  CHECK(mtbert::normalized_metric(TaskMetric::pearson, -1.0) == 0.0);
  // (0.5 + 0.75 + (0.8 + 1) / 2) / 3 = (0.5 + 0.75 + 0.9) / 3 = 2.15 / 3
  const double score = mtbert::overall_score(
      {{TaskMetric::accuracy, 0.5}, {TaskMetric::accuracy, 0.75}, {TaskMetric::pearson, 0.8}});
  CHECK(score == Approx(2.15 / 3).epsilon(1e-15));
  CHECK(mtbert::overall_score({}) == 0.0);
}
