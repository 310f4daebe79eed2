// SentencePiece tokenizer: llama.cpp's own test vectors, round trips, the
// streaming detokenizer, and malformed tokenizer metadata.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "format/gguf.h"
#include "tokenizer/tokenizer.h"

using namespace edgellm;

namespace {

const std::string kShared = EDGELLM_SHARED_DIR;
const std::string kStories = kShared + "/testdata/models/stories260K.gguf";

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// .inp: texts, each followed by "\n__ggml_vocab_test__\n"; .out: one line of
// ids per text (see testdata/vocab/PROVENANCE.md). Split as llama.cpp's
// test-tokenizer-0 does.
struct Case {
  std::string text;
  std::vector<int32_t> ids;
};
std::vector<Case> load_cases(const std::string& vocab_gguf) {
  const std::string inp = read_all(vocab_gguf + ".inp"), out = read_all(vocab_gguf + ".out");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<Case> cases;
  for (size_t pos = 0; pos < inp.size();) {
    size_t next = inp.find(sep, pos);
    if (next == std::string::npos) next = inp.size();
    cases.push_back({inp.substr(pos, next - pos), {}});
    pos = next + sep.size();
  }
  std::istringstream lines(out);
  std::string line;
  for (Case& c : cases) {
    if (!std::getline(lines, line)) break;
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) c.ids.push_back(id);
  }
  return cases;
}

std::string show(const std::vector<int32_t>& v) {
  std::string s;
  for (int32_t id : v) {
    s += ' ';
    s += std::to_string(id);
  }
  return s;
}

// Runs every vector; returns the number that pass and reports the others.
int run_vectors(const std::string& name, int* total) {
  const std::string path = kShared + "/testdata/vocab/ggml-vocab-" + name + ".gguf";
  auto f = gguf::File::open(path);
  auto tok = make_tokenizer(*f);
  std::vector<Case> cases = load_cases(path);
  EXPECT_GE(cases.size(), 40u);
  int pass = 0;
  for (const Case& c : cases) {
    std::vector<int32_t> got = tok->encode(c.text, /*add_bos=*/false, /*parse_special=*/false);
    if (got == c.ids) pass++;
    else ADD_FAILURE() << name << ": '" << c.text << "'\n  want" << show(c.ids) << "\n  got " << show(got);
    // The BOS strips exactly the dummy prefix, so every text comes back.
    EXPECT_EQ(detokenize(*tok, tok->encode(c.text, true)), c.text) << name << ": round trip of '" << c.text << "'";
  }
  *total = int(cases.size());
  return pass;
}

}  // namespace

TEST(TokenizerSpm, LlamaSpmVectors) {
  int total = 0, pass = run_vectors("llama-spm", &total);
  EXPECT_EQ(pass, total);
  std::printf("llama-spm: %d/%d vectors pass\n", pass, total);
}

TEST(TokenizerSpm, Phi3Vectors) {
  int total = 0, pass = run_vectors("phi-3", &total);
  EXPECT_EQ(pass, total);
  std::printf("phi-3: %d/%d vectors pass\n", pass, total);
}

TEST(TokenizerSpm, Stories260K) {
  auto f = gguf::File::open(kStories);
  auto tok = make_tokenizer(*f);
  const Vocab& v = tok->vocab();
  EXPECT_EQ(v.model, "llama");
  EXPECT_EQ(v.n_tokens(), 512);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.unk, 0);
  EXPECT_EQ(v.pad, -1);  // stored as 4294967295
  EXPECT_EQ(v.eog_ids, std::vector<int32_t>{2});
  for (int b = 0; b < 256; b++) EXPECT_EQ(v.type(3 + b), TokenType::Byte);

  const std::string text = "Once upon a time";
  std::vector<int32_t> ids = tok->encode(text, true);
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[0], 1);
  EXPECT_LT(ids.size(), text.size());  // real merges happened
  for (size_t i = 1; i < ids.size(); i++) {
    EXPECT_GT(ids[i], 258) << "plain English should not need byte fallback";
    EXPECT_LT(ids[i], 512);
  }
  // The first word carries the dummy-prefix space.
  EXPECT_EQ(tok->token_to_piece(ids[1]).substr(0, 1), " ");
  EXPECT_EQ(detokenize(*tok, ids), text);

  // Outside the 512-token vocabulary: byte fallback, still a round trip.
  for (std::string s : {"Once upon a time, there was a little girl named Lily.",
                        "Zürich: 日本語 🙂 tabs\tand\nnewlines", "  two leading spaces", "x"}) {
    EXPECT_EQ(detokenize(*tok, tok->encode(s, true)), s);
  }
  EXPECT_EQ(tok->encode("", true), std::vector<int32_t>{1});
  EXPECT_TRUE(tok->encode("", false).empty());
  EXPECT_EQ(tok->token_to_piece(3 + '\n'), "\n");
  EXPECT_EQ(tok->token_to_piece(1), "");  // control tokens print nothing
  EXPECT_THROW(tok->token_to_piece(512), Error);
}

TEST(TokenizerSpm, ParseSpecial) {
  auto f = gguf::File::open(kStories);
  auto tok = make_tokenizer(*f);
  std::vector<int32_t> with = tok->encode("<s>Hi</s>", false, true);
  ASSERT_GE(with.size(), 3u);
  EXPECT_EQ(with.front(), 1);
  EXPECT_EQ(with.back(), 2);
  // Without parse_special, "<s>" is just text.
  std::vector<int32_t> without = tok->encode("<s>Hi</s>", false, false);
  for (int32_t id : without) EXPECT_TRUE(id != 1 && id != 2);
  EXPECT_EQ(detokenize(*tok, tok->encode("<s>Hi", true, false)), "<s>Hi");
}

// llama.cpp strips whitespace after special tokens for models named Phi-3, and
// the text after a special token gets its own dummy prefix. Expected ids from
// llama.cpp for this chat turn.
TEST(TokenizerSpm, Phi3ChatTurn) {
  auto f = gguf::File::open(kShared + "/testdata/vocab/ggml-vocab-phi-3.gguf");
  auto tok = make_tokenizer(*f);
  EXPECT_TRUE(tok->vocab().special_rstrip);
  std::vector<int32_t> want = {1, 32010, 317, 21554, 13, 17628, 32007, 32001};
  EXPECT_EQ(tok->encode("<|user|>\nSYS\nHI<|end|>\n<|assistant|>\n", true, true), want);
  const Vocab& v = tok->vocab();
  EXPECT_TRUE(v.is_eog(32000));  // <|endoftext|> = eos
  int32_t end = v.find("<|end|>");
  ASSERT_GE(end, 0);
  EXPECT_EQ(v.is_eog(end), v.type(end) == TokenType::Control);
}

TEST(TokenizerSpm, LlamaNotRstripped) {
  auto f = gguf::File::open(kShared + "/testdata/vocab/ggml-vocab-llama-spm.gguf");
  auto tok = make_tokenizer(*f);
  EXPECT_FALSE(tok->vocab().special_rstrip);
  std::vector<int32_t> ids = tok->encode("<s>\nHi", false, true);
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 29871);  // "▁" then "\n": the newline survives
  EXPECT_EQ(ids[2], 13);
}

TEST(TokenizerSpm, StreamingDetokenizerHoldsPartialUtf8) {
  auto f = gguf::File::open(kStories);
  auto tok = make_tokenizer(*f);
  // U+1F642 as four byte tokens (ids 3 + byte).
  Detokenizer d(*tok);
  EXPECT_EQ(d.push(1), "");
  EXPECT_EQ(d.push(3 + 0xF0), "");
  EXPECT_EQ(d.push(3 + 0x9F), "");
  EXPECT_EQ(d.push(3 + 0x99), "");
  EXPECT_EQ(d.push(3 + 0x82), "\xF0\x9F\x99\x82");
  EXPECT_EQ(d.flush(), "");
  // An unfinished sequence comes out at flush.
  EXPECT_EQ(d.push(3 + 0xE2), "");
  EXPECT_EQ(d.flush(), "\xE2");
  // Without a BOS the stream is a continuation: the space stays.
  Detokenizer cont(*tok);
  std::vector<int32_t> ids = tok->encode("upon", false);
  std::string s;
  for (int32_t id : ids) s += cont.push(id);
  EXPECT_EQ(s, " upon");
}

TEST(TokenizerSpm, LongInputIsFast) {
  auto f = gguf::File::open(kShared + "/testdata/vocab/ggml-vocab-llama-spm.gguf");
  auto tok = make_tokenizer(*f);
  std::string text;
  while (text.size() < (1u << 20)) text += "The quick brown fox jumps over the lazy dog. Zürich 日本 🙂\n";
  std::string one_word(200000, 'a');  // a single 200k-character symbol chain
  auto t0 = std::chrono::steady_clock::now();
  std::vector<int32_t> ids = tok->encode(text, true);
  std::vector<int32_t> ids2 = tok->encode(one_word, false);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 10.0) << "1 MiB + 200 KB took " << s << " s";
  EXPECT_EQ(detokenize(*tok, ids), text);
  EXPECT_EQ(detokenize(*tok, tok->encode(one_word, true)), one_word);
  EXPECT_FALSE(ids2.empty());
}

// ---- malformed metadata ----------------------------------------------------

namespace {

using gguf::Value;
using gguf::ValueType;

Value strings(const std::vector<std::string>& v) {
  std::vector<Value> items;
  for (const auto& s : v) items.push_back(Value::of_string(s));
  return Value::of_array(ValueType::STRING, std::move(items));
}

// A small valid SPM vocabulary; each test breaks one thing.
struct VocabFile {
  std::vector<std::string> toks = {"<unk>", "<s>", "</s>", "<0x0A>", "\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab"};
  std::vector<float> scores = {0, 0, 0, 0, -1, -2, -3, -0.5f, -0.25f};
  std::vector<int32_t> types = {2, 3, 3, 6, 1, 1, 1, 1, 1};
  gguf::Writer w;
  VocabFile() {
    w.set("general.architecture", Value::of_string("llama"));
    w.set("tokenizer.ggml.model", Value::of_string("llama"));
    sync();
    w.set("tokenizer.ggml.bos_token_id", Value::of_u32(1));
    w.set("tokenizer.ggml.eos_token_id", Value::of_u32(2));
  }
  void sync() {
    w.set("tokenizer.ggml.tokens", strings(toks));
    std::vector<Value> s, t;
    for (float x : scores) s.push_back(Value::of_f32(x));
    for (int32_t x : types) t.push_back(Value::of_i32(x));
    w.set("tokenizer.ggml.scores", Value::of_array(ValueType::FLOAT32, std::move(s)));
    w.set("tokenizer.ggml.token_type", Value::of_array(ValueType::INT32, std::move(t)));
  }
  std::string error() {  // the message Vocab::load throws, or "" if it loads
    std::vector<uint8_t> bytes = w.to_bytes();
    auto f = gguf::File::parse(bytes.data(), bytes.size(), "test.gguf");
    try {
      Vocab::load(*f);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::unique_ptr<Tokenizer> tokenizer() {
    bytes_ = w.to_bytes();
    file_ = gguf::File::parse(bytes_.data(), bytes_.size(), "test.gguf");
    return make_tokenizer(*file_);
  }
  std::vector<uint8_t> bytes_;
  std::unique_ptr<gguf::File> file_;
};

#define EXPECT_ERROR_HAS(expr, needle)                                  \
  do {                                                                  \
    std::string msg_ = (expr);                                          \
    EXPECT_NE(msg_.find(needle), std::string::npos) << "message: " << msg_; \
  } while (0)

}  // namespace

TEST(TokenizerVocab, SmallVocabWorks) {
  VocabFile vf;
  EXPECT_EQ(vf.error(), "");
  auto tok = vf.tokenizer();
  // "▁ab": the pair "ab" (-0.25) outscores "▁a" (-0.5) and merges first;
  // "▁ab" is not a token, so "▁" stays alone.
  EXPECT_EQ(tok->encode("ab", false), (std::vector<int32_t>{4, 8}));
  EXPECT_EQ(tok->encode("a", false), (std::vector<int32_t>{7}));
  // 'c' is not in the vocabulary and has no byte token: <unk>.
  EXPECT_EQ(tok->encode("c", false), (std::vector<int32_t>{4, 0}));
  EXPECT_EQ(tok->encode("\n", false), (std::vector<int32_t>{4, 3}));
}

TEST(TokenizerVocab, EmptyVocab) {
  VocabFile vf;
  vf.toks.clear();
  vf.scores.clear();
  vf.types.clear();
  vf.sync();
  EXPECT_ERROR_HAS(vf.error(), "'tokenizer.ggml.tokens' is empty");
}

TEST(TokenizerVocab, MissingTokens) {
  gguf::Writer w;
  w.set("tokenizer.ggml.model", Value::of_string("llama"));
  std::vector<uint8_t> b = w.to_bytes();
  auto f = gguf::File::parse(b.data(), b.size(), "x.gguf");
  EXPECT_THROW(Vocab::load(*f), Error);
}

TEST(TokenizerVocab, TokensWrongElementType) {
  VocabFile vf;
  std::vector<Value> ints;
  for (size_t i = 0; i < vf.toks.size(); i++) ints.push_back(Value::of_i32(int32_t(i)));
  vf.w.set("tokenizer.ggml.tokens", Value::of_array(ValueType::INT32, std::move(ints)));
  std::string e = vf.error();
  EXPECT_ERROR_HAS(e, "tokenizer.ggml.tokens");
  EXPECT_ERROR_HAS(e, "expected an array of strings, found an array of int32");
}

TEST(TokenizerVocab, ScoresLengthMismatch) {
  VocabFile vf;
  vf.scores.pop_back();
  vf.sync();
  std::string e = vf.error();
  EXPECT_ERROR_HAS(e, "'tokenizer.ggml.scores' has 8 entries but 'tokenizer.ggml.tokens' has 9");
}

TEST(TokenizerVocab, TokenTypeLengthMismatchAndBadValue) {
  VocabFile vf;
  vf.types.push_back(1);
  vf.sync();
  EXPECT_ERROR_HAS(vf.error(), "'tokenizer.ggml.token_type' has 10 entries");
  vf.types.pop_back();
  vf.types[5] = 9;
  vf.sync();
  EXPECT_ERROR_HAS(vf.error(), "token 5 has type 9");
}

TEST(TokenizerVocab, BosOutOfRange) {
  VocabFile vf;
  vf.w.set("tokenizer.ggml.bos_token_id", Value::of_u32(600));
  EXPECT_ERROR_HAS(vf.error(), "'tokenizer.ggml.bos_token_id' = 600 is out of range: the vocabulary has 9 tokens");
  vf.w.set("tokenizer.ggml.bos_token_id", Value::of_u32(0xFFFFFFFFu));  // "none"
  EXPECT_EQ(vf.error(), "");
  EXPECT_EQ(vf.tokenizer()->encode("a", true), (std::vector<int32_t>{7}));
}

TEST(TokenizerVocab, AbsurdTokenLength) {
  VocabFile vf;
  vf.toks[6] = std::string(5000, 'x');
  vf.sync();
  EXPECT_ERROR_HAS(vf.error(), "token 6 is 5000 bytes long");
}

TEST(TokenizerVocab, BadByteToken) {
  VocabFile vf;
  vf.toks[3] = "<0xZZ>";
  vf.sync();
  EXPECT_ERROR_HAS(vf.error(), "token 3 '<0xZZ>' is a byte token but not of the form <0xHH>");
}

TEST(TokenizerVocab, UnsupportedModel) {
  VocabFile vf;
  vf.w.set("tokenizer.ggml.model", Value::of_string("rwkv"));
  try {
    vf.tokenizer();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_ERROR_HAS(std::string(e.what()), "tokenizer model 'rwkv' is not supported yet; pass token ids with --tokens");
  }
}

TEST(TokenizerVocab, MadeByHand) {
  Vocab v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>", "\xE2\x96\x81" "hi", "hi"};
  v.bos = 1;
  v.eos = 2;
  v.unk = 0;
  v.types = {TokenType::Unknown, TokenType::Control, TokenType::Control, TokenType::Normal,
             TokenType::Normal};
  v.finalize("hand");
  auto tok = make_tokenizer(std::move(v));
  EXPECT_EQ(tok->encode("hi", true), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(detokenize(*tok, {1, 3, 2}), "hi");
}
