// Pre-tokenizers (tokenizer.ggml.pre -> split regexes) and the special-token
// split. See bpe_pretokenize.h for how the patterns relate to llama.cpp's.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/bpe_pretokenize.h"

#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "base/error.h"
#include "tokenizer/unicode.h"

namespace edgellm::bpe {
namespace {

// ---- the published patterns ------------------------------------------------
//
// Written as llama.cpp runs them (its adaptations of each model's
// tokenizer.json: case-insensitive groups spelled out, possessive quantifiers
// made greedy); non-ASCII literals as \x{..}. Two pseudo-patterns name
// llama.cpp's hand-written splitters: kDigitGroups (runs of \p{N} cut into
// groups of three from the right, the leading group shorter) and
// kAsciiTriples (runs of [0-9] cut at every multiple of three from the right,
// what "(?=(\d{3})+(?!\d))" does as a split). kDigitGroups keeps a quirk of
// llama.cpp's splitter: the text before a digit run is not split off.

constexpr const char* kDigitGroups = "<digit-groups>";
constexpr const char* kAsciiTriples = "<ascii-triples>";

#define CONTRACTIONS R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]))"

constexpr const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr const char* kLlama3 =
    CONTRACTIONS R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 =
    CONTRACTIONS R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen35 =
    CONTRACTIONS R"(|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kJais2 =
    CONTRACTIONS R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+)"
    R"(|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S))"
    R"(|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})";
constexpr const char* kCjkDeepseek = R"([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";
constexpr const char* kCjkKana = R"([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)";
constexpr const char* kDeepseek3Main =
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kPoro = R"( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C})]+)";
constexpr const char* kUpperLower =  // gpt-4o / tekken: a cased word, with the contractions or without
    R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+)";
constexpr const char* kUpperLower2 = R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*)";

struct PreDef {
  std::vector<const char*> names;
  std::vector<std::string> patterns;  // empty: known to llama.cpp, not supported here
  bool add_bos = false, ignore_merges = false, spm_style = false;
};

const std::vector<PreDef>& pre_defs() {
  static const std::vector<PreDef> defs = [] {
    std::vector<PreDef> d;
    const std::string gpt2 = kGpt2, llama3 = kLlama3, qwen2 = kQwen2;
    // default: no or "default" tokenizer.ggml.pre
    d.push_back({{"default"}, {R"([\p{P}\$\+<=>\^~\|]+)", gpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}});
    d.push_back({{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                  "jina-v5-nano"},
                 {llama3}, true, true});
    d.push_back({{"dbrx", "smaug-bpe"}, {llama3}});
    d.push_back({{"glm4", "chatglm-bpe"}, {llama3}});  // llama.cpp also drops the default BOS; ours has none
    d.push_back({{"jais-2"}, {kJais2}});
    // "\s+$" is written "(?<!\s)\s+$": the same single match (the trailing
    // whitespace run), without re-scanning every whitespace run to its end
    // from each of its positions (quadratic on long runs).
    d.push_back({{"deepseek-llm"},
                 {"[\\r\\n]",
                  "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}"
                  "\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}"
                  "\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}"
                  "\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}"
                  "\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}"
                  "\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}"
                  "\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}"
                  "\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}"
                  "\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}"
                  "\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}"
                  "\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}"
                  "\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}"
                  "\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}"
                  "\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}"
                  "\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}"
                  "\\x{1E900}-\\x{1E943}]+",
                  "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+",
                  "(?<!\\s)\\s+$", kCjkDeepseek, "\\p{N}+"}});
    d.push_back({{"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"},
                 {"\\p{N}{1,3}", kCjkKana, kDeepseek3Main}});
    d.push_back({{"spark2_5"},
                 {"\\p{N}{1,3}", kCjkKana,
                  R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+)",
                  "\\p{N}"}});
    d.push_back({{"youtu"},
                 {"[\\x{AC00}-\\x{D7A3}\\x{3131}-\\x{318E}]+|[\\x{FF01}\\x{2026}\\x{201C}\\x{201D}\\x{2018}\\x{2019}"
                  "\\x{2014}\\x{FF1A}\\x{FF1B}\\x{FF0C}\\x{3001}-\\x{303F}\\x{FE30}-\\x{FE4F}]+|[\\x{3105}-\\x{312F}]+"
                  "|[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
                  R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+)" CONTRACTIONS
                  R"(?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*)" CONTRACTIONS
                  R"(?|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
                 false, true});
    d.push_back({{"deepseek-coder"}, {"[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kCjkDeepseek, "\\p{N}"}});
    d.push_back({{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", gpt2, "[0-9][0-9][0-9]"}});
    d.push_back({{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"},
                 {"\\p{N}", gpt2}});
    d.push_back({{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
                  "mellum", "modern-bert", "exaone4", "jina-v1-en", "jina-v2-code", "roberta-bpe", "mpt", "olmo",
                  "jais", "trillion", "granite-docling"},
                 {gpt2}});
    d.push_back({{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open",
                  "grok-2"},
                 {qwen2}});
    d.push_back({{"qwen35"}, {kQwen35}});
    d.push_back({{"poro-chat", "bloom", "gpt3-finnish"}, {kPoro}});
    d.push_back({{"viking"}, {kPoro, "\\p{N}"}});
    d.push_back({{"tekken"},
                 {std::string(kUpperLower) + "|" + kUpperLower2 +
                  R"(|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
                 true, true});
    d.push_back({{"chameleon"},
                 {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
                  R"([\p{P}!-/:-@\[-`{-~])", gpt2},
                 true});
    d.push_back({{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"},
                 {std::string(kUpperLower) + CONTRACTIONS "?|" + kUpperLower2 + CONTRACTIONS
                  R"(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}});
    d.push_back({{"granite-embed-multi-97m"},
                 {R"([^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+)" CONTRACTIONS
                  R"(?|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*)" CONTRACTIONS
                  R"(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
                 false, true});
    d.push_back({{"tiny_aya", "cohere2moe"},
                 {kDigitGroups,
                  R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+)" CONTRACTIONS
                  R"(?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*)" CONTRACTIONS
                  R"(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}});
    d.push_back({{"superbpe"}, {"\\p{N}+", kAsciiTriples}});
    d.push_back({{"bailingmoe", "bailingmoe2", "llada-moe"},
                 {R"('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)"}});
    d.push_back({{"seed-coder"},
                 {CONTRACTIONS R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)"}});
    d.push_back({{"ufakzeka"},
                 {R"([^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}});
    d.push_back({{"afmoe"},
                 {kDigitGroups,
                  "[\\x{4E00}-\\x{9FFF}\\x{3400}-\\x{4DBF}\\x{8C48}-\\x{FAFF}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}"
                  "\\x{FF65}-\\x{FF9F}\\x{2F00}-\\x{2FDF}\\x{E40}-\\x{E7F}\\x{E80}-\\x{EFF}\\x{1780}-\\x{17FF}"
                  "\\x{1000}-\\x{109F}\\x{AA60}-\\x{AA7F}\\x{A9E0}-\\x{A9FF}\\x{AC00}-\\x{D7AF}\\x{1100}-\\x{11FF}]+",
                  kDeepseek3Main}});
    d.push_back({{"laguna"}, {"[^\\n]+|[\\n]+", qwen2}});
    d.push_back({{"exaone-moe"},
                 {CONTRACTIONS R"(|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)"}});
    d.push_back({{"minicpm5"},
                 {"\\p{N}{1,3}",
                  CONTRACTIONS R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
                 false, true});
    // SentencePiece-style BPE (PreInfo::spm_style): only runs of newlines are
    // split off, the merges run over the rest of the line. llama.cpp gives
    // both names the same pre-tokenizer type; "gemma4" is also what it uses
    // for every tokenizer.ggml.model = "gemma4" file, whatever its .pre says.
    d.push_back({{"gemma4", "granite-embed-multi-311m"}, {"[^\\n]+|[\\n]+"}, true, false, true});
    // kimi-k2: llama.cpp's hand-written splitter for Kimi's regex, which
    // takes a run of letters whatever their case (its two cased word
    // patterns come out as one), keeps Han apart from other letters and
    // leaves marks out of words.
    d.push_back({{"kimi-k2"},
                 {R"(\p{Han}+|[^\r\n\p{L}\p{N}]?(?:(?!\p{Han})\p{L})+)" CONTRACTIONS
                  R"(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}});
    // Known to llama.cpp but not implemented here: sarvam-moe
    // (SentencePiece-style as well, without the forced BOS; no vocabulary
    // here to check it against) and whitespace (a tokenizer model of its own).
    d.push_back({{"sarvam-moe", "whitespace"}, {}});
    return d;
  }();
  return defs;
}
#undef CONTRACTIONS

const PreDef* find_def(std::string_view name) {
  if (name.empty()) name = "default";
  for (const PreDef& d : pre_defs())
    for (const char* n : d.names)
      if (name == n) return &d;
  return nullptr;
}

// ---- translation to PCRE2 ----------------------------------------------------

struct Range {
  uint32_t lo, hi;
};

// \p{Han} in these patterns: llama.cpp's unicode_cpt_is_han (the CJK
// ideograph blocks, assigned or not), which its kimi-k2 splitter uses.
constexpr Range kHan[] = {{0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xF900, 0xFAFF},
                          {0x20000, 0x2A6DF}, {0x2A700, 0x2EBEF}, {0x2F800, 0x2FA1F}};

// Non-ASCII White_Space code points: llama.cpp's regex engines see each of
// them as U+000B.
constexpr Range kNonAsciiSpace[] = {{0x85, 0x85},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
                                    {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}};

std::string hex_cp(uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\x{%X}", cp);
  return buf;
}

// Ranges minus the non-ASCII whitespace, plus all of it if U+000B is in them.
std::vector<Range> adjust_for_spaces(std::vector<Range> in) {
  bool has_vt = false;
  for (const Range& r : in) has_vt |= r.lo <= 0x0B && 0x0B <= r.hi;
  std::vector<Range> out;
  for (Range r : in) {
    for (const Range& s : kNonAsciiSpace) {
      if (s.hi < r.lo || s.lo > r.hi) continue;
      if (s.lo > r.lo) out.push_back({r.lo, s.lo - 1});
      r.lo = s.hi + 1;
      if (r.lo > r.hi) break;
    }
    if (r.lo <= r.hi) out.push_back(r);
  }
  if (has_vt)
    for (const Range& s : kNonAsciiSpace) out.push_back(s);
  return out;
}

// Rewrites a pattern in llama.cpp's dialect to PCRE2 (see the header).
std::string translate(const std::string& re) {
  // llama.cpp runs a pattern with \p{..} on text "collapsed" to one byte per
  // code point, where non-ASCII literals cannot occur (it rejects them).
  const bool collapsed = re.find("\\p{") != std::string::npos;
  std::string out;
  size_t i = 0;
  auto bad = [&](const char* why) { fail("pre-tokenizer pattern '", re, "': ", why); };
  auto read_cp = [&]() -> uint32_t {
    size_t len;
    uint32_t cp = unicode::decode(re, i, &len);
    i += len;
    return cp;
  };
  auto read_escape_literal = [&](char c) -> uint32_t {  // after "\c" when c is not a class escape
    switch (c) {
      case 'r': return 0x0D;
      case 'n': return 0x0A;
      case 't': return 0x09;
      case 'v': return 0x0B;
      case 'f': return 0x0C;
      case 'x': {
        if (i < re.size() && re[i] == '{') {
          size_t end = re.find('}', i);
          if (end == std::string::npos) bad("unterminated \\x{");
          uint32_t v = uint32_t(std::stoul(re.substr(i + 1, end - i - 1), nullptr, 16));
          i = end + 1;
          return v;
        }
        uint32_t v = uint32_t(std::stoul(re.substr(i, 2), nullptr, 16));
        i += 2;
        return v;
      }
      default:
        if (std::isalnum(uint8_t(c))) bad("unsupported escape");
        return uint8_t(c);
    }
  };
  auto read_han = [&]() {  // at "{Han}" after "\p": consumed
    if (re.compare(i, 5, "{Han}") != 0) return false;
    i += 5;
    return true;
  };
  auto read_property = [&]() -> std::string {  // at "{X}" after "\p"
    size_t end = re.find('}', i);
    if (i >= re.size() || re[i] != '{' || end == std::string::npos) bad("bad \\p");
    std::string name = re.substr(i + 1, end - i - 1);
    i = end + 1;
    if (name == "Lu" || name == "Ll" || name == "Lt" || name == "Lm" || name == "Lo") name.resize(1);  // "Lu" -> "L"
    if (name != "L" && name != "N" && name != "P" && name != "M" && name != "S") bad("unsupported \\p class");
    std::string prop = "\\p{";
    prop += name;
    prop += '}';
    return prop;
  };

  while (i < re.size()) {
    char c = re[i];
    if (c == '\\') {
      if (i + 1 >= re.size()) bad("trailing backslash");
      char e = re[i + 1];
      i += 2;
      if (e == 's') out += std::string("[") + unicode::kWhitespaceClass + "]";
      else if (e == 'S') out += std::string("[^") + unicode::kWhitespaceClass + "]";
      else if (e == 'd') out += "[0-9]";
      else if (e == 'p' && read_han()) {
        out += '[';
        for (const Range& r : kHan) out += hex_cp(r.lo) + '-' + hex_cp(r.hi);
        out += ']';
      } else if (e == 'p') out += read_property();
      else {
        uint32_t cp = read_escape_literal(e);
        if (cp >= 0x80 && unicode::is_whitespace(cp)) bad("non-ASCII whitespace literal");
        out += hex_cp(cp);
      }
      continue;
    }
    if (c != '[') {
      uint32_t cp = read_cp();
      if (cp >= 0x80) {
        if (collapsed) bad("non-ASCII literal next to \\p{..} (llama.cpp rejects these)");
        if (unicode::is_whitespace(cp)) bad("non-ASCII whitespace literal");
        out += hex_cp(cp);
      } else {
        out += char(cp);
      }
      continue;
    }
    // A character class.
    i++;
    bool neg = false;
    if (i < re.size() && re[i] == '^') { neg = true; i++; }
    std::string props;
    std::vector<Range> ranges;
    bool first = true;
    while (true) {
      if (i >= re.size()) bad("unterminated class");
      if (re[i] == ']' && !first) { i++; break; }
      first = false;
      uint32_t lo;
      if (re[i] == '\\') {
        char e = re[i + 1];
        i += 2;
        if (e == 's') { props += unicode::kWhitespaceClass; continue; }
        if (e == 'd') { ranges.push_back({'0', '9'}); continue; }
        if (e == 'p' && read_han()) { ranges.insert(ranges.end(), std::begin(kHan), std::end(kHan)); continue; }
        if (e == 'p') { props += read_property(); continue; }
        if (e == 'S') bad("\\S inside a class");
        lo = read_escape_literal(e);
      } else {
        lo = read_cp();
      }
      if (collapsed && lo >= 0x80) bad("non-ASCII literal next to \\p{..} (llama.cpp rejects these)");
      uint32_t hi = lo;
      if (i + 1 < re.size() && re[i] == '-' && re[i + 1] != ']') {
        i++;
        if (re[i] == '\\') {
          char e = re[i + 1];
          i += 2;
          hi = read_escape_literal(e);
        } else {
          hi = read_cp();
        }
        if (hi < lo) bad("reversed range");
      }
      ranges.push_back({lo, hi});
    }
    ranges = adjust_for_spaces(std::move(ranges));
    if (props.empty() && ranges.empty()) {
      out += neg ? "[\\x{0}-\\x{10FFFF}]" : "(?!)";
      continue;
    }
    out += neg ? "[^" : "[";
    out += props;
    for (const Range& r : ranges) {
      out += hex_cp(r.lo);
      if (r.hi != r.lo) {
        out += '-';
        out += hex_cp(r.hi);
      }
    }
    out += "]";
  }
  return out;
}

struct Code {
  pcre2_code* code = nullptr;
  const char* custom = nullptr;  // kDigitGroups / kAsciiTriples
};

}  // namespace

// ---- PreTokenizer -------------------------------------------------------------

PreInfo pre_info(std::string_view pre) {
  PreInfo info;
  const PreDef* d = find_def(pre);
  if (!d) return info;
  info.known = true;
  info.supported = !d->patterns.empty();
  info.add_bos = d->add_bos;
  info.ignore_merges = d->ignore_merges;
  info.spm_style = d->spm_style;
  return info;
}

namespace {

// PCRE2 match state, one per thread and reused: match data, and a JIT stack
// that is only made when a search needs more than the default 32 KiB (making
// and freeing a large one per call cost more than the searches themselves).
struct MatchState {
  pcre2_match_data* md = nullptr;
  pcre2_match_context* mctx = nullptr;
  pcre2_jit_stack* stack = nullptr;
  MatchState() {
    md = pcre2_match_data_create(16, nullptr);
    mctx = pcre2_match_context_create(nullptr);
    if (!md || !mctx) fail("out of memory for PCRE2 match state");
    // The patterns are linear; the default limit (10M steps per call) could
    // still stop a search over a long piece.
    pcre2_set_match_limit(mctx, UINT32_MAX);
  }
  ~MatchState() {
    if (stack) pcre2_jit_stack_free(stack);
    pcre2_match_context_free(mctx);
    pcre2_match_data_free(md);
  }
  // Next match in s from start; false if none. [*b, *e) gets the match.
  bool find(const pcre2_code* code, std::string_view s, size_t start, uint32_t options, size_t* b, size_t* e) {
    int rc;
    while (true) {
      rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), start,
                       options | PCRE2_NO_UTF_CHECK, md, mctx);
      if (rc != PCRE2_ERROR_JIT_STACKLIMIT || stack) break;
      stack = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, nullptr);
      if (!stack) fail("out of memory for the PCRE2 JIT stack");
      pcre2_jit_stack_assign(mctx, nullptr, stack);
    }
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof msg);
      fail("pre-tokenizer regex failed on a ", s.size(), "-byte piece: ", reinterpret_cast<const char*>(msg));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    *b = ov[0];
    *e = ov[1];
    return true;
  }
};

size_t utf8_next(std::string_view s, size_t off) {
  size_t len;
  unicode::decode(s, off, &len);
  return off + len;
}

}  // namespace

struct PreTokenizer::Impl {
  std::vector<Code> codes;
  ~Impl() {
    for (Code& c : codes) pcre2_code_free(c.code);
  }
  void run(size_t level, std::string_view text, size_t pb, size_t pe, MatchState& ms, WordFn fn,
           void* ctx) const;
};

PreTokenizer::PreTokenizer(std::string_view pre) : name_(pre.empty() ? "default" : pre), impl_(new Impl) {
  const PreDef* d = find_def(name_);
  if (!d) {
    std::string known;
    for (const PreDef& x : pre_defs())
      if (!x.patterns.empty())
        for (const char* n : x.names) known += std::string(known.empty() ? "" : ", ") + n;
    fail("unknown BPE pre-tokenizer tokenizer.ggml.pre = '", name_, "' (known: ", known, ")");
  }
  if (d->patterns.empty())
    fail("BPE pre-tokenizer '", name_, "' is not supported yet; pass token ids with --tokens");
  for (const std::string& p : d->patterns) {
    Code c;
    if (p == kDigitGroups || p == kAsciiTriples) {
      c.custom = p == kDigitGroups ? kDigitGroups : kAsciiTriples;
      // Both find their runs with a regex.
      const std::string run = c.custom == kDigitGroups ? "\\p{N}+" : "[0-9]+";
      int err;
      PCRE2_SIZE at;
      c.code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(run.data()), run.size(), PCRE2_UTF | PCRE2_UCP, &err,
                             &at, nullptr);
    } else {
      const std::string t = translate(p);
      int err;
      PCRE2_SIZE at;
      c.code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(t.data()), t.size(),
                             PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &err, &at, nullptr);
      if (!c.code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        fail("pre-tokenizer '", name_, "': PCRE2 cannot compile '", t, "' at ", at, ": ",
             reinterpret_cast<const char*>(msg));
      }
    }
    if (!c.code) fail("pre-tokenizer '", name_, "': PCRE2 cannot compile a run pattern");
    pcre2_jit_compile(c.code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT is unavailable
    impl_->codes.push_back(c);
  }
}

PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;

// Runs pattern `level` over [pb, pe) of text and passes each piece on to the
// next pattern, depth first, so that no list of intermediate pieces is built;
// the pieces of the last pattern go to the callback, in text order.

void PreTokenizer::Impl::run(size_t level, std::string_view text, size_t pb, size_t pe, MatchState& ms,
                             WordFn fn, void* ctx) const {
  if (level == codes.size()) {
    fn(ctx, pb, pe);
    return;
  }
  const Code& c = codes[level];
  std::string_view piece = text.substr(pb, pe - pb);
  auto emit = [&](size_t b, size_t e) {
    if (e > b) run(level + 1, text, pb + b, pb + e, ms, fn, ctx);
  };
  size_t last = 0, b, e;
  if (c.custom == kDigitGroups) {
    // Each run of \p{N} is cut after its first (count % 3) code points and
    // after every three more. As in llama.cpp, the text before a run is not a
    // word of its own: it stays glued to the run's first group.
    for (size_t start = 0; start < piece.size() && ms.find(c.code, piece, start, 0, &b, &e); start = e) {
      size_t n = 0;
      for (size_t p = b; p < e; p = utf8_next(piece, p)) n++;
      size_t group = n % 3 ? n % 3 : 3;
      for (size_t p = b; p < e; group = 3) {
        for (size_t k = 0; k < group; k++) p = utf8_next(piece, p);
        emit(last, p);
        last = p;
      }
    }
  } else if (c.custom == kAsciiTriples) {
    // Cuts at every position of a [0-9] run that is a multiple of three
    // before its end.
    for (size_t start = 0; start < piece.size() && ms.find(c.code, piece, start, 0, &b, &e); start = e) {
      for (size_t p = b + (e - b) % 3; p < e; p += 3) {
        emit(last, p);
        last = p;
      }
    }
  } else {
    // Matches and the text between them are words, as llama.cpp's
    // std::regex_iterator loop; an empty match splits without a word.
    size_t start = 0;
    uint32_t opts = 0;
    while (start <= piece.size()) {
      if (!ms.find(c.code, piece, start, opts, &b, &e)) {
        if (opts == 0 || start >= piece.size()) break;
        start = utf8_next(piece, start);  // no non-empty match here: move on
        opts = 0;
        continue;
      }
      emit(last, b);
      emit(b, e);
      last = e;
      start = e;
      opts = b == e ? PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED : 0;
    }
  }
  emit(last, piece.size());
}

void PreTokenizer::split_impl(std::string_view text, WordFn fn, void* ctx) const {
  if (text.empty()) return;
  thread_local MatchState ms;
  impl_->run(0, text, 0, text.size(), ms, fn, ctx);
}

// ---- special tokens -------------------------------------------------------------

SpecialSplitter::SpecialSplitter(const Vocab& v) : vocab_(v) {
  for (int32_t id = 0; id < v.n_tokens(); id++) {
    TokenType t = v.type(id);
    const std::string& s = v.tokens[size_t(id)];
    if ((t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown) && !s.empty()) {
      // llama.cpp's Phi-3 rule (by general.name): special tokens rstrip,
      // except these three.
      bool rstrip = v.special_rstrip && s != "<unk>" && s != "<s>" && s != "<|endoftext|>";
      specials_.push_back({id, t != TokenType::UserDefined, rstrip});
    }
  }
  std::stable_sort(specials_.begin(), specials_.end(), [&](const Special& a, const Special& b) {
    return v.tokens[size_t(a.id)].size() > v.tokens[size_t(b.id)].size();
  });

  std::fill(std::begin(root_next_), std::end(root_next_), -1);
  trie_.emplace_back();  // root (its children are root_next_)
  for (size_t k = 0; k < specials_.size(); k++) {
    const std::string& s = v.tokens[size_t(specials_[k].id)];
    int32_t node = root_next_[uint8_t(s[0])];
    if (node < 0) {
      node = root_next_[uint8_t(s[0])] = int32_t(trie_.size());
      trie_.emplace_back();
    }
    for (size_t i = 1; i < s.size(); i++) {
      auto& nx = trie_[size_t(node)].next;
      auto it = std::lower_bound(nx.begin(), nx.end(), std::make_pair(uint8_t(s[i]), INT32_MIN));
      if (it != nx.end() && it->first == uint8_t(s[i])) {
        node = it->second;
      } else {
        int32_t child = int32_t(trie_.size());
        nx.insert(it, {uint8_t(s[i]), child});
        trie_.emplace_back();
        node = child;
      }
    }
    trie_[size_t(node)].ends.push_back(int32_t(k));
  }
}

void SpecialSplitter::split(std::string_view text, bool parse_special, std::vector<Fragment>& frags,
                            std::span<const TextSpan> literal) const {
  frags.clear();
  if (text.empty()) return;
  frags.push_back({-1, 0, text.size()});

  // Which specials occur anywhere in the text.
  std::vector<uint8_t> present(specials_.size(), 0);
  bool any = false;
  for (size_t p = 0; p < text.size(); p++) {
    int32_t node = root_next_[uint8_t(text[p])];
    for (size_t q = p + 1; node >= 0; q++) {
      for (int32_t k : trie_[size_t(node)].ends) {
        present[size_t(k)] = 1;
        any = true;
      }
      if (q >= text.size()) break;
      const auto& nx = trie_[size_t(node)].next;
      auto it = std::lower_bound(nx.begin(), nx.end(), std::make_pair(uint8_t(text[q]), INT32_MIN));
      node = it != nx.end() && it->first == uint8_t(text[q]) ? it->second : -1;
    }
  }
  if (!any) return;

  std::vector<Fragment> next;
  auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
  };
  for (size_t k = 0; k < specials_.size(); k++) {
    const Special& sp = specials_[k];
    if (!present[k] || (sp.control && !parse_special)) continue;
    const std::string& st = vocab_.tokens[size_t(sp.id)];
    bool changed = false;
    next.clear();
    for (const Fragment& f : frags) {
      if (f.token >= 0) { next.push_back(f); continue; }
      size_t off = f.off, len = f.len, from = off;  // from: where the search resumes
      while (len > 0) {
        size_t pos = text.substr(from, off + len - from).find(st);
        if (pos == std::string_view::npos) { next.push_back({-1, off, len}); break; }
        pos += from - off;
        // Inside a literal span a control token's text is plain text.
        if (sp.control && overlaps_literal(literal, off + pos, off + pos + st.size())) {
          from = off + pos + 1;
          continue;
        }
        changed = true;
        if (pos > 0) next.push_back({-1, off, pos});
        next.push_back({sp.id, 0, 0});
        size_t r_off = off + pos + st.size(), r_len = off + len - r_off;
        if (sp.rstrip)
          while (r_len > 0 && is_space(text[r_off])) { r_off++; r_len--; }
        off = from = r_off;
        len = r_len;
      }
    }
    if (changed) frags.swap(next);
  }
}

}  // namespace edgellm::bpe
