// Chat prompts as token ids, and what of them a live KV cache still needs:
// the part of a multi-turn chat that `edgellm chat`, the server and the C API
// share.
//
// Each turn the whole conversation is rendered with the chat template and
// tokenized as one text, exactly as `edgellm template --tokens` does
// (build_chat_prompt); the cache keeps its longest common prefix with those
// ids and only the rest is prefilled (plan_prefill). Tokenizing each turn's
// new text on its own is not the same thing: SentencePiece gives every
// separately tokenized text a dummy-prefix "▁", and BPE merges across the
// seam differ, so the cache would hold ids the model never sees for that
// conversation anywhere else. The reply's own ids stay in the cache; if the
// reply's text tokenizes differently inside the next prompt, the common
// prefix ends there and the rest is prefilled again.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "template/json.h"
#include "template/value.h"
#include "tokenizer/tokenizer.h"

namespace edgellm {

struct ChatPromptOptions {
  // Whether the text of a control token typed inside a message (a user
  // writing "<|im_start|>system") becomes that control token.
  //   true:  yes, as llama.cpp's chat and `edgellm template --tokens` do
  //          (the whole rendered prompt is parsed for control tokens);
  //   false: no, the message's text stays text; only the template's own
  //          markup becomes control tokens (what a server facing untrusted
  //          clients wants). Strings of `extra` (tools, ...) are treated as
  //          message text too.
  // User-defined tokens (e.g. "<think>") are recognised everywhere either
  // way, as in llama.cpp.
  bool parse_special_in_messages = true;
  tmpl::Json extra = tmpl::Json::object();  // further template variables (tools, enable_thinking, ...)
  tmpl::Limits limits;
};

struct ChatPrompt {
  std::string text;              // the rendered prompt
  std::vector<int32_t> tokens;   // its ids
  // parse_special_in_messages = false: the bytes of `text` that came from
  // messages and spell a control token's text (kept as plain text).
  std::vector<TextSpan> literal;
};

// Renders `messages` (a JSON array of {role, content, ...}) with the chat
// template, bos_token / eos_token being the vocabulary's BOS / EOS texts (or
// ""), and tokenizes the result as one text: BOS first when the vocabulary
// adds one and the text does not already start with it, control tokens
// parsed (within messages only with parse_special_in_messages). Template and
// tokenizer errors are thrown (edgellm::Error). With
// parse_special_in_messages = false, a template that cuts a message's text
// through a control token's text (e.g. content[:10]) is an Error too: what
// came from the message could no longer be told apart.
ChatPrompt build_chat_prompt(const Tokenizer& tok, std::string_view template_text, const tmpl::Json& messages,
                             bool add_generation_prompt, const ChatPromptOptions& opt = {});

// The ids of a rendered prompt, as `edgellm template --tokens` gives them
// (see build_chat_prompt); `literal` as Tokenizer::encode_with_literals.
std::vector<int32_t> tokenize_chat_prompt(const Tokenizer& tok, std::string_view text,
                                          const std::vector<TextSpan>& literal = {});

// What to do with a KV cache before the next prompt.
struct PrefillPlan {
  size_t keep = 0;     // truncate the cache to this many positions first (never more than it holds)
  size_t covered = 0;  // prompt ids those positions stand for (more than keep when a policy dropped some)
  std::vector<int32_t> feed;  // prompt[covered:], to prefill after them; not empty unless the prompt is
};

// Where one run of positions was dropped: the cache holds
// logical[0, at) + logical[at + len, end).
struct DroppedRun {
  size_t at = 0, len = 0;
};

// Whether `cached` is `logical` with one run removed from its middle (what a
// context shift or window leaves: the later ids move down); len = 0 when the
// two are equal. nullopt otherwise, including when cached is only a prefix
// of logical (nothing after the "run" is cached).
std::optional<DroppedRun> find_dropped_run(std::span<const int32_t> cached, std::span<const int32_t> logical);

// Plans the next prefill of a cache holding `cached` for the whole prompt
// `prompt` (e.g. build_chat_prompt's tokens): keep the longest common prefix,
// feed the rest. At least one id is always fed (its logits start the reply),
// so a prompt equal to the cache re-evaluates its last id.
//
// `logical` (optional): what the cache stood for, in prompt ids, before a
// context policy dropped a run of positions from it (the previous prompt and
// its reply). If cached is logical with one run removed (find_dropped_run),
// the cache is matched as that: when the prompt still agrees with logical
// past the dropped run, the surviving positions are kept and only the new
// ids are fed, so a long conversation keeps going after a shift without
// being prefilled again (which would not fit the context). When the prompt
// differs before the run's end, the cache is kept up to the difference or
// the run, whichever comes first. Otherwise logical is ignored.
PrefillPlan plan_prefill(std::span<const int32_t> cached, std::span<const int32_t> prompt,
                         std::span<const int32_t> logical = {});

}  // namespace edgellm
