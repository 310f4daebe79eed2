// Tokenizers against llama.cpp, for every vocabulary in testdata/vocab:
//  - llama.cpp's own test vectors (testdata/vocab/*.inp / *.out, see
//    PROVENANCE.md there), all of which must match, plus round trips where
//    the family guarantees them (BPE, byte-level or with <0xHH> byte
//    fallback, without BOS; SPM after BOS);
//  - extra texts (Chinese, Japanese, emoji, code, whitespace runs, digits,
//    mixed scripts, a chat turn with control tokens, BOS) whose expected ids
//    were obtained by running llama.cpp's llama-tokenize on the same
//    vocabularies:
//      llama-tokenize -m ggml-vocab-NAME.gguf --stdin --ids --log-disable
//                     --no-escape [--no-bos]
//    (llama-tokenize parses special tokens by default, so these are compared
//    with encode(text, add_bos, parse_special = true));
//  - BPE pre-tokenizers without a vocabulary of their own: the GPT-2
//    vocabulary with tokenizer.ggml.pre rewritten, ids from llama-tokenize on
//    the rewritten file (as above, with BOS when the pre-tokenizer adds one);
//  - end-of-generation sets, streaming detokenization of byte-level pieces,
//    malformed BPE / WordPiece metadata, and speed on 1 MiB inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "format/gguf.h"
#include "tokenizer/tokenizer.h"

using namespace edgellm;

namespace {

const std::string kVocabDir = std::string(EDGELLM_SHARED_DIR) + "/testdata/vocab/";

std::string vocab_path(const std::string& name) { return kVocabDir + "ggml-vocab-" + name + ".gguf"; }

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string show(const std::vector<int32_t>& v) {
  std::string s;
  for (int32_t id : v) {
    s += ' ';
    s += std::to_string(id);
  }
  return s;
}

// .inp: texts separated by "\n__ggml_vocab_test__\n"; .out: one line of ids
// per text. Split as llama.cpp's test-tokenizer-0 does.
struct Case {
  std::string text;
  std::vector<int32_t> ids;
};
std::vector<Case> load_cases(const std::string& gguf) {
  const std::string inp = read_all(gguf + ".inp"), out = read_all(gguf + ".out");
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

enum class RoundTrip { Bpe, Spm, None };

// All of llama.cpp's vectors for one vocabulary must match.
void check_vectors(const std::string& name, const std::string& model, RoundTrip rt) {
  auto f = gguf::File::open(vocab_path(name));
  auto tok = make_tokenizer(*f);
  EXPECT_EQ(tok->vocab().model, model);
  std::vector<Case> cases = load_cases(vocab_path(name));
  EXPECT_GE(cases.size(), 40u);
  int pass = 0;
  for (const Case& c : cases) {
    std::vector<int32_t> got = tok->encode(c.text, /*add_bos=*/false, /*parse_special=*/false);
    if (got == c.ids) pass++;
    else ADD_FAILURE() << name << ": '" << c.text << "'\n  want" << show(c.ids) << "\n  got " << show(got);
    if (rt == RoundTrip::Bpe) {  // byte-level or byte fallback: every byte of valid UTF-8 comes back
      EXPECT_EQ(detokenize(*tok, got), c.text) << name << ": round trip of '" << c.text << "'";
    }
    if (rt == RoundTrip::Spm) {  // the BOS strips exactly the dummy prefix
      EXPECT_EQ(detokenize(*tok, tok->encode(c.text, true)), c.text) << name << ": round trip of '" << c.text << "'";
    }
  }
  EXPECT_EQ(pass, int(cases.size()));
  std::printf("%s: %d/%zu vectors pass\n", name.c_str(), pass, cases.size());
}

struct VocabExpect {
  const char* vocab;
  std::vector<std::pair<const char*, std::vector<int32_t>>> ids;  // per kExtraTexts name
  const char* chat;                                               // with control tokens
  std::vector<int32_t> chat_ids;
  std::vector<int32_t> bos_ids;  // "Hello world" with BOS (as the vocabulary asks)
};

struct PreExpect {
  const char* pre;  // "" : no tokenizer.ggml.pre key
  std::vector<int32_t> ids0, ids1;
};

// The texts, and for each vocabulary the ids llama.cpp gives them.
const std::vector<std::pair<const char*, const char*>> kExtraTexts = {
    {"chinese", "我想在苹果公司工作，薪水是1314151元。"},
    {"japanese", "日本語のテキストです。カタカナとひらがな、漢字！"},
    {"emoji", "I ❤️ 🦙s 👍🏽 🇺🇸 😶‍🌫️!"},
    {"code", "def fib(n):\n\tif n < 2:\n\t\treturn n  # base\n\treturn fib(n-1)+fib(n-2)\n"},
    {"whitespace", "a  b   c\t\t d\n\n\n  e    \n"},
    {"digits", "1 12 123 1234 12345 123456789 3.14159 1,000,000"},
    {"mixed", "Zürich — Ελλάδα, Москва and नमस्ते: it's DONE'll"},
};

const std::vector<VocabExpect> kExpect = {
    {"gpt-2",
     {
         {"chinese", {22755, 239, 46349, 111, 28839, 101, 164, 233, 117, 162, 252, 250, 17739, 105, 20998, 116, 32432, 98, 43291, 171, 120, 234, 164, 244, 103, 36365, 112, 42468, 1485, 1415, 24309, 17739, 225, 16764}},
         {"japanese", {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 30640, 33623, 16764, 21763, 23376, 21763, 26229, 30201, 2515, 110, 36853, 35585, 26945, 23513, 162, 120, 95, 27764, 245, 171, 120, 223}},
         {"emoji", {40, 43074, 97, 37929, 12520, 99, 247, 82, 50169, 235, 8582, 237, 121, 12520, 229, 118, 8582, 229, 116, 30325, 114, 447, 235, 8582, 234, 104, 37929, 0}},
         {"code", {4299, 12900, 7, 77, 2599, 198, 197, 361, 299, 1279, 362, 25, 198, 197, 197, 7783, 299, 220, 1303, 2779, 198, 197, 7783, 12900, 7, 77, 12, 16, 47762, 69, 571, 7, 77, 12, 17, 8, 198}},
         {"whitespace", {64, 220, 275, 220, 220, 269, 197, 197, 288, 628, 198, 220, 304, 220, 220, 220, 220, 198}},
         {"digits", {16, 1105, 17031, 1105, 2682, 17031, 2231, 17031, 2231, 3134, 4531, 513, 13, 1415, 19707, 352, 11, 830, 11, 830}},
         {"mixed", {57, 9116, 7527, 851, 7377, 243, 39377, 39377, 138, 105, 138, 112, 17394, 11, 12466, 250, 15166, 21727, 31583, 38857, 16142, 290, 28225, 101, 11976, 106, 11976, 116, 24231, 235, 11976, 97, 24231, 229, 25, 340, 338, 360, 11651, 1183}},
     },
     "<|endoftext|>Hi<|endoftext|>", {50256, 17250, 50256},
     {15496, 995}},
    {"llama-bpe",
     {
         {"chinese", {37046, 101067, 19000, 127392, 74318, 102301, 3922, 103013, 103, 53610, 21043, 9263, 18136, 16, 24186, 1811}},
         {"japanese", {102433, 102158, 16144, 57933, 62903, 71634, 38641, 1811, 71493, 47307, 71493, 96452, 19732, 104328, 33503, 29295, 26854, 5486, 115953, 19113, 6447}},
         {"emoji", {40, 71570, 31643, 11410, 99, 247, 82, 62904, 235, 9468, 237, 121, 11410, 229, 118, 9468, 229, 116, 27623, 114, 102470, 9468, 234, 104, 31643, 0}},
         {"code", {755, 16178, 1471, 997, 748, 308, 366, 220, 17, 512, 197, 862, 308, 220, 674, 2385, 198, 862, 16178, 1471, 12, 16, 7405, 76426, 1471, 12, 17, 340}},
         {"whitespace", {64, 220, 293, 256, 272, 298, 294, 1432, 220, 384, 1084}},
         {"digits", {16, 220, 717, 220, 4513, 220, 4513, 19, 220, 4513, 1774, 220, 4513, 10961, 16474, 220, 18, 13, 9335, 2946, 220, 16, 11, 931, 11, 931}},
         {"mixed", {57, 5297, 718, 2001, 118681, 11, 116050, 323, 100282, 88344, 79468, 100365, 35470, 25, 433, 596, 55785, 3358}},
     },
     "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>", {128006, 882, 128007, 271, 13347, 0, 128009},
     {128000, 9906, 1917}},
    {"qwen2",
     {
         {"chinese", {104100, 18493, 104167, 73218, 99257, 3837, 116987, 20412, 16, 18, 16, 19, 16, 20, 16, 23305, 1773}},
         {"japanese", {101059, 102819, 15767, 56833, 61803, 70534, 37541, 1773, 70393, 46207, 70393, 95352, 19182, 124877, 32403, 28195, 25770, 5373, 110007, 18600, 6313}},
         {"emoji", {40, 70470, 30543, 11162, 99, 247, 82, 61804, 235, 145375, 11162, 229, 118, 145383, 26525, 114, 378, 235, 149921, 30543, 0}},
         {"code", {750, 15801, 1445, 982, 743, 308, 366, 220, 17, 510, 197, 853, 308, 220, 671, 2331, 198, 853, 15801, 1445, 12, 16, 7257, 75326, 1445, 12, 17, 340}},
         {"whitespace", {64, 220, 293, 256, 272, 298, 294, 1406, 220, 384, 1066}},
         {"digits", {16, 220, 16, 17, 220, 16, 17, 18, 220, 16, 17, 18, 19, 220, 16, 17, 18, 19, 20, 220, 16, 17, 18, 19, 20, 21, 22, 23, 24, 220, 18, 13, 16, 19, 16, 20, 24, 220, 16, 11, 15, 15, 15, 11, 15, 15, 15}},
         {"mixed", {57, 5186, 713, 1959, 7851, 243, 33486, 33486, 74134, 85386, 18945, 11, 137639, 323, 14925, 101, 87244, 78368, 30484, 97, 34370, 25, 432, 594, 54685, 3278}},
     },
     "<|im_start|>user\nHi!<|im_end|>\n", {151644, 872, 198, 13048, 0, 151645, 198},
     {9707, 1879}},
    {"deepseek-llm",
     {
         {"chinese", {19017, 612, 17084, 2814, 2681, 19304, 19297, 1850, 504, 16, 18, 16, 19, 16, 20, 16, 2359, 398}},
         {"japanese", {10162, 13072, 239, 28213, 8550, 215, 9156, 242, 50145, 52462, 57790, 46891, 398, 9156, 104, 93491, 9156, 104, 8550, 219, 58372, 7217, 110, 9156, 218, 67118, 73138, 537, 3032, 95, 4416, 2160}},
         {"emoji", {40, 207, 75655, 46713, 12356, 99, 234, 82, 59948, 222, 10044, 224, 121, 12356, 216, 118, 10044, 216, 116, 33701, 114, 350, 222, 10044, 221, 104, 46713, 0}},
         {"code", {1558, 12577, 7, 77, 1780, 185, 2956, 291, 459, 207, 17, 25, 185, 184, 3420, 291, 207, 1501, 3252, 185, 3420, 12577, 7, 77, 12, 16, 9759, 36988, 7, 77, 12, 17, 8, 185}},
         {"whitespace", {64, 207, 270, 243, 258, 486, 263, 185, 185, 185, 207, 301, 251, 185}},
         {"digits", {16, 207, 16, 17, 207, 16, 17, 18, 207, 16, 17, 18, 19, 207, 16, 17, 18, 19, 20, 207, 16, 17, 18, 19, 20, 21, 22, 23, 24, 207, 18, 13, 16, 19, 16, 20, 24, 207, 16, 11, 15, 15, 15, 11, 15, 15, 15}},
         {"mixed", {57, 100014, 9581, 207, 1972, 7558, 230, 19236, 19236, 30791, 36173, 10812, 11, 41955, 285, 207, 77982, 96984, 80260, 52539, 97, 63087, 25, 359, 6, 82, 414, 12359, 6, 647}},
     },
     "<｜begin▁of▁sentence｜>User: Hi!\n\n", {100000, 5726, 25, 11598, 0, 185, 185},
     {100000, 17464, 1843}},
    {"deepseek-coder",
     {
         {"chinese", {19100, 608, 17144, 2804, 2668, 19385, 19377, 1843, 502, 16, 18, 16, 19, 16, 20, 16, 2350, 397}},
         {"japanese", {10169, 13099, 239, 28367, 8553, 215, 9158, 242, 9158, 117, 8553, 217, 7222, 100, 7222, 234, 397, 9158, 104, 9158, 123, 9158, 104, 8553, 219, 7222, 101, 7222, 110, 9158, 218, 7222, 221, 7222, 103, 534, 3022, 95, 4403, 2149}},
         {"emoji", {40, 207, 156, 238, 97, 169, 116, 224, 12394, 99, 234, 82, 12394, 226, 222, 10047, 224, 121, 12394, 216, 118, 10047, 216, 116, 12394, 233, 114, 350, 222, 10047, 221, 104, 169, 116, 224, 0}},
         {"code", {1551, 12606, 7, 77, 1772, 185, 2944, 291, 8086, 17, 25, 185, 184, 3404, 291, 207, 1494, 3240, 185, 3404, 12606, 7, 77, 12, 16, 8, 10, 69, 551, 7, 77, 12, 17, 8, 185}},
         {"whitespace", {64, 207, 270, 243, 258, 459, 263, 185, 185, 185, 207, 300, 251, 185}},
         {"digits", {16, 207, 16, 17, 207, 16, 17, 18, 207, 16, 17, 18, 19, 207, 16, 17, 18, 19, 20, 207, 16, 17, 18, 19, 20, 21, 22, 23, 24, 207, 18, 13, 16, 19, 16, 20, 24, 207, 16, 11, 15, 15, 15, 11, 15, 15, 15}},
         {"mixed", {57, 32009, 9581, 207, 1962, 7559, 230, 19320, 19320, 30955, 136, 112, 10829, 11, 13380, 28984, 285, 207, 10073, 101, 10073, 106, 10073, 116, 23516, 222, 10073, 97, 23516, 216, 25, 359, 6, 82, 413, 12381, 6, 642}},
     },
     "<｜begin▁of▁sentence｜>def f():<｜end▁of▁sentence｜>", {32013, 1551, 267, 10942, 32014},
     {32013, 17535, 1835}},
    {"falcon",
     {
         {"chinese", {50087, 123, 2727, 9268, 129, 12575, 51187, 32022, 133, 234, 181, 132, 218, 42274, 115, 14283, 2364, 17419, 30137, 28, 22562, 1258}},
         {"japanese", {24280, 30816, 236, 24693, 6953, 212, 7568, 239, 7568, 129, 42069, 42997, 40210, 1258, 7568, 116, 7568, 135, 7568, 116, 6953, 216, 45407, 5288, 122, 63644, 51249, 44785, 4443, 172, 132, 107, 18830, 181, 132, 207}},
         {"emoji", {52, 52212, 3346, 111, 231, 94, 34994, 219, 36680, 133, 3346, 213, 130, 40833, 128, 8196, 126, 283, 219, 48778, 116, 13392, 12}},
         {"code", {3071, 10045, 19, 89, 2045, 193, 192, 340, 287, 204, 39, 204, 29, 37, 1132, 192, 2970, 287, 258, 14, 2995, 193, 192, 2970, 10045, 19, 89, 24, 28, 28250, 81, 518, 19, 89, 24, 29, 20, 193}},
         {"whitespace", {76, 204, 262, 258, 253, 663, 265, 1001, 1212, 293, 296, 193}},
         {"digits", {28, 204, 928, 204, 10963, 204, 10963, 31, 204, 10963, 2617, 204, 10963, 27681, 43380, 204, 30, 25, 18900, 5587, 204, 28, 23, 1321, 23, 1321}},
         {"mixed", {69, 137, 132, 7936, 204, 791, 8542, 227, 33031, 33031, 61068, 51855, 15039, 23, 5052, 234, 150, 134, 47043, 150, 122, 6279, 273, 30483, 113, 10735, 118, 10735, 128, 52672, 10735, 109, 24469, 213, 37, 334, 18, 94, 361, 11999, 18, 567}},
     },
     ">>QUESTION<<Hi?>>ANSWER<<", {6, 5516, 42, 5},
     {9856, 1079}},
    {"mpt",
     {
         {"chinese", {15367, 41197, 13610, 38672, 119, 26354, 35601, 5941, 118, 41869, 21275, 6238, 164, 233, 105, 47937, 12105, 1012, 1047, 18795, 44114, 4340}},
         {"japanese", {49868, 19119, 241, 3917, 28656, 33548, 38206, 20776, 4340, 28779, 20353, 28779, 47434, 6088, 765, 112, 11039, 6957, 6686, 4746, 45387, 97, 30886, 26680}},
         {"emoji", {42, 3384, 240, 99, 171, 118, 226, 22692, 101, 236, 84, 22692, 228, 224, 14931, 226, 123, 22692, 218, 120, 14931, 218, 118, 49042, 116, 325, 224, 14931, 223, 106, 171, 118, 226, 2}},
         {"code", {1545, 5713, 9, 79, 2262, 187, 186, 338, 295, 654, 374, 27, 996, 186, 2309, 295, 50276, 4, 2613, 187, 186, 2309, 5713, 9, 79, 14, 18, 8744, 36240, 9, 79, 14, 19, 10, 187}},
         {"whitespace", {66, 50276, 67, 50275, 68, 623, 277, 2756, 50276, 70, 50274, 187}},
         {"digits", {18, 1249, 15567, 1249, 1706, 1249, 16767, 1249, 16767, 43784, 495, 15, 1047, 17220, 337, 13, 933, 13, 933}},
         {"mixed", {59, 3090, 5969, 1905, 29830, 29704, 8348, 10227, 2141, 13, 29280, 1068, 10453, 22704, 285, 6280, 103, 32191, 28733, 17665, 23936, 15472, 27, 352, 434, 399, 11147, 1833}},
     },
     "<|endoftext|>Hi<|padding|>", {0, 12764, 1},
     {12092, 1533}},
    {"starcoder",
     {
         {"chinese", {4995, 13379, 2924, 11071, 155, 5428, 24853, 17823, 1140, 43703, 141, 20525, 2327, 54, 56, 54, 57, 54, 58, 54, 9578, 1469}},
         {"japanese", {37357, 32586, 2535, 10404, 14279, 12972, 16547, 1469, 19539, 11067, 19539, 27362, 5683, 720, 148, 10079, 5652, 6605, 2626, 18730, 133, 5211, 11251}},
         {"emoji", {78, 36425, 135, 13878, 5954, 137, 271, 120, 26095, 44155, 159, 5954, 253, 156, 23851, 154, 18445, 152, 46030, 45022, 142, 13878, 38}},
         {"code", {610, 28319, 45, 115, 731, 222, 221, 344, 329, 350, 244, 55, 63, 376, 221, 620, 329, 244, 607, 1712, 222, 221, 620, 28319, 45, 115, 50, 54, 7308, 26487, 45, 115, 50, 55, 46, 222}},
         {"whitespace", {102, 244, 342, 280, 300, 313, 362, 8886, 503, 29836}},
         {"digits", {54, 244, 54, 55, 244, 54, 55, 56, 244, 54, 55, 56, 57, 244, 54, 55, 56, 57, 58, 244, 54, 55, 56, 57, 58, 59, 60, 61, 62, 244, 56, 51, 54, 57, 54, 58, 62, 244, 54, 49, 53, 53, 53, 49, 53, 53, 53}},
         {"mixed", {95, 7258, 1211, 12034, 8050, 267, 18151, 18151, 34944, 31803, 12249, 49, 27450, 11723, 3296, 3717, 1147, 480, 14203, 139, 41332, 47757, 20933, 37399, 32865, 63, 580, 1200, 40238, 4650}},
     },
     "<fim_prefix>def f(<fim_suffix>)<fim_middle>", {1, 610, 315, 45, 3, 46, 2},
     {8302, 5810}},
    {"bert-bge",
     {
         {"chinese", {1855, 100, 100, 100, 100, 1772, 1791, 100, 100, 1989, 100, 1893, 100, 14677, 23632, 22203, 1769, 1636}},
         {"japanese", {1864, 1876, 1950, 1671, 30239, 30227, 30233, 30240, 30191, 30184, 1636, 1700, 30235, 30226, 30241, 30192, 30199, 30211, 30177, 30193, 1635, 1904, 100, 1986}},
         {"emoji", {1045, 100, 100, 100, 100, 100, 999}},
         {"code", {13366, 10882, 2497, 1006, 1050, 1007, 1024, 2065, 1050, 1026, 1016, 1024, 2709, 1050, 1001, 2918, 2709, 10882, 2497, 1006, 1050, 1011, 1015, 1007, 1009, 10882, 2497, 1006, 1050, 1011, 1016, 1007}},
         {"whitespace", {1037, 1038, 1039, 1040, 1041}},
         {"digits", {1015, 2260, 13138, 13138, 2549, 13138, 19961, 13138, 19961, 2575, 2581, 2620, 2683, 1017, 1012, 15471, 28154, 1015, 1010, 2199, 1010, 2199}},
         {"mixed", {10204, 1517, 1159, 29727, 29727, 14608, 29722, 14608, 1010, 1191, 14150, 29747, 23925, 25529, 10260, 1998, 1327, 29867, 29874, 29859, 1024, 2009, 1005, 1055, 2589, 1005, 2222}},
     },
     "[CLS] hello [SEP] world [MASK]", {101, 7592, 102, 2088, 103},
     {101, 7592, 2088, 102}},
    {"gemma-4",
     {
         {"chinese", {62133, 237075, 68004, 10715, 11700, 236900, 241763, 237556, 237026, 236770, 236800, 236770, 236812, 236770, 236810, 236770, 237798, 236924}},
         {"japanese", {94951, 236945, 95830, 3652, 236924, 131906, 123729, 237032, 239043, 155159, 237050, 236951, 201637, 237354}},
         {"emoji", {236777, 64813, 236743, 478, 397, 404, 391, 236751, 103712, 242713, 236743, 243721, 243912, 236743, 247717, 237243, 248989, 238178, 236888}},
         {"code", {2063, 10779, 236769, 236749, 1473, 107, 255968, 584, 538, 655, 236743, 236778, 236787, 107, 255969, 2060, 538, 138, 236865, 3225, 107, 255968, 2060, 10779, 236769, 236749, 236772, 236770, 7064, 73368, 236769, 236749, 236772, 236778, 236768, 107}},
         {"whitespace", {236746, 138, 236763, 139, 236755, 255969, 513, 109, 138, 236744, 140, 107}},
         {"digits", {236770, 236743, 236770, 236778, 236743, 236770, 236778, 236800, 236743, 236770, 236778, 236800, 236812, 236743, 236770, 236778, 236800, 236812, 236810, 236743, 236770, 236778, 236800, 236812, 236810, 236825, 236832, 236828, 236819, 236743, 236800, 236761, 236770, 236812, 236770, 236810, 236819, 236743, 236770, 236764, 236771, 236771, 236771, 236764, 236771, 236771, 236771}},
         {"mixed", {236953, 105214, 2192, 230705, 236764, 99776, 532, 173040, 236787, 625, 236789, 236751, 130215, 236789, 859}},
     },
     "<|turn>user\nHi!<turn|>\n<|turn>model\n", {105, 2364, 107, 10979, 236888, 106, 107, 105, 4368, 107},
     {2, 9259, 1902}},
};

const char* const kPreTexts[2] = {"Hello WORLD, iPhone's JSONParser 12345678 3.14½  \n\n\t\tx",
                                  "日本語のテキスト ｗｗ　かな 1234567 <IMGIMGABZ> été 🦙!!"};
const std::vector<PreExpect> kPreExpect = {
    {"", {15496, 29564, 11, 7133, 6, 82, 19449, 46677, 220, 10163, 29228, 3695, 220, 18, 13, 1415, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 10163, 29228, 22, 220, 27, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"default", {15496, 29564, 11, 7133, 6, 82, 19449, 46677, 220, 10163, 29228, 3695, 220, 18, 13, 1415, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 10163, 29228, 22, 220, 27, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"llama3", {50256, 15496, 29564, 11, 7133, 338, 19449, 46677, 220, 10163, 29228, 3695, 220, 18, 13, 1415, 23141, 220, 220, 628, 197, 197, 87}, {50256, 33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 10163, 29228, 22, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"deepseek-v3", {15496, 29564, 11, 7133, 338, 19449, 46677, 220, 10163, 29228, 3695, 220, 18, 13, 1415, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 10163, 29228, 22, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"tekken", {50256, 15496, 29564, 11, 1312, 6132, 338, 19449, 46677, 220, 16, 17, 18, 19, 20, 21, 22, 23, 220, 18, 13, 16, 19, 23141, 220, 220, 628, 197, 197, 87}, {50256, 33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 16, 17, 18, 19, 20, 21, 22, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"gpt-4o", {15496, 29564, 11, 1312, 6132, 338, 19449, 46677, 220, 10163, 29228, 3695, 220, 18, 13, 1415, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 10163, 29228, 22, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"chameleon", {50256, 15496, 29564, 11, 7133, 6, 82, 19449, 46677, 220, 16, 17, 18, 19, 20, 21, 22, 23, 220, 18, 13, 16, 19, 23141, 220, 220, 198, 198, 197, 197, 87}, {50256, 33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 16, 17, 18, 19, 20, 21, 22, 220, 27, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 0, 0}},
    {"tiny_aya", {15496, 29564, 11, 7133, 338, 19449, 46677, 220, 1065, 27712, 30924, 220, 18, 13, 1415, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 16, 24409, 20, 3134, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"superbpe", {15496, 29564, 11, 7133, 338, 19449, 46677, 220, 1065, 27712, 30924, 220, 18, 13, 1415, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 16, 24409, 20, 3134, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"exaone-moe", {15496, 29564, 11, 7133, 338, 19449, 46677, 220, 16, 17, 18, 19, 20, 21, 22, 23, 220, 18, 13, 16, 19, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 16, 17, 18, 19, 20, 21, 22, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"jais-2", {15496, 29564, 11, 7133, 338, 19449, 46677, 220, 10163, 29228, 3695, 220, 18, 13, 1415, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 10163, 29228, 22, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"bloom", {15496, 29564, 11, 7133, 338, 19449, 46677, 17031, 2231, 30924, 513, 13, 1415, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 17031, 2231, 3134, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"seed-coder", {15496, 29564, 11, 7133, 338, 19449, 46677, 220, 16, 17, 18, 19, 20, 21, 22, 23, 220, 18, 13, 16, 19, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 16, 17, 18, 19, 20, 21, 22, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"deepseek-llm", {15496, 29564, 11, 7133, 6, 82, 19449, 46677, 220, 10163, 2231, 30924, 220, 18, 13, 1415, 23141, 220, 220, 198, 198, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 10163, 2231, 3134, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 38251, 83, 2634, 12520, 99, 247, 3228}},
    {"qwen35", {15496, 29564, 11, 7133, 338, 19449, 46677, 220, 16, 17, 18, 19, 20, 21, 22, 23, 220, 18, 13, 16, 19, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 16, 17, 18, 19, 20, 21, 22, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"afmoe", {15496, 29564, 11, 7133, 338, 19449, 46677, 220, 1065, 27712, 30924, 220, 18, 13, 1415, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 16, 24409, 20, 3134, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"kimi-k2", {15496, 29564, 11, 7133, 338, 19449, 46677, 220, 10163, 29228, 3695, 220, 18, 13, 1415, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 10163, 29228, 22, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
    {"youtu", {15496, 29564, 11, 7133, 338, 19449, 46677, 220, 16, 17, 18, 19, 20, 21, 22, 23, 220, 18, 13, 16, 19, 23141, 220, 220, 628, 197, 197, 87}, {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 27332, 121, 245, 171, 121, 245, 5099, 222, 27370, 26945, 220, 16, 17, 18, 19, 20, 21, 22, 1279, 3955, 38, 3955, 38, 6242, 57, 29, 220, 25125, 2634, 12520, 99, 247, 3228}},
};

}  // namespace

// ---- llama.cpp's vectors, one test per vocabulary ---------------------------

TEST(TokenizerVocabs, Gpt2) { check_vectors("gpt-2", "gpt2", RoundTrip::Bpe); }
TEST(TokenizerVocabs, LlamaBpe) { check_vectors("llama-bpe", "gpt2", RoundTrip::Bpe); }
TEST(TokenizerVocabs, Qwen2) { check_vectors("qwen2", "gpt2", RoundTrip::Bpe); }
TEST(TokenizerVocabs, DeepseekLlm) { check_vectors("deepseek-llm", "gpt2", RoundTrip::Bpe); }
TEST(TokenizerVocabs, DeepseekCoder) { check_vectors("deepseek-coder", "gpt2", RoundTrip::Bpe); }
TEST(TokenizerVocabs, Falcon) { check_vectors("falcon", "gpt2", RoundTrip::Bpe); }
TEST(TokenizerVocabs, Mpt) { check_vectors("mpt", "gpt2", RoundTrip::Bpe); }
TEST(TokenizerVocabs, Starcoder) { check_vectors("starcoder", "gpt2", RoundTrip::Bpe); }
TEST(TokenizerVocabs, BertBge) { check_vectors("bert-bge", "bert", RoundTrip::None); }
TEST(TokenizerVocabs, LlamaSpm) { check_vectors("llama-spm", "llama", RoundTrip::Spm); }
TEST(TokenizerVocabs, Phi3) { check_vectors("phi-3", "llama", RoundTrip::Spm); }
TEST(TokenizerVocabs, Gemma4) { check_vectors("gemma-4", "gemma4", RoundTrip::Bpe); }

// ---- extra texts, ids from llama-tokenize -------------------------------------

TEST(TokenizerVocabs, ExtraTextsMatchLlamaTokenize) {
  for (const VocabExpect& e : kExpect) {
    SCOPED_TRACE(e.vocab);
    auto f = gguf::File::open(vocab_path(e.vocab));
    auto tok = make_tokenizer(*f);
    ASSERT_EQ(e.ids.size(), kExtraTexts.size());
    for (size_t i = 0; i < kExtraTexts.size(); i++) {
      const auto& [name, text] = kExtraTexts[i];
      ASSERT_STREQ(e.ids[i].first, name);
      EXPECT_EQ(tok->encode(text, false, true), e.ids[i].second) << e.vocab << " / " << name;
      if (tok->vocab().model == "gpt2" || tok->vocab().model == "gemma4") {
        EXPECT_EQ(detokenize(*tok, tok->encode(text, false)), text) << e.vocab << " / " << name;
      }
    }
    // Control tokens are parsed only with parse_special; user-defined ones always.
    EXPECT_EQ(tok->encode(e.chat, false, true), e.chat_ids) << e.vocab << " chat";
    EXPECT_NE(tok->encode(e.chat, false, false), e.chat_ids) << e.vocab << " chat without parse_special";
    EXPECT_EQ(tok->encode("Hello world", true, true), e.bos_ids) << e.vocab << " with BOS";
  }
}

// llama.cpp's end-of-generation sets and add_bos decisions for these files.
TEST(TokenizerVocabs, EndOfGenerationAndBos) {
  struct Want {
    const char* vocab;
    std::vector<int32_t> eog;
    bool add_bos;
  };
  const Want wants[] = {
      {"gpt-2", {50256}, false},          {"llama-bpe", {128001, 128009}, true},
      {"qwen2", {128247, 151643, 151645}, false},  // 128247 is "</s>", an EOG text for llama.cpp
      {"deepseek-llm", {100001}, true},   {"deepseek-coder", {32014}, true},
      {"falcon", {11}, false},            {"mpt", {0}, false},
      {"starcoder", {0, 4}, false},       {"bert-bge", {0}, true},  // [PAD] counts as a FIM pad
      {"gemma-4", {1, 50, 106}, true},  // <eos>, <|tool_response>, <turn|>; "</s>" is not
  };
  for (const Want& w : wants) {
    auto f = gguf::File::open(vocab_path(w.vocab));
    auto tok = make_tokenizer(*f);
    const Vocab& v = tok->vocab();
    EXPECT_EQ(v.eog_ids, w.eog) << w.vocab;
    EXPECT_EQ(v.add_bos, w.add_bos) << w.vocab;
    for (int32_t id : w.eog) {
      EXPECT_EQ(v.type(id), TokenType::Control) << w.vocab << " token " << id;
      EXPECT_EQ(tok->token_to_piece(id), "") << w.vocab << " token " << id;
    }
  }
}

// ---- BPE pre-tokenizers without a vocabulary of their own ----------------------

namespace {

// The GPT-2 vocabulary with tokenizer.ggml.pre set to `pre` ("" removes it).
std::unique_ptr<Tokenizer> gpt2_with_pre(const gguf::File& base, const std::string& pre) {
  gguf::Writer w;
  for (const auto& [k, v] : base.metadata())
    if (k != "tokenizer.ggml.pre") w.set(k, v);
  if (!pre.empty()) w.set("tokenizer.ggml.pre", gguf::Value::of_string(pre));
  std::vector<uint8_t> bytes = w.to_bytes();
  auto f = gguf::File::parse(bytes.data(), bytes.size(), "gpt2-" + pre + ".gguf");
  return make_tokenizer(*f);
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_HAS(haystack, needle)                                                       \
  do {                                                                                     \
    std::string h_ = (haystack);                                                           \
    EXPECT_NE(h_.find(needle), std::string::npos) << "'" << (needle) << "' not in: " << h_; \
  } while (0)

}  // namespace

TEST(TokenizerVocabs, PreTokenizerVariants) {
  auto base = gguf::File::open(vocab_path("gpt-2"));
  for (const PreExpect& p : kPreExpect) {
    SCOPED_TRACE(std::string("pre = '") + p.pre + "'");
    auto tok = gpt2_with_pre(*base, p.pre);
    EXPECT_EQ(tok->encode(kPreTexts[0], true, true), p.ids0);
    EXPECT_EQ(tok->encode(kPreTexts[1], true, true), p.ids1);
    for (const char* t : kPreTexts) EXPECT_EQ(detokenize(*tok, tok->encode(t, false)), t);
  }
}

// kimi-k2 is llama.cpp's hand-written splitter, not Kimi's regex as written:
// Han runs apart from other letters, letter runs of any case (JSONParser is
// one word), marks outside words, digits in threes. Ids from llama-tokenize
// on the GPT-2 vocabulary with tokenizer.ggml.pre = "kimi-k2".
TEST(TokenizerVocabs, KimiK2Splitter) {
  auto base = gguf::File::open(vocab_path("gpt-2"));
  auto tok = gpt2_with_pre(*base, "kimi-k2");
  const std::string han = "\xE6\x88\x91\xE6\x83\xB3\xE5\x9C\xA8" "apple" "\xE5\xB7\xA5\xE4\xBD\x9C" "1314151"
                          "\xE5\xA4\xA9\xEF\xBC\x8C" "Don't I'M na\xC3\xAFve e\xCC\x81t\xC3\xA9 \xE4\xB8\x80\xE3\x90\x80"
                          "\xF0\xA0\x80\x80x \r\n\r\n  'll'VE \xE6\x9D\xB1\xE4\xBA\xAC" "Tokyo";
  const std::string marks = "a\xCC\x80" "b \xCC\x81x  !!\n\n  ?? \t\n \xC2\xA0\xE3\x80\x80y";
  EXPECT_EQ(tok->encode(han, false), (std::vector<int32_t>{22755, 239, 46349, 111, 28839, 101, 18040, 32432, 98, 43291,
                                                           22042, 35038, 16, 25465, 171, 120, 234, 3987, 470, 314, 6, 44,
                                                           41492, 304, 136, 223, 83, 2634, 220, 31660, 159, 238, 222, 172,
                                                           254, 222, 222, 87, 220, 201, 198, 201, 198, 220, 705, 297, 6,
                                                           6089, 220, 30266, 109, 12859, 105, 19042, 8226}));
  EXPECT_EQ(tok->encode(marks, false),
            (std::vector<int32_t>{64, 136, 222, 65, 220, 136, 223, 87, 220, 37867, 628, 220, 19153, 220, 197, 198, 5624,
                                  5099, 222, 88}));
  for (const std::string& t : {han, marks}) EXPECT_EQ(detokenize(*tok, tok->encode(t, false)), t);
  EXPECT_FALSE(tok->vocab().add_bos);
}

// llama.cpp loads a kimi-k2 vocabulary without merges: every byte stays a
// token of its own (and one without a token is dropped).
TEST(TokenizerVocabs, KimiK2WithoutMerges) {
  gguf::Writer w;
  w.set("tokenizer.ggml.model", gguf::Value::of_string("gpt2"));
  w.set("tokenizer.ggml.pre", gguf::Value::of_string("kimi-k2"));
  std::vector<gguf::Value> toks;
  for (const char* t : {"a", "b", "ab"}) toks.push_back(gguf::Value::of_string(t));
  w.set("tokenizer.ggml.tokens", gguf::Value::of_array(gguf::ValueType::STRING, std::move(toks)));
  std::vector<uint8_t> b = w.to_bytes();
  auto f = gguf::File::parse(b.data(), b.size(), "kimi.gguf");
  auto tok = make_tokenizer(*f);
  EXPECT_EQ(tok->encode("ab a", false), (std::vector<int32_t>{0, 1, 0}));
}

TEST(TokenizerVocabs, UnknownOrUnsupportedPreTokenizer) {
  auto base = gguf::File::open(vocab_path("gpt-2"));
  std::string e = error_of([&] { gpt2_with_pre(*base, "no-such-pre"); });
  EXPECT_HAS(e, "unknown BPE pre-tokenizer tokenizer.ggml.pre = 'no-such-pre'");
  EXPECT_HAS(e, "llama-bpe");  // the message lists the known names
  EXPECT_EQ(e.find("not supported yet"), std::string::npos) << "an unknown name is not 'not supported yet'";
  e = error_of([&] { gpt2_with_pre(*base, "sarvam-moe"); });
  EXPECT_HAS(e, "BPE pre-tokenizer 'sarvam-moe' is not supported yet; pass token ids with --tokens");
}

// ---- special tokens, streaming -------------------------------------------------

TEST(TokenizerVocabs, UserDefinedTokensAlwaysSplit) {
  // MPT has user-defined tokens made of runs of spaces; deepseek-coder has
  // raw Latin-1 characters as user-defined tokens (ids from llama-tokenize).
  auto f = gguf::File::open(vocab_path("deepseek-coder"));
  auto tok = make_tokenizer(*f);
  int32_t o_tilde = tok->vocab().find("\xC3\xB5");  // "õ"
  ASSERT_GE(o_tilde, 0);
  EXPECT_EQ(tok->vocab().type(o_tilde), TokenType::UserDefined);
  std::vector<int32_t> ids = tok->encode("a\xC3\xB5" "b", false, false);
  EXPECT_NE(std::find(ids.begin(), ids.end(), o_tilde), ids.end());
  EXPECT_EQ(detokenize(*tok, ids), "a\xC3\xB5" "b");
}

TEST(TokenizerVocabs, StreamingDetokenizerHoldsPartialUtf8) {
  auto f = gguf::File::open(vocab_path("gpt-2"));
  auto tok = make_tokenizer(*f);
  // GPT-2 has no token for the llama emoji: three byte-level pieces, the
  // first two of which are not whole UTF-8 (ids from llama-tokenize).
  std::vector<int32_t> ids = tok->encode("\xF0\x9F\xA6\x99", false);
  ASSERT_EQ(ids, (std::vector<int32_t>{8582, 99, 247}));
  EXPECT_EQ(tok->token_to_piece(8582), "\xF0\x9F");
  Detokenizer d(*tok);
  EXPECT_EQ(d.push(8582), "");
  EXPECT_EQ(d.push(99), "");
  EXPECT_EQ(d.push(247), "\xF0\x9F\xA6\x99");
  EXPECT_EQ(d.flush(), "");
  // Every prefix of a stream comes out as whole characters only.
  const std::string text = "Zürich 日本語 🙂🦙 done";
  std::string out;
  Detokenizer s(*tok);
  for (int32_t id : tok->encode(text, false)) {
    out += s.push(id);
    EXPECT_EQ(text.compare(0, out.size(), out), 0);
    if (out.size() < text.size()) {  // never stops inside a character
      EXPECT_NE(uint8_t(text[out.size()]) & 0xC0, 0x80) << "after " << out.size() << " bytes";
    }
  }
  EXPECT_EQ(out + s.flush(), text);
  EXPECT_EQ(tok->token_to_piece(50256), "");  // <|endoftext|> is control
  EXPECT_THROW(tok->token_to_piece(50257), Error);
}

TEST(TokenizerVocabs, WordPieceFraming) {
  auto f = gguf::File::open(vocab_path("bert-bge"));
  auto tok = make_tokenizer(*f);
  const Vocab& v = tok->vocab();
  EXPECT_EQ(v.bos, 101);
  EXPECT_EQ(v.sep, 102);
  EXPECT_EQ(v.unk, 100);
  EXPECT_TRUE(v.lowercase);
  EXPECT_TRUE(v.strip_accents);
  std::vector<int32_t> ids = tok->encode("Hello, World!", true);
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), 101);
  EXPECT_EQ(ids.back(), 102);
  // Word-initial pieces carry the phantom space; [CLS] / [SEP] print nothing.
  EXPECT_EQ(detokenize(*tok, ids), " hello , world !");
  EXPECT_EQ(tok->encode("Äpfel", false), tok->encode("apfel", false));  // accents stripped, lowercased
}

// Gemma 4: BPE over "▁"-escaped text, split only into runs of newlines and
// the rest, merges over UTF-8 characters, <0xHH> byte fallback. Where the
// rule alone fixes the ids they are derived here from the vocabulary; the
// other ids are from llama-tokenize (--no-bos) on the same file.
TEST(TokenizerVocabs, Gemma4SentencePieceStyle) {
  auto f = gguf::File::open(vocab_path("gemma-4"));
  auto tok = make_tokenizer(*f);
  const Vocab& v = tok->vocab();
  EXPECT_EQ(v.pre, "gemma4");
  auto id = [&](const std::string& text) {
    int32_t i = v.find(text);
    EXPECT_GE(i, 0) << "no token '" << text << "'";
    return i;
  };
  const std::string mark = "\xE2\x96\x81";  // "▁"
  // A space is "▁"; runs of newlines are words of their own, taken whole
  // when they are a token.
  EXPECT_EQ(tok->encode(" ", false), (std::vector<int32_t>{id(mark)}));
  EXPECT_EQ(tok->encode("a\n\nb", false), (std::vector<int32_t>{id("a"), id("\n\n"), id("b")}));
  EXPECT_EQ(tok->encode(std::string(31, '\n'), false), (std::vector<int32_t>{id(std::string(31, '\n'))}));
  // A character without a token (the llama emoji) is its four bytes, and no
  // merge crosses it.
  ASSERT_LT(v.find("\xF0\x9F\xA6\x99"), 0);
  const std::vector<int32_t> llama = {id("x"), id("<0xF0>"), id("<0x9F>"), id("<0xA6>"), id("<0x99>"), id("y")};
  EXPECT_EQ(tok->encode("x\xF0\x9F\xA6\x99y", false), llama);
  EXPECT_EQ(llama, (std::vector<int32_t>{236781, 478, 397, 404, 391, 236762}));  // llama-tokenize agrees
  // Longer runs than any token merge as BPE does.
  EXPECT_EQ(tok->encode(std::string(40, '\n'), false), (std::vector<int32_t>{137, 115}));
  EXPECT_EQ(tok->encode(std::string(40, ' ') + "end", false), (std::vector<int32_t>{167, 145, 643}));
  EXPECT_EQ(tok->encode("x\n\n\n\ny \n \n\n", false), (std::vector<int32_t>{236781, 110, 236762, 236743, 107, 236743, 108}));
  EXPECT_EQ(tok->encode("\t\t\tindent\r\nwin  \xE3\x80\x80 ideographic\xC2\xA0nbsp", false),
            (std::vector<int32_t>{255970, 32699, 251, 107, 6328, 138, 465, 366, 366, 2298, 9814, 432, 398, 11539}));
  // Invalid UTF-8 is U+FFFD, with the spaces escaped first, as llama.cpp does.
  EXPECT_EQ(tok->encode("a\xFF b\xE2 c \xC3", false), (std::vector<int32_t>{236746, 238479, 518, 238479, 505, 58588}));
  for (const char* t : {"x\xF0\x9F\xA6\x99y", "  a \t\n\n\n\n b  ", "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
                        "\xF4\x8F\xBF\xBD \xE6\x97\xA5\xE6\x9C\xAC 12345"}) {
    EXPECT_EQ(detokenize(*tok, tok->encode(t, false)), t);
    EXPECT_EQ(detokenize(*tok, tok->encode(t, true)), t);  // no dummy prefix to strip after BOS
  }
  // (A "▁" in the text itself comes back as a space, as in llama.cpp.)
  EXPECT_EQ(detokenize(*tok, tok->encode(mark + "a", false)), " a");
  // Pieces: "▁" is a space, <0xHH> its byte, control tokens nothing.
  EXPECT_EQ(tok->token_to_piece(id(mark + mark)), "  ");
  EXPECT_EQ(tok->token_to_piece(id("<0x0A>")), "\n");
  EXPECT_EQ(tok->token_to_piece(v.bos), "");
  EXPECT_EQ(tok->token_to_piece(id("<|\"|>")), "<|\"|>");  // user-defined: as it is
}

// llama.cpp runs every "gemma4" file with the "gemma4" pre-tokenizer and BOS,
// whatever tokenizer.ggml.pre and add_bos_token say.
TEST(TokenizerVocabs, Gemma4ForcesPreTokenizerAndBos) {
  auto base = gguf::File::open(vocab_path("gemma-4"));
  gguf::Writer w;
  for (const auto& [k, v] : base->metadata())
    if (k != "tokenizer.ggml.pre" && k != "tokenizer.ggml.add_bos_token") w.set(k, v);
  w.set("tokenizer.ggml.pre", gguf::Value::of_string("gpt-2"));
  w.set("tokenizer.ggml.add_bos_token", gguf::Value::of_bool(false));
  std::vector<uint8_t> bytes = w.to_bytes();
  auto f = gguf::File::parse(bytes.data(), bytes.size(), "gemma4-no-bos.gguf");
  auto tok = make_tokenizer(*f);
  EXPECT_EQ(tok->vocab().pre, "gemma4");
  EXPECT_TRUE(tok->vocab().add_bos);
  EXPECT_EQ(tok->encode("Hello world", true), (std::vector<int32_t>{2, 9259, 1902}));
}

// ---- malformed metadata --------------------------------------------------------

namespace {

using gguf::Value;
using gguf::ValueType;

Value strings(const std::vector<std::string>& v) {
  std::vector<Value> items;
  for (const auto& s : v) items.push_back(Value::of_string(s));
  return Value::of_array(ValueType::STRING, std::move(items));
}

// A small byte-level BPE vocabulary; each test breaks one thing.
struct BpeFile {
  std::vector<std::string> toks = {"a", "b", "c", "\xC4\xA0", "ab", "\xC4\xA0" "ab", "<|endoftext|>"};
  std::vector<std::string> merges = {"a b", "\xC4\xA0 ab"};
  std::vector<int32_t> types = {1, 1, 1, 1, 1, 1, 3};
  gguf::Writer w;
  BpeFile() {
    w.set("general.architecture", Value::of_string("gpt2"));
    w.set("tokenizer.ggml.model", Value::of_string("gpt2"));
    w.set("tokenizer.ggml.pre", Value::of_string("gpt-2"));
    sync();
    w.set("tokenizer.ggml.eos_token_id", Value::of_u32(6));
  }
  void sync() {
    w.set("tokenizer.ggml.tokens", strings(toks));
    w.set("tokenizer.ggml.merges", strings(merges));
    std::vector<Value> t;
    for (int32_t x : types) t.push_back(Value::of_i32(x));
    w.set("tokenizer.ggml.token_type", Value::of_array(ValueType::INT32, std::move(t)));
  }
  std::unique_ptr<Tokenizer> tokenizer() {
    bytes_ = w.to_bytes();
    file_ = gguf::File::parse(bytes_.data(), bytes_.size(), "bpe.gguf");
    return make_tokenizer(*file_);
  }
  std::string error() {
    return error_of([&] { tokenizer(); });
  }
  std::vector<uint8_t> bytes_;
  std::unique_ptr<gguf::File> file_;
};

}  // namespace

TEST(TokenizerVocabs, SmallBpeWorks) {
  BpeFile bf;
  EXPECT_EQ(bf.error(), "");
  auto tok = bf.tokenizer();
  // "ab ab": "ab", then " ab" (one word by the GPT-2 regex): Ġ+ab merges.
  EXPECT_EQ(tok->encode("ab ab", false), (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(tok->encode("cab", false), (std::vector<int32_t>{2, 4}));
  // 'd' has no token and no byte-level fallback: dropped, as in llama.cpp.
  EXPECT_EQ(tok->encode("d", false), (std::vector<int32_t>{}));
  EXPECT_EQ(tok->encode("<|endoftext|>", false, true), (std::vector<int32_t>{6}));
  EXPECT_EQ(detokenize(*tok, {4, 5, 6}), "ab ab");
  EXPECT_EQ(tok->vocab().eog_ids, (std::vector<int32_t>{6}));
  EXPECT_FALSE(tok->vocab().add_bos);
}

TEST(TokenizerVocabs, MergeRefersToUnknownToken) {
  BpeFile bf;
  bf.merges.push_back("a zz");
  bf.sync();
  EXPECT_HAS(bf.error(), "bpe.gguf: metadata key 'tokenizer.ggml.merges': merge 2 'a zz' refers to 'zz', which is not a token");
  BpeFile bf2;
  bf2.merges.push_back("b c");  // both sides are tokens, "bc" is not
  bf2.sync();
  EXPECT_HAS(bf2.error(), "merge 2 'b c' refers to 'bc', which is not a token");
}

TEST(TokenizerVocabs, MergeWithoutSeparator) {
  BpeFile bf;
  bf.merges[0] = "ab";
  bf.sync();
  EXPECT_HAS(bf.error(), "merge 0 'ab' is not two tokens separated by a space");
}

TEST(TokenizerVocabs, MergesMissingOrOfWrongType) {
  BpeFile bf;
  std::vector<Value> ints = {Value::of_i32(1), Value::of_i32(2)};
  bf.w.set("tokenizer.ggml.merges", Value::of_array(ValueType::INT32, std::move(ints)));
  EXPECT_HAS(bf.error(), "'tokenizer.ggml.merges': expected an array of strings, found an array of int32");
  bf.w.set("tokenizer.ggml.merges", Value::of_string("a b"));
  EXPECT_HAS(bf.error(), "'tokenizer.ggml.merges': expected an array of strings, found string");
  bf.merges.clear();
  bf.sync();
  EXPECT_HAS(bf.error(), "the BPE vocabulary has no merges");

  gguf::Writer w;  // no merges key at all
  w.set("tokenizer.ggml.model", Value::of_string("gpt2"));
  w.set("tokenizer.ggml.tokens", strings({"a", "b"}));
  std::vector<uint8_t> b = w.to_bytes();
  auto f = gguf::File::parse(b.data(), b.size(), "x.gguf");
  EXPECT_HAS(error_of([&] { make_tokenizer(*f); }), "metadata key 'tokenizer.ggml.merges' is missing");
}

TEST(TokenizerVocabs, TokenIdsOutOfRange) {
  BpeFile bf;
  bf.w.set("tokenizer.ggml.eos_token_id", Value::of_u32(7));
  EXPECT_HAS(bf.error(), "'tokenizer.ggml.eos_token_id' = 7 is out of range: the vocabulary has 7 tokens");
  BpeFile bf2;
  bf2.w.set("tokenizer.ggml.fim_pad_token_id", Value::of_u32(1000));
  EXPECT_HAS(bf2.error(), "'tokenizer.ggml.fim_pad_token_id' = 1000 is out of range");
  BpeFile bf3;
  bf3.w.set("tokenizer.ggml.bos_token_id", Value::of_i32(-5));
  EXPECT_HAS(bf3.error(), "'tokenizer.ggml.bos_token_id'");
}

TEST(TokenizerVocabs, EmptyVocabulary) {
  BpeFile bf;
  bf.toks.clear();
  bf.types.clear();
  bf.merges.clear();
  bf.sync();
  EXPECT_HAS(bf.error(), "'tokenizer.ggml.tokens' is empty");
}

TEST(TokenizerVocabs, TokenTypesOfWrongType) {
  BpeFile bf;
  std::vector<Value> f;
  for (size_t i = 0; i < bf.toks.size(); i++) f.push_back(Value::of_f32(1));
  bf.w.set("tokenizer.ggml.token_type", Value::of_array(ValueType::FLOAT32, std::move(f)));
  EXPECT_HAS(bf.error(), "'tokenizer.ggml.token_type': expected an array of integers, found an array of float32");
  bf.w.set("tokenizer.ggml.token_type", strings({"1", "1", "1", "1", "1", "1", "3"}));
  EXPECT_HAS(bf.error(), "expected an array of integers, found an array of string");
  bf.w.set("tokenizer.ggml.token_type", Value::of_i32(1));
  EXPECT_HAS(bf.error(), "'tokenizer.ggml.token_type': expected an array of integers, found int32");
}

TEST(TokenizerVocabs, UnsupportedModelIsNotFatal) {
  BpeFile bf;
  bf.w.set("tokenizer.ggml.model", Value::of_string("rwkv"));
  // model_loader treats "not supported yet" as "run without a tokenizer".
  EXPECT_HAS(bf.error(), "tokenizer model 'rwkv' is not supported yet; pass token ids with --tokens");
}

TEST(TokenizerVocabs, SmallWordPiece) {
  gguf::Writer w;
  w.set("tokenizer.ggml.model", Value::of_string("bert"));
  // WordPiece as converted for llama.cpp: word starts carry "▁", "##" is gone.
  w.set("tokenizer.ggml.tokens", strings({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "\xE2\x96\x81" "un", "aff", "able",
                                          "\xE2\x96\x81" "!", "\xE2\x96\x81" "a"}));
  w.set("tokenizer.ggml.unknown_token_id", Value::of_u32(1));
  w.set("tokenizer.ggml.bos_token_id", Value::of_u32(2));
  w.set("tokenizer.ggml.seperator_token_id", Value::of_u32(3));
  std::vector<uint8_t> b = w.to_bytes();
  auto f = gguf::File::parse(b.data(), b.size(), "wpm.gguf");
  auto tok = make_tokenizer(*f);
  EXPECT_EQ(tok->encode("UnAffable! a xyz", true), (std::vector<int32_t>{2, 4, 5, 6, 7, 8, 1, 3}));
  EXPECT_EQ(detokenize(*tok, tok->encode("unaffable", false)), " unaffable");

  w.set("tokenizer.ggml.seperator_token_id", Value::of_u32(9));
  b = w.to_bytes();
  f = gguf::File::parse(b.data(), b.size(), "wpm.gguf");
  EXPECT_HAS(error_of([&] { make_tokenizer(*f); }),
             "'tokenizer.ggml.seperator_token_id' = 9 is out of range: the vocabulary has 9 tokens");
}

// Invalid UTF-8 is decoded as llama.cpp decodes it (each bad byte -> U+FFFD);
// code points above U+10FFFF, on which llama.cpp throws, also become U+FFFD.
TEST(TokenizerVocabs, InvalidUtf8) {
  auto f = gguf::File::open(vocab_path("llama-bpe"));
  auto tok = make_tokenizer(*f);
  EXPECT_EQ(tok->encode("a\xFF" "b", false), tok->encode("a\xEF\xBF\xBD" "b", false));
  EXPECT_EQ(tok->encode("\xC3", false), tok->encode("\xEF\xBF\xBD", false));
  EXPECT_EQ(tok->encode("x\xF4\x90\x80\x80y", false), tok->encode("x\xEF\xBF\xBDy", false));
  // Overlong forms count as the character they spell.
  EXPECT_EQ(tok->encode("\xC1\x81", false), tok->encode("A", false));
}

// ---- large inputs ------------------------------------------------------------
// A megabyte of mixed text and two one-symbol megabyte runs (the merge queue's
// worst case) encode and round-trip. Times are printed, never asserted (speed
// is measured in BENCHMARKS.md by bench/tokenize-bench.sh); a quadratic merge
// loop would take hours here and trip CTest's timeout.

TEST(TokenizerVocabs, OneMebibyteEncodesAndRoundTrips) {
  std::string text;
  const char* parts[] = {"The quick brown fox jumps over the lazy dog. ", "It's 3.14159 o'clock\n", "日本語のテキスト、",
                         "我想在apple工作1314151天～ ", "🙂🦙 ", "    if (x) { return y; }\n\t\t", "Zürich Ελλάδα Москва "};
  for (size_t i = 0; text.size() < (1u << 20); i++) text += parts[i % std::size(parts)];
  const std::string spaces(1u << 20, ' '), letters(1u << 20, 'a');
  for (const char* name : {"llama-bpe", "qwen2", "deepseek-llm", "gemma-4", "bert-bge"}) {
    auto f = gguf::File::open(vocab_path(name));
    auto tok = make_tokenizer(*f);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<int32_t> ids = tok->encode(text, false);
    double mixed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    // One word of a million symbols each: the merge queue's worst case.
    size_t n_sp = tok->encode(spaces, false).size(), n_a = tok->encode(letters, false).size();
    double runs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: 1 MiB mixed text %.3f s (%zu tokens); 2 x 1 MiB single runs %.3f s\n", name, mixed,
                ids.size(), runs);
    EXPECT_GT(ids.size(), 0u);
    EXPECT_GT(n_a, 0u);
    const bool bpe = tok->vocab().model == "gpt2" || tok->vocab().model == "gemma4";
    EXPECT_EQ(n_sp > 0, bpe);  // WordPiece drops whitespace
    if (bpe) {
      EXPECT_EQ(detokenize(*tok, ids), text) << name;
    }
  }
}
