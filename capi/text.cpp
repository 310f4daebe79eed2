// Text in and out: tokenize, detokenize, and chat templates rendered for a
// JSON messages array.
#include <cstring>

#include "capi/handles.h"
#include "template/chat.h"
#include "template/json.h"

using namespace edgellm;
using namespace edgellm::capi;

namespace {

// Longer inputs are refused before a byte is read: the length might be a
// caller's mistake, not the size of a real buffer.
constexpr int64_t kMaxTextBytes = int64_t(tmpl::kMaxJsonBytes);

const Tokenizer& tokenizer_of(const edgellm_model& h) {
  if (!h.model->tokenizer())
    refuse(EDGELLM_ERR_FAILED, "the model has no usable tokenizer: ", h.model->tokenizer_error());
  return *h.model->tokenizer();
}

std::string_view text_arg(const char* text, int32_t length, const char* name) {
  need(text, name);
  size_t n = 0;
  if (length == -1) {
    n = ::strnlen(text, size_t(kMaxTextBytes) + 1);
  } else {
    need_size(length, (std::string(name) + "_length").c_str());
    n = size_t(length);
  }
  if (int64_t(n) > kMaxTextBytes)
    refuse(EDGELLM_ERR_INVALID_ARGUMENT, name, " is over the ", kMaxTextBytes >> 20, " MiB this call accepts");
  const std::string_view s(text, n);
  check_utf8(s, name);
  return s;
}

}  // namespace

extern "C" EDGELLM_API edgellm_status edgellm_tokenize(edgellm_model* model, const char* text, int32_t text_length,
                                                      int32_t add_bos, int32_t parse_special, int32_t* tokens,
                                                      int32_t capacity, int32_t* n_tokens) {
  return with_model("edgellm_tokenize", model, [&](edgellm_model& h) {
    need(n_tokens, "n_tokens");
    need_size(capacity, "capacity");
    if (capacity > 0) need(tokens, "tokens");
    const std::string_view s = text_arg(text, text_length, "text");
    const Tokenizer& tok = tokenizer_of(h);
    // A text that already starts with BOS's text (a rendered chat template)
    // gets no second BOS, as `edgellm template --tokens` does.
    const Vocab& v = tok.vocab();
    const bool has_bos = parse_special && v.bos >= 0 && s.starts_with(v.tokens[size_t(v.bos)]);
    const std::vector<int32_t> ids = tok.encode(s, add_bos != 0 && !has_bos, parse_special != 0);
    *n_tokens = int32_t(ids.size());
    if (int64_t(ids.size()) > capacity)
      refuse(EDGELLM_ERR_BUFFER_TOO_SMALL, "the text is ", ids.size(), " tokens; the buffer holds ", capacity);
    std::copy(ids.begin(), ids.end(), tokens);
  });
}

extern "C" EDGELLM_API edgellm_status edgellm_detokenize(edgellm_model* model, const int32_t* tokens,
                                                        int32_t n_tokens, char* buffer, int32_t capacity,
                                                        int32_t* length) {
  return with_model("edgellm_detokenize", model, [&](edgellm_model& h) {
    need(length, "length");
    need_size(n_tokens, "n_tokens");
    if (n_tokens > 0) need(tokens, "tokens");
    const Tokenizer& tok = tokenizer_of(h);
    const int32_t n_vocab = tok.vocab().n_tokens();
    for (int32_t i = 0; i < n_tokens; ++i)
      if (tokens[i] < 0 || tokens[i] >= n_vocab)
        refuse(EDGELLM_ERR_INVALID_ARGUMENT, "tokens[", i, "] = ", tokens[i], " is not a token id (the vocabulary has ",
               n_vocab, ")");
    copy_out(detokenize(tok, std::vector<int32_t>(tokens, tokens + n_tokens)), buffer, capacity, length);
  });
}

extern "C" EDGELLM_API edgellm_status edgellm_apply_chat_template(edgellm_model* model, const char* template_name,
                                                                 const char* messages_json,
                                                                 int32_t add_generation_prompt, char* buffer,
                                                                 int32_t capacity, int32_t* length) {
  return with_model("edgellm_apply_chat_template", model, [&](edgellm_model& h) {
    need(length, "length");
    const std::string_view json = text_arg(messages_json, -1, "messages_json");
    std::string template_text;
    if (template_name) {
      check_utf8(template_name, "template_name");
      const char* t = tmpl::builtin_chat_template(template_name);
      if (!t) {
        std::string names;
        for (const std::string& n : tmpl::builtin_chat_template_names()) names += (names.empty() ? "" : ", ") + n;
        refuse(EDGELLM_ERR_INVALID_ARGUMENT, "no built-in chat template '", template_name, "' (available: ", names,
               "; or NULL for the model's own)");
      }
      template_text = t;
    } else {
      const gguf::Value* t = h.model->file().find("tokenizer.chat_template");
      if (!t)
        refuse(EDGELLM_ERR_FAILED, "the model has no chat template (tokenizer.chat_template); name a built-in one");
      template_text = t->as_string("tokenizer.chat_template");
    }
    tmpl::Conversation conv;
    try {
      conv = tmpl::parse_conversation(json, "messages_json");
    } catch (const Error& e) {
      refuse(EDGELLM_ERR_INVALID_ARGUMENT, e.what());
    }
    const Vocab* v = h.model->tokenizer() ? &h.model->tokenizer()->vocab() : nullptr;
    const std::string bos = v && v->bos >= 0 ? v->tokens[size_t(v->bos)] : "";
    const std::string eos = v && v->eos >= 0 ? v->tokens[size_t(v->eos)] : "";
    copy_out(tmpl::render_chat(template_text, conv.messages, add_generation_prompt != 0, bos, eos, conv.extra), buffer,
             capacity, length);
  });
}
