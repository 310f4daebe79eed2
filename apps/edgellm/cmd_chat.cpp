// edgellm chat: a multi-turn conversation over stdin/stdout (a terminal or a
// pipe). The session's KV cache lives across turns: each turn renders the
// whole conversation with the chat template, and only the text past what is
// already cached is tokenized and prefilled; earlier turns are never
// evaluated again. Lines starting with / are commands: /reset, /exit.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "runtime/generate.h"
#include "template/chat.h"
#include "tokenizer/tokenizer.h"

namespace edgellm::cli {

namespace {

std::string builtin_names() {
  std::string s;
  for (const std::string& n : tmpl::builtin_chat_template_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string chat_template_text(const Model& m, const std::string& builtin, const std::string& file) {
  if (!builtin.empty() && !file.empty()) fail("chat: give only one of --chat-template and --chat-template-file");
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) fail("--chat-template-file ", file, ": cannot open the file");
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
  }
  if (!builtin.empty()) {
    const char* t = tmpl::builtin_chat_template(builtin);
    if (!t) fail("--chat-template: no built-in template '", builtin, "' (available: ", builtin_names(), ")");
    return t;
  }
  const gguf::Value* t = m.file().find("tokenizer.chat_template");
  if (!t)
    fail(m.file().source(), ": the model has no chat template; pass --chat-template NAME (", builtin_names(),
         ") or --chat-template-file F.jinja");
  return t->as_string("tokenizer.chat_template");
}

tmpl::Json message(const std::string& role, const std::string& content) {
  return tmpl::Json::object({{"role", tmpl::Json::string(role)}, {"content", tmpl::Json::string(content)}});
}

}  // namespace

int cmd_chat(int argc, char** argv) {
  Args args("chat", "Chat with a model over stdin/stdout; the KV cache is kept between turns.\n"
                    "Type a message per line; /reset starts over, /exit (or end of input) quits.");
  ModelFlags mf;
  SamplerFlags sf;
  std::string system, builtin, template_file;
  int64_t n_predict = -1;
  mf.add_to(args, false);
  args.add({"--system"}, &system, "system prompt");
  args.add({"--chat-template"}, &builtin, "a built-in template instead of the model's");
  args.add({"--chat-template-file"}, &template_file, "a Jinja chat template file instead of the model's");
  args.add({"-n", "--n-predict"}, &n_predict, "most tokens per reply (-1 = until end of turn)", -1, int64_t(1) << 30);
  sf.add_to(args);
  if (!args.parse(argc, argv)) return 0;
  if (mf.model.empty()) mf.model = EDGELLM_DEFAULT_MODEL;

  auto model = mf.load_model();
  if (!model->tokenizer()) fail(model->tokenizer_error());
  const Tokenizer& tok = *model->tokenizer();
  const Vocab& vocab = tok.vocab();
  const std::string tmpl_text = chat_template_text(*model, builtin, template_file);
  const std::string bos = vocab.bos >= 0 ? vocab.tokens[size_t(vocab.bos)] : "";
  const std::string eos = vocab.eos >= 0 ? vocab.tokens[size_t(vocab.eos)] : "";
  Session session(*model, mf.session_config());
  Sampler sampler(sf.params(), int32_t(model->hparams().n_vocab));
  GenerateParams gp;
  gp.n_predict = n_predict;
  gp.stop_ids = vocab.eog_ids;

  std::vector<tmpl::Json> messages;
  auto reset = [&] {
    messages.clear();
    if (!system.empty()) messages.push_back(message("system", system));
    session.truncate(0);
  };
  reset();
  std::vector<int32_t> cached_ids;  // what the KV cache holds
  std::string cached_text;          // the text those ids stand for
  const bool interactive = isatty(fileno(stdin)) != 0;
  std::string line;
  int turn = 0;
  for (;;) {
    if (interactive) std::fputs("> ", stdout), std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (line == "/exit") break;
    if (line == "/reset") {
      reset();
      cached_ids.clear();
      cached_text.clear();
      std::fprintf(stderr, "(conversation reset)\n");
      continue;
    }
    if (line.empty()) continue;
    messages.push_back(message("user", line));
    const std::string prompt = tmpl::render_chat(tmpl_text, tmpl::Json::array(messages), true, bos, eos);

    // Only the text past what is cached needs tokens; if the template rewrote
    // earlier turns, fall back to the longest common token prefix.
    std::vector<int32_t> fresh;
    size_t reused = cached_ids.size();
    if (!cached_text.empty() && prompt.compare(0, cached_text.size(), cached_text) == 0) {
      fresh = tok.encode(std::string_view(prompt).substr(cached_text.size()), false, true);
    } else {
      const bool has_bos = !bos.empty() && prompt.rfind(bos, 0) == 0;
      const std::vector<int32_t> all = tok.encode(prompt, vocab.add_bos && !has_bos, true);
      reused = 0;
      while (reused < all.size() && reused < cached_ids.size() && all[reused] == cached_ids[reused]) ++reused;
      if (reused == all.size() && reused > 0) --reused;  // at least one token must be evaluated
      fresh.assign(all.begin() + long(reused), all.end());
      cached_ids.resize(reused);
    }
    session.truncate(int64_t(reused));
    Detokenizer detok(tok);
    for (int32_t id : cached_ids) detok.push(id);
    for (int32_t id : fresh) detok.push(id);
    std::string reply;
    std::vector<int32_t> reply_ids;
    const GenerateStats st = generate(session, sampler, fresh, gp, [&](int32_t id) {
      const std::string piece = detok.push(id);
      reply += piece;
      reply_ids.push_back(id);
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      return true;
    });
    const std::string rest = detok.flush();
    reply += rest;
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    // The cache now holds the prompt and every reply token that was decoded
    // (the end-of-turn token that stopped generation was not).
    cached_ids.insert(cached_ids.end(), fresh.begin(), fresh.end());
    cached_ids.insert(cached_ids.end(), reply_ids.begin(), reply_ids.end());
    cached_text = prompt + reply;
    messages.push_back(message("assistant", reply));
    ++turn;
    std::fprintf(stderr,
                 "timings: turn %d | prefill %lld new tokens (%zu reused from cache), %.1f ms, %.1f tok/s | "
                 "generated %lld tokens, %.1f ms, %.1f tok/s | context %lld/%lld\n",
                 turn, (long long)st.n_prompt, reused, st.prompt_ms, st.n_prompt * 1000.0 / std::max(st.prompt_ms, 1e-9),
                 (long long)reply_ids.size(), st.generate_ms,
                 double(reply_ids.size()) * 1000.0 / std::max(st.generate_ms, 1e-9), (long long)session.n_past(),
                 (long long)session.n_ctx());
    if (st.context_full) {
      std::fprintf(stderr, "(context full: /reset to start over, or use a larger -c)\n");
    }
  }
  return 0;
}

}  // namespace edgellm::cli
