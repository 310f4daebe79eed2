// `edgellm plan --preset/--config --device`, the device profiles in
// devices/ and `edgellm probe -o json`: the JSON a plan prints, fits and
// does-not-fit, and one clear error (exit 1) for each kind of bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "run_cli.h"
#include "template/json.h"
#include "test_models.h"
#include "model/model.h"
#include "tools/device_plan.h"
#include "tools/device_profile.h"
#include "tools/plan_shape.h"

namespace edgellm {
namespace {

using test::run_command;

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = test::temp_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

tmpl::Json plan_json(std::vector<std::string> args) {
  args.insert(args.begin(), {EDGELLM_CLI, "plan"});
  args.insert(args.end(), {"-o", "json"});
  const test::RunResult r = run_command(args);
  EXPECT_TRUE(r.exited_with(0)) << r.describe();
  return tmpl::Json::parse(r.out, "plan -o json");
}

double num(const tmpl::Json& j, const char* key) {
  const tmpl::Json* v = j.find(key);
  EXPECT_TRUE(v && v->is_number()) << key;
  return v && v->is_number() ? v->as_number() : -1;
}

TEST(DeviceProfiles, EveryBuiltInProfileIsValidAndNamedAsTheIssueNamesIt) {
  const std::vector<std::string> want = {"apple-a17-pro",   "apple-m2",          "dimensity-9400",
                                         "dimensity-9500",  "pixel-8",           "rk3588",
                                         "snapdragon-7-gen3", "snapdragon-8-elite-gen5", "snapdragon-x-elite"};
  EXPECT_EQ(device_names(), want) << "profiles found in '" << device_dir() << "'";
  for (const std::string& n : want) {
    const DeviceProfile d = load_device(n);
    EXPECT_EQ(d.name, n);
    EXPECT_FALSE(d.source.empty()) << n;
    EXPECT_LE(d.app_budget_gib, d.ram_gib) << n;
  }
  EXPECT_DOUBLE_EQ(load_device("snapdragon-8-elite-gen5").bandwidth_gbs, 84.8);
  EXPECT_DOUBLE_EQ(load_device("dimensity-9500").bandwidth_gbs, 85.3);
}

TEST(DeviceProfiles, BadProfilesNameTheProblem) {
  auto error_of = [](const std::string& text) {
    try {
      parse_device_profile(text, "p.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string good = device_profile_json(load_device("pixel-8"));
  EXPECT_EQ(error_of(good), "");
  EXPECT_NE(error_of("{\"name\": ").find("p.json: line"), std::string::npos);
  std::string lacking = good;
  lacking.erase(lacking.find("  \"bandwidth_gbs\""), lacking.find("  \"int8_gops\"") - lacking.find("  \"bandwidth_gbs\""));
  EXPECT_EQ(error_of(lacking), "p.json: device profile lacks the field \"bandwidth_gbs\"");
  std::string over = good;
  over.replace(over.find("\"app_budget_gib\": 3.00"), 22, "\"app_budget_gib\": 9.00");
  EXPECT_NE(error_of(over).find("more than the device's ram_gib"), std::string::npos);
}

TEST(PlanDeviceCli, PresetOnAPhoneFitsWithTheWholeContext) {
  const tmpl::Json j = plan_json({"--preset", "qwen2.5-0.5b", "--quant", "Q4_K_M", "--device", "snapdragon-8-elite-gen5"});
  EXPECT_TRUE(j.find("fits")->as_bool());
  EXPECT_EQ(num(j, "max_ctx"), 32768);
  // The memory plan's fields are all there, and add up as the plan says.
  EXPECT_EQ(num(j, "n_ctx"), 4096);
  EXPECT_EQ(num(j, "kv_bytes"), 24.0 * 2 * 64 * 2 * 2 * 4096);  // 24 layers x K,V x 2 heads x 64 x f16
  EXPECT_GT(num(j, "footprint_bytes"), num(j, "kv_bytes"));
  EXPECT_EQ(num(j, "weights_bytes"), 391859712);  // llama-quantize's Q4_K_M of this shape, byte for byte
  EXPECT_NEAR(num(j, "decode_ceiling_tps"), 84.8e9 / num(j, "weight_bytes_per_token"), 1e-2);
  EXPECT_GT(num(j, "prefill_estimate_tps"), 0);
  EXPECT_EQ(num(j, "margin_bytes"), num(j, "budget_bytes") - num(j, "total_bytes"));
}

TEST(PlanDeviceCli, TooBigSaysByHowMuchAndOffersCheaperAlternatives) {
  const tmpl::Json j = plan_json({"--preset", "llama3.1-8b", "--quant", "Q8_0", "--device", "apple-a17-pro", "-c", "8192"});
  EXPECT_FALSE(j.find("fits")->as_bool());
  EXPECT_LT(num(j, "margin_bytes"), 0);
  EXPECT_EQ(num(j, "max_ctx"), 0);  // 8 GB of weights in a 4 GiB budget
  bool smaller_quant = false, smaller_model = false, q8_kv = false;
  for (const tmpl::Json& a : j.find("alternatives")->items()) {
    const std::string what = a.find("what")->as_string();
    smaller_quant |= what.find("weights") != std::string::npos;
    smaller_model |= what.find("llama3.2-3b") != std::string::npos;
    q8_kv |= what.find("q8_0 KV") != std::string::npos;
  }
  EXPECT_TRUE(smaller_quant && smaller_model && q8_kv) << j.dump();
}

TEST(PlanDeviceCli, TableOutputSaysFitAndSpeeds) {
  const test::RunResult r = run_command({EDGELLM_CLI, "plan", "--preset", "qwen3-4b", "--device", "pixel-8"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  for (const char* s : {"app budget", "largest context that fits", "decode ceiling", "realistic", "prefill estimate",
                        "cheaper alternatives", "q4_K"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(PlanDeviceCli, ConfigJsonPlansLikeItsPreset) {
  const std::string cfg = write_temp("qwen3-0.6b-config.json", R"({"architectures": ["Qwen3ForCausalLM"],
    "hidden_size": 1024, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
    "head_dim": 128, "intermediate_size": 3072, "vocab_size": 151936, "max_position_embeddings": 40960,
    "tie_word_embeddings": true})");
  const tmpl::Json a = plan_json({"--config", cfg, "--device", "rk3588"});
  const tmpl::Json b = plan_json({"--preset", "qwen3-0.6b", "--device", "rk3588"});
  for (const char* k : {"weights_bytes", "kv_bytes", "total_bytes", "max_ctx", "decode_ceiling_tps"})
    EXPECT_EQ(num(a, k), num(b, k)) << k;
}

TEST(PlanDeviceCli, ProbeJsonIsAProfilePlanReads) {
  const test::RunResult p = run_command({EDGELLM_CLI, "probe", "-o", "json", "--buffer-mib", "32", "-t", "1"});
  ASSERT_TRUE(p.exited_with(0)) << p.describe();
  const DeviceProfile d = parse_device_profile(p.out, "probe -o json");
  EXPECT_EQ(d.name, "host");
  EXPECT_GT(d.bandwidth_gbs, 0);
  EXPECT_GT(d.int8_gops, 0);
  const tmpl::Json j = plan_json({"--preset", "smollm2-135m", "--device", write_temp("host.json", p.out)});
  EXPECT_NEAR(num(j, "bandwidth_gbs"), d.bandwidth_gbs, 0.01);
}

// One clear error line, exit status 1.
void expect_error(std::vector<std::string> args, const std::string& want) {
  args.insert(args.begin(), {EDGELLM_CLI, "plan"});
  const test::RunResult r = run_command(args);
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(want), std::string::npos) << "want '" << want << "' in: " << r.err;
}

TEST(PlanDeviceCli, BadInputGetsOneClearError) {
  expect_error({"--preset", "qwen9-1b", "--device", "rk3588"}, "--preset 'qwen9-1b' is not a known model (qwen2.5-0.5b");
  expect_error({"--preset", "qwen2.5-0.5b", "--device", "nokia-3310"}, "--device 'nokia-3310' is not a known device (apple-a17-pro");
  expect_error({"--preset", "qwen2.5-0.5b", "--device", write_temp("broken.json", "{\"name\": \"x\",")},
               "broken.json: line");
  expect_error({"--preset", "qwen2.5-0.5b", "--device", write_temp("lacking.json", R"({"name": "x", "description": "d",
      "ram_gib": 8, "app_budget_gib": 4, "int8_gops": 100, "big_cores": 4, "little_cores": 4, "source": "s"})")},
               "lacks the field \"bandwidth_gbs\"");
  expect_error({"--preset", "qwen2.5-0.5b", "--device", "rk3588", "-c", "40000"},
               "context size 40000 is larger than the model supports (32768 tokens)");
  expect_error({"--config", write_temp("phimoe.json", R"({"architectures": ["PhiMoEForCausalLM"], "hidden_size": 2304})"),
                "--device", "rk3588"},
               "architecture 'PhiMoEForCausalLM' is not supported");
  expect_error({"--preset", "qwen2.5-0.5b", "--quant", "Q7_X", "--device", "rk3588"}, "--quant 'Q7_X' is not a recipe");
  expect_error({"--preset", "qwen2.5-0.5b", "-m", test::stories260k()}, "give one or the other");
  expect_error({"-m", test::stories260k(), "--device", "rk3588", "--quant", "Q4_0"}, "-m plans the file as it is");
  expect_error({"-m", test::stories260k(), "--device", "nokia-3310"}, "--device 'nokia-3310' is not a known device");
}

// A file on disk against a device: its own tensors, not a recipe's estimate.
TEST(PlanDeviceCli, FilePlansItsOwnBytes) {
  const std::string path = test::synth_tiny("qwen2", "q4_k_m");
  const tmpl::Json j = plan_json({"-m", path, "--device", "rk3588"});
  uint64_t real = 0, per_token = 0;
  {
    auto m = Model::load(path, gguf::Residency::Mmap, false);
    real = m->weight_bytes();
    per_token = weight_bytes_read_per_token(*m);
  }
  EXPECT_EQ(uint64_t(num(j, "weights_bytes")), real);
  EXPECT_EQ(j.find("quant")->as_string(), "Q4_K_M");
  EXPECT_EQ(j.find("device")->as_string(), "rk3588");
  EXPECT_TRUE(j.find("fits")->as_bool());
  EXPECT_EQ(num(j, "max_ctx"), 2048);  // the tiny shape's own limit
  EXPECT_NEAR(num(j, "decode_ceiling_tps"), num(j, "bandwidth_gbs") * 1e9 / double(per_token),
              1e-3 * num(j, "decode_ceiling_tps"));
  EXPECT_GT(num(j, "prefill_estimate_tps"), 0);
}

}  // namespace
}  // namespace edgellm
