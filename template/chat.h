// Chat prompts: render a model's chat template (tokenizer.chat_template) or a
// built-in one for a list of OpenAI-style messages.
//
// The variables a template sees are those transformers passes: messages,
// add_generation_prompt, bos_token, eos_token, plus `extra` (tools,
// enable_thinking, ...). Later entries win: bos_token, eos_token, extra,
// messages, add_generation_prompt. A template that fails is an error that
// names the line and construct; there is no silent fallback to another one.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "template/json.h"
#include "template/value.h"

namespace edgellm::tmpl {

std::string render_chat(std::string_view template_text, const Json& messages, bool add_generation_prompt,
                        const std::string& bos_token, const std::string& eos_token,
                        const Json& extra = Json::object(), const Limits& lim = {});

// A conversation file: an array of messages, or an object with "messages"
// and further template variables beside it (e.g. "tools"). Checks that each
// message is an object with a string "role".
struct Conversation {
  Json messages;           // array
  Json extra = Json::object();
};
Conversation parse_conversation(std::string_view json_text, std::string_view source = "messages");

// Built-in templates, selected by name (--chat-template chatml): the Jinja
// text, or null if there is none of that name.
const char* builtin_chat_template(std::string_view name);
std::vector<std::string> builtin_chat_template_names();

}  // namespace edgellm::tmpl
