#include "template/chat.h"

#include "base/error.h"
#include "template/template.h"

namespace edgellm::tmpl {

std::string render_chat(std::string_view template_text, const Json& messages, bool add_generation_prompt,
                        const std::string& bos_token, const std::string& eos_token, const Json& extra,
                        const Limits& lim) {
  if (!messages.is_array()) fail("chat messages must be a JSON array");
  if (!extra.is_object()) fail("extra template variables must be a JSON object");
  Json vars = Json::object();
  vars.set("bos_token", Json::string(bos_token));
  vars.set("eos_token", Json::string(eos_token));
  for (const auto& [k, v] : extra.entries()) vars.set(k, v);
  vars.set("messages", messages);
  vars.set("add_generation_prompt", Json::boolean(add_generation_prompt));
  return Template::parse(template_text).render(vars, lim);
}

Conversation parse_conversation(std::string_view json_text, std::string_view source) {
  Json doc = Json::parse(json_text, source);
  Conversation c;
  if (doc.is_array()) {
    c.messages = std::move(doc);
  } else if (doc.is_object() && doc.find("messages") && doc.find("messages")->is_array()) {
    for (const auto& [k, v] : doc.entries()) {
      if (k == "messages") c.messages = v;
      else c.extra.set(k, v);
    }
  } else {
    fail(source, ": expected an array of messages, or an object with a \"messages\" array");
  }
  const auto& items = c.messages.items();
  for (size_t i = 0; i < items.size(); ++i) {
    const Json* role = items[i].is_object() ? items[i].find("role") : nullptr;
    if (!role || !role->is_string())
      fail(source, ": message ", i, " must be an object with a string \"role\" (OpenAI chat format)");
  }
  return c;
}

namespace {

struct Builtin {
  const char* name;
  const char* text;
};

// Each is written in the dialect it is rendered with, and tested against the
// reference renderer like the models' own templates.
const Builtin kBuiltins[] = {
    {"chatml", R"TPL({%- for message in messages -%}
{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}
)TPL"},
    {"llama2", R"TPL({%- if messages[0]['role'] == 'system' -%}
{%- set system = messages[0]['content'] -%}{%- set loop_messages = messages[1:] -%}
{%- else -%}{%- set system = none -%}{%- set loop_messages = messages -%}{%- endif -%}
{%- for message in loop_messages -%}
{%- if message['role'] == 'user' -%}
{%- if loop.first and system is not none -%}
{%- set content = '<<SYS>>\n' + system + '\n<</SYS>>\n\n' + message['content'] -%}
{%- else -%}{%- set content = message['content'] -%}{%- endif -%}
{{- bos_token + '[INST] ' + content | trim + ' [/INST]' -}}
{%- elif message['role'] == 'assistant' -%}
{{- ' ' + message['content'] | trim + ' ' + eos_token -}}
{%- endif -%}
{%- endfor -%}
)TPL"},
    {"llama3", R"TPL({{- bos_token -}}
{%- for message in messages -%}
{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}{%- endif -%}
)TPL"},
    {"mistral", R"TPL({{- bos_token -}}
{%- if messages[0]['role'] == 'system' -%}
{%- set system = messages[0]['content'] + '\n\n' -%}{%- set loop_messages = messages[1:] -%}
{%- else -%}{%- set system = '' -%}{%- set loop_messages = messages -%}{%- endif -%}
{%- for message in loop_messages -%}
{%- if message['role'] == 'user' -%}
{{- '[INST] ' + (system if loop.first else '') + message['content'] + '[/INST]' -}}
{%- elif message['role'] == 'assistant' -%}
{{- message['content'] + eos_token -}}
{%- endif -%}
{%- endfor -%}
)TPL"},
    {"phi3", R"TPL({%- for message in messages -%}
{%- if message['role'] == 'system' and message['content'] -%}
{{- '<|system|>\n' + message['content'] + '<|end|>\n' -}}
{%- elif message['role'] == 'user' -%}
{{- '<|user|>\n' + message['content'] + '<|end|>\n' -}}
{%- elif message['role'] == 'assistant' -%}
{{- '<|assistant|>\n' + message['content'] + '<|end|>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>\n' -}}{%- else -%}{{- eos_token -}}{%- endif -%}
)TPL"},
    {"gemma", R"TPL({{- bos_token -}}
{%- if messages[0]['role'] == 'system' -%}
{%- set system = messages[0]['content'] | trim + '\n\n' -%}{%- set loop_messages = messages[1:] -%}
{%- else -%}{%- set system = '' -%}{%- set loop_messages = messages -%}{%- endif -%}
{%- for message in loop_messages -%}
{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
{{- '<start_of_turn>' + role + '\n' + (system if loop.first else '') + message['content'] | trim + '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<start_of_turn>model\n' -}}{%- endif -%}
)TPL"},
    {"zephyr", R"TPL({%- for message in messages -%}
{{- '<|' + message['role'] + '|>\n' + message['content'] + eos_token + '\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>\n' -}}{%- endif -%}
)TPL"},
};

}  // namespace

const char* builtin_chat_template(std::string_view name) {
  for (const Builtin& b : kBuiltins)
    if (name == b.name) return b.text;
  return nullptr;
}

std::vector<std::string> builtin_chat_template_names() {
  std::vector<std::string> names;
  for (const Builtin& b : kBuiltins) names.push_back(b.name);
  return names;
}

}  // namespace edgellm::tmpl
