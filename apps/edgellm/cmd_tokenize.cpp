// edgellm tokenize: how a vocabulary splits a text, so a user can check what
// the model really sees (and compare with llama.cpp's llama-tokenize). Only
// the tokenizer metadata is read: a vocab-only GGUF or a full model both work.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "base/input_file.h"
#include "format/gguf.h"
#include "tokenizer/tokenizer.h"

namespace edgellm::cli {

namespace {

}  // namespace

int cmd_tokenize(int argc, char** argv) {
  Args args("tokenize",
            "Tokenize a text with a GGUF's vocabulary (a vocab-only file or a model) and print the tokens:\n"
            "one 'id -> piece' line each, or with --ids one line of comma-separated ids.");
  std::string vocab_file, text, file;
  bool ids_only = false, parse_special = false, no_bos = false, stats = false;
  args.add({"--vocab", "-m", "--model"}, &vocab_file, "GGUF file whose tokenizer.ggml.* metadata is used");
  args.add({"-p", "--prompt"}, &text, "text to tokenize");
  args.add({"-f", "--file"}, &file, "read the text from a file ('-': stdin)");
  args.add_flag({"--ids"}, &ids_only, "print only the ids, comma-separated (as `run --tokens` takes them)");
  args.add_flag({"--parse-special"}, &parse_special, "read control-token texts (e.g. <|im_start|>) as those tokens");
  args.add_flag({"--no-bos"}, &no_bos, "do not add the BOS (or [CLS]) token the vocabulary asks for");
  args.add_flag({"--stats"}, &stats, "print bytes, tokens and tokenizer speed (MB/s, one thread) to stderr");
  if (!args.parse(argc, argv)) return 0;

  if (vocab_file.empty()) fail("tokenize: no vocabulary given; pass --vocab FILE.gguf (a model works too)");
  if (args.given("-p") + !file.empty() != 1) fail("tokenize: give exactly one of -p TEXT and -f FILE");
  if (!file.empty()) text = read_input_file(file, "-f");

  const auto f = gguf::File::open(vocab_file);
  const auto tok = make_tokenizer(*f);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int32_t> ids = tok->encode(text, !no_bos, parse_special);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  std::string out;
  if (ids_only) {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(ids[i]);
    }
    out += '\n';
  } else {
    for (int32_t id : ids) {
      char head[32];
      std::snprintf(head, sizeof head, "%6d -> '", id);
      out += head;
      out += tok->token_to_piece(id);
      out += "'\n";
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (stats) {
    std::fprintf(stderr, "tokenize: %zu bytes -> %zu tokens in %.2f ms, %.2f MB/s (one thread, vocab %s, %s%s%s)\n",
                 text.size(), ids.size(), ms, double(text.size()) / 1e6 / std::max(ms / 1e3, 1e-9),
                 vocab_file.c_str(), tok->vocab().model.c_str(), tok->vocab().pre.empty() ? "" : " pre=",
                 tok->vocab().pre.c_str());
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace edgellm::cli
