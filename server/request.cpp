#include "server/request.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "server/api_error.h"

namespace edgellm::server {

using nlohmann::json;

namespace {

// The field, or null when absent or JSON null (OpenAI clients send nulls for
// parameters they leave unset).
const json* field(const json& body, const char* key) {
  const auto it = body.find(key);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::optional<double> get_number(const json& body, const char* key, double lo, double hi) {
  const json* v = field(body, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) bad_field(key, "must be a number, got " + std::string(v->type_name()));
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < lo || d > hi)
    bad_field(key, "must be between " + json(lo).dump() + " and " + json(hi).dump() + ", got " + json(d).dump());
  return d;
}

std::optional<int64_t> get_int(const json& body, const char* key, int64_t lo, int64_t hi) {
  const json* v = field(body, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) bad_field(key, "must be an integer, got " + std::string(v->type_name()));
  const double d = v->get<double>();
  if (!std::isfinite(d) || d != std::floor(d)) bad_field(key, "must be an integer, got " + v->dump());
  if (d < double(lo) || d > double(hi))
    bad_field(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + v->dump());
  return v->is_number_unsigned() ? int64_t(v->get<uint64_t>()) : v->is_number_integer() ? v->get<int64_t>() : int64_t(d);
}

std::optional<bool> get_bool(const json& body, const char* key) {
  const json* v = field(body, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) bad_field(key, "must be true or false, got " + std::string(v->type_name()));
  return v->get<bool>();
}

// nlohmann -> the template engine's JSON (the depth is bounded by parse_body).
tmpl::Json to_template_json(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return tmpl::Json::null();
    case json::value_t::boolean: return tmpl::Json::boolean(v.get<bool>());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return tmpl::Json::number(v.get<double>());
    case json::value_t::string: return tmpl::Json::string(v.get<std::string>());
    case json::value_t::array: {
      tmpl::Json a = tmpl::Json::array();
      for (const json& item : v) a.push_back(to_template_json(item));
      return a;
    }
    case json::value_t::object: {
      tmpl::Json o = tmpl::Json::object();
      for (const auto& [k, item] : v.items()) o.set(k, to_template_json(item));
      return o;
    }
    default: return tmpl::Json::null();  // binary / discarded: parse_body never yields them
  }
}

// One message: role and content checked; an array content's text parts are
// joined (templates expect a string), other parts refused.
tmpl::Json read_message(const json& m, size_t i) {
  const std::string at = "messages[" + std::to_string(i) + "]";
  if (!m.is_object()) bad_field(at, "must be an object with 'role' and 'content'");
  const auto role = m.find("role");
  if (role == m.end() || !role->is_string() || role->get_ref<const std::string&>().empty())
    bad_field(at + ".role", "must be a non-empty string (system, user, assistant, tool)");
  tmpl::Json out = to_template_json(m);
  const auto content = m.find("content");
  if (content == m.end() || content->is_null() || content->is_string()) return out;
  if (!content->is_array()) bad_field(at + ".content", "must be a string, an array of text parts or null");
  std::string text;
  for (size_t j = 0; j < content->size(); ++j) {
    const json& part = (*content)[j];
    const std::string pat = at + ".content[" + std::to_string(j) + "]";
    if (!part.is_object()) bad_field(pat, "must be an object {\"type\": \"text\", \"text\": ...}");
    const auto type = part.find("type");
    if (type == part.end() || !type->is_string()) bad_field(pat + ".type", "must be a string");
    if (*type != "text")
      bad_field(pat + ".type", "'" + type->get<std::string>() + "' is not supported: this server takes text parts only");
    const auto t = part.find("text");
    if (t == part.end() || !t->is_string()) bad_field(pat + ".text", "must be a string");
    text += t->get_ref<const std::string&>();
  }
  out.set("content", tmpl::Json::string(std::move(text)));
  return out;
}

void read_prompt(const json& body, CompletionRequest& r, const RequestLimits& lim) {
  const json* p = field(body, "prompt");
  if (!p) bad_field("prompt", "is required (a string or an array of token ids)");
  if (p->is_string()) {
    r.prompt_text = p->get<std::string>();
    return;
  }
  if (!p->is_array()) bad_field("prompt", "must be a string or an array of token ids, got " + std::string(p->type_name()));
  if (p->empty()) bad_field("prompt", "is empty");
  if ((*p)[0].is_string() || (*p)[0].is_array()) {
    if (p->size() != 1) bad_field("prompt", "holds " + std::to_string(p->size()) + " prompts; send one per request");
    if ((*p)[0].is_string()) { r.prompt_text = (*p)[0].get<std::string>(); return; }
    p = &(*p)[0];  // [[ids...]]
    if (p->empty()) bad_field("prompt", "is empty");
  }
  r.prompt_ids.reserve(p->size());
  for (size_t i = 0; i < p->size(); ++i) {
    const json& id = (*p)[i];
    const std::string at = "prompt[" + std::to_string(i) + "]";
    if (!id.is_number_integer()) bad_field(at, "must be a token id (an integer)");
    const int64_t v = id.is_number_unsigned() ? int64_t(std::min<uint64_t>(id.get<uint64_t>(), INT64_MAX)) : id.get<int64_t>();
    if (v < 0 || v >= lim.n_vocab)
      bad_field(at, "token id " + std::to_string(v) + " is outside the vocabulary (0.." + std::to_string(lim.n_vocab - 1) + ")");
    r.prompt_ids.push_back(int32_t(v));
  }
}

void read_stop(const json& body, CompletionRequest& r, const RequestLimits& lim) {
  const json* s = field(body, "stop");
  if (!s) return;
  auto add = [&](const json& v, const std::string& at) {
    if (!v.is_string()) bad_field(at, "must be a string");
    const std::string& t = v.get_ref<const std::string&>();
    if (t.empty()) bad_field(at, "must not be empty");
    if (t.size() > lim.max_stop_bytes) bad_field(at, "is longer than " + std::to_string(lim.max_stop_bytes) + " bytes");
    r.stop.push_back(t);
  };
  if (s->is_string()) return add(*s, "stop");
  if (!s->is_array()) bad_field("stop", "must be a string or an array of strings");
  if (s->size() > lim.max_stop) bad_field("stop", "has more than " + std::to_string(lim.max_stop) + " strings");
  for (size_t i = 0; i < s->size(); ++i) add((*s)[i], "stop[" + std::to_string(i) + "]");
}

void read_logit_bias(const json& body, SamplerParams& sp, int32_t n_vocab) {
  const json* b = field(body, "logit_bias");
  if (!b) return;
  if (!b->is_object()) bad_field("logit_bias", "must be an object {\"token id\": bias}");
  if (b->size() > 1024) bad_field("logit_bias", "has more than 1024 entries");
  for (const auto& [key, v] : b->items()) {
    const std::string at = "logit_bias." + key;
    size_t used = 0;
    long long id = -1;
    try { id = std::stoll(key, &used); } catch (...) { used = 0; }
    if (used == 0 || used != key.size()) bad_field(at, "key must be a token id (decimal integer)");
    if (id < 0 || id >= n_vocab)
      bad_field(at, "token id " + key + " is outside the vocabulary (0.." + std::to_string(n_vocab - 1) + ")");
    if (!v.is_number()) bad_field(at, "must be a number between -100 and 100");
    const double d = v.get<double>();
    if (!(d >= -100 && d <= 100)) bad_field(at, "must be between -100 and 100, got " + v.dump());
    sp.logit_bias.emplace_back(int32_t(id), float(d));
  }
}

}  // namespace

// The deepest nesting of arrays and objects in a JSON text (brackets inside
// strings not counted); a linear scan, whatever the text is.
int json_nesting(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

json parse_body(const std::string& body, int max_depth) {
  // The depth is checked before parsing so that what later walks the value
  // (and its destructor) stays shallow. (Not through nlohmann's parser
  // callback: its end_object rescans the enclosing array each time, which
  // made 10^5 messages take seconds.)
  if (json_nesting(body) > max_depth)
    throw ApiError(400, "the JSON body nests deeper than " + std::to_string(max_depth) + " levels");
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {  // parse_error, out_of_range (1e400), ...
    std::string what = e.what();
    if (const auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    throw ApiError(400, "the body is not valid JSON: " + what);
  }
  if (!j.is_object()) throw ApiError(400, "the body must be a JSON object, got " + std::string(j.type_name()));
  return j;
}

CompletionRequest parse_completion_request(const json& body, bool chat, const RequestLimits& lim) {
  CompletionRequest r;
  r.chat = chat;
  if (const json* m = field(body, "model")) {
    if (!m->is_string()) bad_field("model", "must be a string");
    r.model = m->get<std::string>();
  }
  if (chat) {
    const json* msgs = field(body, "messages");
    if (!msgs) bad_field("messages", "is required (an array of {role, content})");
    if (!msgs->is_array()) bad_field("messages", "must be an array of {role, content}, got " + std::string(msgs->type_name()));
    if (msgs->empty()) bad_field("messages", "is empty");
    if (msgs->size() > lim.max_messages)
      bad_field("messages", "has " + std::to_string(msgs->size()) + " messages; the limit is " + std::to_string(lim.max_messages));
    r.messages = tmpl::Json::array();
    for (size_t i = 0; i < msgs->size(); ++i) r.messages.push_back(read_message((*msgs)[i], i));
    if (const json* k = field(body, "chat_template_kwargs")) {
      if (!k->is_object()) bad_field("chat_template_kwargs", "must be an object");
      for (const auto& [key, v] : k->items()) r.template_extra.set(key, to_template_json(v));
    }
    if (const json* t = field(body, "tools")) {
      if (!t->is_array()) bad_field("tools", "must be an array");
      r.template_extra.set("tools", to_template_json(*t));
    }
  } else {
    read_prompt(body, r, lim);
    r.echo = get_bool(body, "echo").value_or(false);
  }

  if (const json* n = field(body, "n")) {
    if (!n->is_number_integer()) bad_field("n", "must be an integer");
    if (*n != 1) bad_field("n", "must be 1: this server returns one choice per request (send n requests for n choices)");
  }
  if (const json* f = field(body, "response_format")) {
    const json* type = f->is_object() ? field(*f, "type") : nullptr;
    if (!type || !type->is_string()) bad_field("response_format", "must be an object with a string 'type'");
    if (*type != "text")
      bad_field("response_format", "type '" + type->get<std::string>() + "' is not supported (only \"text\")");
  }

  const int64_t tokens_hi = std::numeric_limits<int32_t>::max();
  auto max_tokens = get_int(body, "max_tokens", chat ? 1 : 0, tokens_hi);
  if (auto mct = get_int(body, "max_completion_tokens", chat ? 1 : 0, tokens_hi)) max_tokens = mct;
  r.max_tokens = max_tokens;

  // Defaults as llama.cpp's server: what local-model users expect of a
  // local server (OpenAI's temperature 1 without truncation makes small
  // models ramble).
  SamplerParams& sp = r.sampling;
  sp.temp = float(get_number(body, "temperature", 0, 2).value_or(0.8));
  const double top_p = get_number(body, "top_p", 0, 1).value_or(0.95);
  sp.top_p = top_p <= 0 ? 1e-9f : float(top_p);  // 0: keep only the best token
  sp.top_k = int32_t(get_int(body, "top_k", 0, lim.n_vocab).value_or(40));
  sp.min_p = float(get_number(body, "min_p", 0, 1).value_or(0.05));
  sp.presence_penalty = float(get_number(body, "presence_penalty", -2, 2).value_or(0));
  sp.frequency_penalty = float(get_number(body, "frequency_penalty", -2, 2).value_or(0));
  sp.repeat_penalty = float(get_number(body, "repeat_penalty", 0.01, 10).value_or(1));
  sp.repeat_last_n = int32_t(get_int(body, "repeat_last_n", -1, tokens_hi).value_or(64));
  if (auto seed = get_int(body, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max())) {
    sp.seed = uint64_t(*seed);
    r.seeded = true;
  }
  read_logit_bias(body, sp, lim.n_vocab);
  read_stop(body, r, lim);

  r.stream = get_bool(body, "stream").value_or(false);
  if (const json* so = field(body, "stream_options")) {
    if (!so->is_object()) bad_field("stream_options", "must be an object");
    r.include_usage = get_bool(*so, "include_usage").value_or(false);
  }

  if (chat) {
    r.logprobs = get_bool(body, "logprobs").value_or(false);
    if (auto top = get_int(body, "top_logprobs", 0, 20)) {
      if (!r.logprobs) bad_field("top_logprobs", "needs 'logprobs': true");
      r.top_logprobs = int(*top);
    }
  } else if (auto lp = get_int(body, "logprobs", 0, 20)) {
    r.logprobs = true;  // the legacy API: an integer, the number of alternatives
    r.top_logprobs = int(*lp);
  }
  return r;
}

}  // namespace edgellm::server
