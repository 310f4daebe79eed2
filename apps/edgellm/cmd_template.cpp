// edgellm template: print exactly the prompt a model sees for a conversation,
// rendered with its chat template (tokenizer.chat_template), a template file,
// or a built-in template chosen by name; with --tokens, its token ids.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "base/input_file.h"
#include "format/gguf.h"
#include "template/chat.h"
#include "tokenizer/tokenizer.h"

namespace edgellm::cli {

namespace {

std::string names_list() {
  std::string s;
  for (const std::string& n : tmpl::builtin_chat_template_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

int cmd_template(int argc, char** argv) {
  Args args("template",
            "Print exactly the prompt a model sees for a conversation (OpenAI-style messages JSON), rendered\n"
            "with the model's chat template, a template file, or a built-in template. With --tokens, print\n"
            "its token ids instead (comma-separated, as `run --tokens` takes them).");
  std::string model, template_file, builtin, messages_file, bos, eos, kwargs;
  bool add_gen = false, tokens = false;
  args.add({"-m", "--model"}, &model, "GGUF whose tokenizer.chat_template, BOS/EOS and tokenizer are used");
  args.add({"--template-file"}, &template_file, "a Jinja chat template file (instead of the model's)");
  args.add({"--chat-template"}, &builtin, "a built-in template instead of the model's: " + names_list());
  args.add({"--messages"}, &messages_file,
           "conversation JSON: [{role, content}, ...], or {\"messages\": [...], \"tools\": ...} ('-': stdin)");
  args.add_flag({"--add-generation-prompt"}, &add_gen, "end with the header of an assistant turn");
  args.add_flag({"--tokens"}, &tokens, "print the prompt's token ids (needs -m) instead of its text");
  args.add({"--bos-token"}, &bos, "BOS text the template sees (default: the model's, or empty)");
  args.add({"--eos-token"}, &eos, "EOS text the template sees (default: the model's, or empty)");
  args.add({"--chat-template-kwargs"}, &kwargs, "extra template variables, a JSON object: '{\"enable_thinking\":false}'");
  if (!args.parse(argc, argv)) return 0;

  if (messages_file.empty()) fail("template: --messages CONV.json is required");
  if (!template_file.empty() && !builtin.empty()) fail("template: give only one of --template-file and --chat-template");
  if (model.empty() && template_file.empty() && builtin.empty())
    fail("template: give -m MODEL, --template-file F.jinja or --chat-template NAME");
  if (tokens && model.empty()) fail("template: --tokens needs -m MODEL (for its tokenizer)");

  std::string text, source;
  if (!template_file.empty()) {
    text = read_input_file(template_file, "--template-file");
    source = template_file;
  } else if (!builtin.empty()) {
    const char* t = tmpl::builtin_chat_template(builtin);
    if (!t) fail("--chat-template: no built-in template '", builtin, "' (available: ", names_list(), ")");
    text = t;
  }

  std::unique_ptr<gguf::File> file;
  std::string model_bos, model_eos;
  if (!model.empty()) {
    file = gguf::File::open(model);
    if (text.empty()) {
      const gguf::Value* t = file->find("tokenizer.chat_template");
      if (!t)
        fail(model, ": the model has no tokenizer.chat_template; pass --chat-template NAME (", names_list(),
             ") or --template-file F.jinja");
      text = t->as_string("tokenizer.chat_template");
    }
    if (!args.given("--bos-token") || !args.given("--eos-token")) {
      const Vocab v = Vocab::load(*file);
      if (v.bos >= 0) model_bos = v.tokens[size_t(v.bos)];
      if (v.eos >= 0) model_eos = v.tokens[size_t(v.eos)];
    }
  }
  if (!args.given("--bos-token")) bos = model_bos;
  if (!args.given("--eos-token")) eos = model_eos;

  tmpl::Conversation conv = tmpl::parse_conversation(read_input_file(messages_file, "--messages"), messages_file);
  if (!kwargs.empty()) {
    const tmpl::Json extra = tmpl::Json::parse(kwargs, "--chat-template-kwargs");
    if (!extra.is_object()) fail("--chat-template-kwargs: expected a JSON object");
    for (const auto& [k, v] : extra.entries()) conv.extra.set(k, v);
  }
  const std::string prompt = tmpl::render_chat(text, conv.messages, add_gen, bos, eos, conv.extra);

  if (!tokens) {
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  const auto tok = make_tokenizer(*file);
  // Add BOS as the model asks, unless the template already put it there.
  const Vocab& v = tok->vocab();
  const bool has_bos = v.bos >= 0 && prompt.rfind(v.tokens[size_t(v.bos)], 0) == 0;
  const std::vector<int32_t> ids = tok->encode(prompt, v.add_bos && !has_bos, /*parse_special=*/true);
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) line += (i ? "," : "") + std::to_string(ids[i]);
  std::printf("%s\n", line.c_str());
  std::fprintf(stderr, "%zu tokens\n", ids.size());
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace edgellm::cli
