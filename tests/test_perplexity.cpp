// Perplexity and KL divergence (tools/perplexity.h): llama-perplexity's base
// file round trip, the per-position arithmetic on hand-computed cases,
// malformed base files refused, and `edgellm perplexity` end to end on
// stories260K.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>

#include "base/error.h"
#include "run_cli.h"
#include "test_models.h"
#include "tools/perplexity.h"

namespace edgellm {
namespace {

using test::run_command;

std::vector<float> random_logits(int64_t n, uint32_t seed, float sd = 3.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<double> log_softmax(const float* l, int64_t n) {
  double m = l[0];
  for (int64_t i = 1; i < n; ++i) m = std::max(m, double(l[i]));
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(l[i] - m);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = l[i] - m - std::log(s);
  return out;
}

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void write_all(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data.data(), std::streamsize(data.size()));
}

// A base file of n_chunk chunks of n_ctx tokens with random rows.
std::string make_base(const std::string& name, int32_t n_ctx, int32_t n_vocab, int32_t n_chunk,
                      std::vector<std::vector<float>>* logits_out = nullptr) {
  const std::string path = test::temp_dir() + "/" + name;
  KldBaseHeader h;
  h.n_ctx = n_ctx, h.n_vocab = n_vocab, h.n_chunk = n_chunk;
  for (int32_t i = 0; i < n_ctx * n_chunk; ++i) h.tokens.push_back((i * 7 + 3) % n_vocab);
  KldBaseWriter w(path, h);
  const int64_t rows = n_chunk * scored_per_chunk(n_ctx);
  std::vector<uint16_t> row(static_cast<size_t>(kld_row_u16s(n_vocab)), 0xFFFF);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> l = random_logits(n_vocab, uint32_t(r + 1));
    if (r == 1) l[5] = -100.0f;  // far below max - 16: stored at the floor
    encode_log_prob_row(l.data(), n_vocab, int32_t(r % n_vocab), row.data());
    w.write_rows(row.data(), 1);
    if (logits_out) logits_out->push_back(l);
  }
  w.finish();
  return path;
}

TEST(Perplexity, BaseFileRoundTrip) {
  const int32_t n_ctx = 10, n_vocab = 37, n_chunk = 2;  // odd vocabulary: each row has one padding value
  std::vector<std::vector<float>> logits;
  const std::string path = make_base("roundtrip.kld", n_ctx, n_vocab, n_chunk, &logits);
  const int64_t per_chunk = scored_per_chunk(n_ctx);
  EXPECT_EQ(per_chunk, 4);
  EXPECT_EQ(kld_row_u16s(n_vocab), 2 * 19 + 4);
  // Exactly llama-perplexity's layout: magic, 3 int32, tokens, rows.
  const std::string bytes = read_all(path);
  EXPECT_EQ(bytes.size(), size_t(20 + 4 * n_ctx * n_chunk + 2 * n_chunk * per_chunk * kld_row_u16s(n_vocab)));
  EXPECT_EQ(bytes.substr(0, 8), "_logits_");
  int32_t hdr[3];
  std::memcpy(hdr, bytes.data() + 8, sizeof hdr);
  EXPECT_EQ(hdr[0], n_ctx);
  EXPECT_EQ(hdr[1], n_vocab);
  EXPECT_EQ(hdr[2], n_chunk);

  KldBaseReader rd(path);
  EXPECT_EQ(rd.header().n_ctx, n_ctx);
  EXPECT_EQ(rd.header().n_vocab, n_vocab);
  EXPECT_EQ(rd.header().n_chunk, n_chunk);
  ASSERT_EQ(rd.header().tokens.size(), size_t(n_ctx * n_chunk));
  for (int32_t i = 0; i < n_ctx * n_chunk; ++i) EXPECT_EQ(rd.header().tokens[size_t(i)], (i * 7 + 3) % n_vocab);
  std::vector<uint16_t> row(static_cast<size_t>(kld_row_u16s(n_vocab)));
  std::vector<float> lp(static_cast<size_t>(n_vocab));
  for (size_t r = 0; r < logits.size(); ++r) {
    rd.read_rows(row.data(), 1);
    EXPECT_EQ(row.back(), 0) << "padding";
    decode_log_prob_row(row.data(), n_vocab, lp.data());
    const std::vector<double> want = log_softmax(logits[r].data(), n_vocab);
    const double top = *std::max_element(want.begin(), want.end());
    float scale;
    std::memcpy(&scale, row.data(), sizeof scale);
    EXPECT_GT(scale, 0.0f);
    for (int64_t i = 0; i < n_vocab; ++i) {
      if (want[size_t(i)] > top - 16) {
        EXPECT_NEAR(lp[size_t(i)], want[size_t(i)], 0.5 * scale + 1e-5) << "row " << r << " token " << i;
      } else {  // below the floor: stored as the floor, which is above the true value
        EXPECT_GE(lp[size_t(i)] + 1e-5, want[size_t(i)]);
        EXPECT_NEAR(lp[size_t(i)], top - 16, 1e-4);
      }
    }
  }
  EXPECT_THROW(rd.read_rows(row.data(), 1), Error);  // past the last row
}

TEST(Perplexity, EncodedNllMatchesPlainNll) {
  const std::vector<float> l = random_logits(1000, 9);
  std::vector<uint16_t> row(static_cast<size_t>(kld_row_u16s(1000)));
  for (int32_t tok : {0, 17, 999}) {
    const double want = -log_softmax(l.data(), 1000)[size_t(tok)];
    EXPECT_NEAR(encode_log_prob_row(l.data(), 1000, tok, row.data()), want, 1e-4);
    EXPECT_NEAR(token_nll(l.data(), 1000, tok), want, 1e-5);
  }
}

TEST(Perplexity, IdenticalLogitsHaveZeroKlAndSameTop) {
  const int64_t n_vocab = 512;
  std::vector<uint16_t> row(static_cast<size_t>(kld_row_u16s(n_vocab)));
  KldAccum acc;
  for (uint32_t r = 0; r < 50; ++r) {
    const std::vector<float> l = random_logits(n_vocab, 100 + r);
    encode_log_prob_row(l.data(), n_vocab, int32_t(r), row.data());
    const KldTerms t = kld_terms(l.data(), n_vocab, row.data(), int32_t(r));
    EXPECT_NEAR(t.kld, 0.0, 1e-4);  // only the uint16 rounding of the base
    EXPECT_TRUE(t.same_top);
    EXPECT_NEAR(t.nll, t.nll_base, 1e-3);
    acc.add(t);
  }
  PerplexityReport rep;
  finish_report(rep, acc);
  EXPECT_EQ(rep.same_top, 100.0);
  EXPECT_NEAR(rep.kld_mean, 0.0, 1e-5);
  EXPECT_NEAR(rep.ppl, rep.ppl_base, 1e-3 * rep.ppl);
}

TEST(Perplexity, HandComputedKlDivergence) {
  // Base: uniform over 2 tokens (a constant row: scale 0, every log p = -ln 2).
  // Ours: p = (3/4, 1/4). KL(base || ours) = 1/2 ln(2/3) + 1/2 ln 2 = 1/2 ln(4/3).
  const float base_logits[2] = {1.0f, 1.0f}, ours[2] = {std::log(3.0f), 0.0f};
  std::vector<uint16_t> row(static_cast<size_t>(kld_row_u16s(2)));
  EXPECT_NEAR(encode_log_prob_row(base_logits, 2, 1, row.data()), std::log(2.0), 1e-6);
  const KldTerms t = kld_terms(ours, 2, row.data(), 1);
  EXPECT_NEAR(t.kld, 0.5 * std::log(4.0 / 3.0), 1e-6);
  EXPECT_NEAR(t.nll, std::log(4.0), 1e-6);
  EXPECT_NEAR(t.nll_base, std::log(2.0), 1e-6);
  EXPECT_NEAR(t.p_diff, 0.25 - 0.5, 1e-6);
  EXPECT_TRUE(t.same_top);  // both pick token 0 (ties go to the first)
}

TEST(Perplexity, HandComputedPerplexity) {
  // Uniform over 4 tokens: every nll is ln 4, PPL exactly 4, no spread.
  const float uniform[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  PplAccum a;
  for (int i = 0; i < 3; ++i) a.add(token_nll(uniform, 4, i));
  EXPECT_NEAR(a.ppl(), 4.0, 1e-6);
  EXPECT_NEAR(a.ppl_err(), 0.0, 1e-6);
  // logits (ln 3, 0): p = (3/4, 1/4). Scoring token 0 then token 1:
  // nll = ln(4/3), ln 4; PPL = exp(mean) = sqrt(16/3); the error is
  // PPL * sqrt(var / (n-1)) with var = (ln 3 / 2)^2, n = 2.
  const float l[2] = {std::log(3.0f), 0.0f};
  PplAccum b;
  b.add(token_nll(l, 2, 0));
  b.add(token_nll(l, 2, 1));
  EXPECT_NEAR(b.ppl(), std::sqrt(16.0 / 3.0), 1e-6);
  EXPECT_NEAR(b.ppl_err(), std::sqrt(16.0 / 3.0) * std::log(3.0) / 2, 1e-6);
  PerplexityReport rep;
  rep.chunk_ppl = {b.ppl()};
  finish_report(rep, b);
  EXPECT_EQ(format_chunk_line(rep), "[1]2.3094,");
  EXPECT_EQ(format_summary(rep).rfind("Final estimate: PPL = 2.3094 +/- 1.2685", 0), 0u) << format_summary(rep);
}

void expect_refused(const std::string& path, const std::string& needle) {
  try {
    KldBaseReader r(path);
    ADD_FAILURE() << path << " was accepted; wanted an error with '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Perplexity, MalformedBaseFilesAreRefused) {
  const std::string good = make_base("good.kld", 8, 33, 2);
  const std::string bytes = read_all(good);
  EXPECT_NO_THROW(KldBaseReader r(good));
  const std::string dir = test::temp_dir();

  write_all(dir + "/magic.kld", "_logitz_" + bytes.substr(8));
  expect_refused(dir + "/magic.kld", "does not start with \"_logits_\"");
  write_all(dir + "/tiny.kld", "_log");
  expect_refused(dir + "/tiny.kld", "does not start with");
  write_all(dir + "/header.kld", bytes.substr(0, 14));
  expect_refused(dir + "/header.kld", "too short for its header");
  write_all(dir + "/cut.kld", bytes.substr(0, bytes.size() - 3));
  expect_refused(dir + "/cut.kld", "is truncated");
  write_all(dir + "/long.kld", bytes + "xx");
  expect_refused(dir + "/long.kld", "is too long");
  std::string bad_tok = bytes;
  const int32_t id = 33;  // == n_vocab
  std::memcpy(bad_tok.data() + 20 + 4 * 5, &id, 4);
  write_all(dir + "/tok.kld", bad_tok);
  expect_refused(dir + "/tok.kld", "token 5 has id 33");
  std::string bad_ctx = bytes;
  const int32_t two = 2;
  std::memcpy(bad_ctx.data() + 8, &two, 4);
  write_all(dir + "/ctx.kld", bad_ctx);
  expect_refused(dir + "/ctx.kld", "too small");
  std::string huge = bytes;
  const int32_t big = 1 << 27;
  std::memcpy(huge.data() + 16, &big, 4);  // n_chunk: the size check must not overflow
  write_all(dir + "/huge.kld", huge);
  expect_refused(dir + "/huge.kld", "is truncated");
  expect_refused(dir + "/does-not-exist.kld", "cannot open");
}

// ---------------------------------------------------------------- CLI

// About 600 stories260K tokens of TinyStories-like text.
const char* kStory =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine. "
    "One day, she saw a big red ball in the park. She ran to the ball and kicked it very hard. The ball "
    "went up into the sky and came down near a tree. Lily laughed and ran after it.\n"
    "Under the tree, there was a small dog. The dog was sad because he was lost. Lily said, \"Do not be "
    "sad, little dog. I will help you find your home.\" The dog wagged his tail and licked her hand. "
    "Lily and the dog walked around the park. They looked for the dog's mom and dad.\n"
    "Soon they met a kind old man. He had a long white beard and a big hat. \"Is this your dog?\" Lily "
    "asked. The man smiled and said, \"No, but I know where he lives. He lives in the blue house by the "
    "pond.\" Lily thanked the man and walked to the pond with the dog.\n"
    "At the blue house, a boy named Tim opened the door. When he saw the dog, he was very happy. \"Max! "
    "You came back!\" he shouted. Tim hugged the dog and gave Lily a big smile. \"Thank you for bringing "
    "Max home,\" he said. Lily felt warm and happy inside.\n"
    "Tim asked Lily if she wanted to play. They played with the red ball and Max ran after it. They "
    "jumped and ran and laughed all day. When the sun went down, Lily said goodbye to Tim and Max. She "
    "walked home with a big smile on her face.\n"
    "That night, Lily told her mom about the lost dog and her new friend. Her mom hugged her and said, "
    "\"You were very kind today. I am proud of you.\" Lily went to bed and dreamed about playing with "
    "Max and Tim again. The next day, she went back to the park, and her new friends were waiting for "
    "her. They played together every day, and they were always happy.\n"
    "One day, Ben saw a little bird on the ground. The bird could not fly. Ben was sad for the bird. He "
    "took the bird home and gave it some water and food. His mom helped him make a soft bed in a box. "
    "Every day Ben gave the bird food and talked to it. After many days, the bird felt better. It "
    "flapped its wings and flew around the room. Ben opened the window, and the bird flew out into the "
    "sky. It sang a happy song. Ben waved and said, \"Goodbye, little bird!\" He was happy that the bird "
    "was free.\n";

std::string story_file() {
  const std::string path = test::temp_dir() + "/story.txt";
  write_all(path, kStory);
  return path;
}

double json_number(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\":(-?[0-9.eE+-]+)");
  if (!std::regex_search(json, m, re)) {
    ADD_FAILURE() << "no " << key << " in " << json;
    return NAN;
  }
  return std::stod(m[1]);
}

void expect_clean_error(const std::vector<std::string>& args, const std::string& needle) {
  std::vector<std::string> argv = {EDGELLM_CLI, "perplexity"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run_command(argv);
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.describe();
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.describe();
  EXPECT_NE(r.err.find(needle), std::string::npos) << "wanted '" << needle << "' in: " << r.err;
}

TEST(PerplexityCli, ScoresStoriesLikeLlamaPerplexity) {
  const std::string m = test::stories260k(), text = story_file();
  const auto r = run_command({EDGELLM_CLI, "perplexity", "-m", m, "-f", text, "-c", "128", "-b", "48", "-t", "2"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_NE(r.out.find("[1]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[4]"), std::string::npos) << r.out;
  std::smatch mm;
  ASSERT_TRUE(std::regex_search(r.out, mm, std::regex("Final estimate: PPL = ([0-9.]+) \\+/- ([0-9.]+)"))) << r.out;
  const double ppl = std::stod(mm[1]);
  // A model trained on such stories: far better than the 512-token uniform guess.
  EXPECT_GT(ppl, 1.0);
  EXPECT_LT(ppl, 30.0);
  EXPECT_GT(std::stod(mm[2]), 0.0);

  // -o json: the same numbers, batch size does not change them.
  const auto j = run_command({EDGELLM_CLI, "perplexity", "-m", m, "-f", text, "-c", "128", "-o", "json"});
  ASSERT_TRUE(j.exited_with(0)) << j.describe();
  EXPECT_EQ(j.out.find('\n'), j.out.size() - 1) << "one JSON line: " << j.out;
  EXPECT_NEAR(json_number(j.out, "ppl"), ppl, 1e-3 * ppl);
  EXPECT_EQ(json_number(j.out, "n_ctx"), 128);
  const double n_chunks = json_number(j.out, "n_chunks");
  EXPECT_GE(n_chunks, 4);
  EXPECT_EQ(json_number(j.out, "n_scored"), n_chunks * 63);
  EXPECT_NE(j.out.find("\"kld_mean\":null"), std::string::npos) << j.out;

  // Write our own base, then score the same model against it: KL ~ 0, same top 100 %.
  const std::string base = test::temp_dir() + "/stories.kld";
  const auto w = run_command({EDGELLM_CLI, "perplexity", "-m", m, "-f", text, "-c", "128", "--kl-divergence-base", base});
  ASSERT_TRUE(w.exited_with(0)) << w.describe();
  EXPECT_NE(w.out.find("Final estimate: PPL = " + std::string(mm[1])), std::string::npos) << w.out;
  const auto k = run_command(
      {EDGELLM_CLI, "perplexity", "-m", m, "--kl-divergence-base", base, "--kl-divergence", "-o", "json", "-b", "100"});
  ASSERT_TRUE(k.exited_with(0)) << k.describe();
  EXPECT_NEAR(json_number(k.out, "kld_mean"), 0.0, 1e-5) << k.out;
  EXPECT_EQ(json_number(k.out, "same_top"), 100.0) << k.out;
  EXPECT_NEAR(json_number(k.out, "ppl"), ppl, 1e-3 * ppl) << k.out;
  EXPECT_NEAR(json_number(k.out, "ppl_base"), ppl, 1e-3 * ppl) << k.out;
  EXPECT_EQ(json_number(k.out, "n_chunks"), n_chunks);
  // The text form prints llama-perplexity's table and statistics.
  const auto kt = run_command({EDGELLM_CLI, "perplexity", "-m", m, "--kl-divergence-base", base, "--kl-divergence"});
  ASSERT_TRUE(kt.exited_with(0)) << kt.describe();
  EXPECT_NE(kt.out.find("KL Divergence"), std::string::npos) << kt.out;
  EXPECT_NE(kt.out.find("Mean    KLD:"), std::string::npos) << kt.out;
  EXPECT_NE(kt.out.find("Same top p: 100.000"), std::string::npos) << kt.out;
}

TEST(PerplexityCli, BadInputIsOneClearError) {
  const std::string m = test::stories260k(), text = story_file();
  const std::string short_text = test::temp_dir() + "/short.txt";
  write_all(short_text, "Once upon a time, there was a cat.");
  expect_clean_error({"-m", m, "-f", short_text, "-c", "128"}, "needs at least 256");
  expect_clean_error({"-m", m}, "no text given");
  expect_clean_error({"-m", m, "--kl-divergence"}, "needs --kl-divergence-base");
  expect_clean_error({"-m", m, "-f", text, "-ctk", "q5_9"}, "not a KV cache type");
  expect_clean_error({"-m", m, "-f", text, "-o", "xml"}, "unknown output format");
  const std::string not_kld = test::temp_dir() + "/not.kld";
  write_all(not_kld, "hello, this is not a base file at all");
  expect_clean_error({"-m", m, "--kl-divergence-base", not_kld, "--kl-divergence"}, "_logits_");
  // A base from a 1000-token vocabulary cannot score a 512-token model.
  const std::string other = make_base("vocab1000.kld", 8, 1000, 1);
  expect_clean_error({"-m", m, "--kl-divergence-base", other, "--kl-divergence"}, "vocabulary of 1000");
  const std::string cut = test::temp_dir() + "/cut-cli.kld";
  const std::string good = make_base("good-cli.kld", 8, 512, 2);
  write_all(cut, read_all(good).substr(0, 100));
  expect_clean_error({"-m", m, "--kl-divergence-base", cut, "--kl-divergence"}, "truncated");
  expect_clean_error({"-m", m, "--kl-divergence-base", good, "--kl-divergence", "-c", "16"}, "differs from the base");
}

}  // namespace
}  // namespace edgellm
