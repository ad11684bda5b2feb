// How a sweep names what it does with a run, and the train commands it uses.
#include "sweep/sweep_plan.h"

#include <fstream>
#include <string>

#include "support/temp_dir.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using mtbert::RunAction;

namespace {

mtbert::SweepRun sample_run() {
  mtbert::SweepRun run;
  run.name = "smart-lr2e-05-seed1";
  run.group = "smart-lr2e-05";
  run.experiment = "experiments/final/smart.yaml";
  run.folder = "runs/t/smart-lr2e-05-seed1";
  run.overrides = {{"train.epochs=1"}, {"train.lr=2e-5"}, {"seed=1"}, {"name=smart-lr2e-05-seed1"}};
  return run;
}

}  // namespace

TEST_CASE("a sweep's listing names each action", "[sweep_plan]") {
  CHECK(std::string(mtbert::sweep_action_name(RunAction::wait)) == "leave (running)");
  CHECK(std::string(mtbert::sweep_action_name(RunAction::keep)) == "leave (no last)");
  CHECK(std::string(mtbert::sweep_action_name(RunAction::restart)) == "restart");
}

TEST_CASE("train command lines: a new run with overlays and overrides, or a resume", "[sweep_plan]") {
  const auto run = sample_run();
  CHECK(mtbert::start_arguments(run, {"experiments/smoke.yaml", "more.yaml"}) ==
        std::vector<std::string>{"train", "experiments/final/smart.yaml", "--overlay", "experiments/smoke.yaml",
                                 "--overlay", "more.yaml", "train.epochs=1", "train.lr=2e-5", "seed=1",
                                 "name=smart-lr2e-05-seed1", "--out", "runs/t/smart-lr2e-05-seed1"});
  CHECK(mtbert::resume_arguments(run) == std::vector<std::string>{"train", "--resume", "runs/t/smart-lr2e-05-seed1"});
}

TEST_CASE("a changed config is reported with the key path of the first difference", "[sweep_plan]") {
  mtbert::test::TempDir dir;
  const std::string trained = "# comment\nname: \"a\"\ntasks:\n  sst:\n    dropout: 0.3\n  sts:\n    dropout: 0.1\n";
  fs::create_directories(dir / "run");
  std::ofstream(dir / "run" / "config.resolved.yaml") << trained;
  CHECK_FALSE(mtbert::resolved_config_change(dir / "run", trained).has_value());
  CHECK_FALSE(mtbert::resolved_config_change(dir / "absent", trained).has_value());
  const std::string now = "# comment\nname: \"a\"\ntasks:\n  sst:\n    dropout: 0.3\n  sts:\n    dropout: 0.2\n";
  CHECK(mtbert::resolved_config_change(dir / "run", now) ==
        "tasks.sts.dropout: the run has 0.1, the sweep now gives 0.2");
  CHECK(mtbert::resolved_config_change(dir / "run", trained + "tags: []\n") ==
        "tags: the run has nothing, the sweep now gives []");
}
