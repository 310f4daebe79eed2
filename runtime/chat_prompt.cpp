#include "runtime/chat_prompt.h"

#include <algorithm>

#include "base/error.h"
#include "template/chat.h"

namespace edgellm {

namespace {

size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Message text kept literal (parse_special_in_messages = false).
//
// Where a message's text ends up in the rendered prompt is the template's
// business (it may trim it, wrap it, repeat it, join it to a system prompt),
// so the spans are not computed from the template: before rendering, every
// control token's text inside a message string is replaced by a marker of
// letters and digits (which trim, escape and tojson leave alone), and after
// rendering each marker is put back and its bytes recorded as a literal
// span. Nothing else of the message changes, so the template renders
// exactly what it would have, and the tokenizer then skips control tokens
// that overlap those spans (Tokenizer::encode_with_literals).
class Literalizer {
 public:
  Literalizer(const Vocab& v, std::string_view template_text, const tmpl::Json& messages, const tmpl::Json& extra) {
    for (int32_t id = 0; id < v.n_tokens(); ++id) {
      const TokenType t = v.type(id);
      const std::string& s = v.tokens[size_t(id)];
      if ((t == TokenType::Control || t == TokenType::Unknown) && !s.empty())
        by_first_[uint8_t(s[0])].push_back(s);
    }
    // A marker prefix found nowhere in the inputs, so every one in the output is ours.
    const std::string inputs = std::string(template_text) + messages.dump() + extra.dump();
    for (int n = 0;; ++n) {
      prefix_ = "ELLMLIT" + std::to_string(n) + "N";
      if (inputs.find(prefix_) == std::string::npos) break;
    }
  }

  // Messages: every string except the top-level "role" of a message.
  tmpl::Json messages(const tmpl::Json& msgs) {
    std::vector<tmpl::Json> out;
    for (const tmpl::Json& m : msgs.items()) {
      if (!m.is_object()) {
        out.push_back(value(m));
        continue;
      }
      std::vector<std::pair<std::string, tmpl::Json>> entries;
      for (const auto& [k, v] : m.entries()) entries.emplace_back(k, k == "role" ? v : value(v));
      out.push_back(tmpl::Json::object(std::move(entries)));
    }
    return tmpl::Json::array(std::move(out));
  }

  tmpl::Json value(const tmpl::Json& j) {
    switch (j.type()) {
      case tmpl::Json::Type::String: return tmpl::Json::string(text(j.as_string()));
      case tmpl::Json::Type::Array: {
        std::vector<tmpl::Json> items;
        for (const tmpl::Json& x : j.items()) items.push_back(value(x));
        return tmpl::Json::array(std::move(items));
      }
      case tmpl::Json::Type::Object: {
        std::vector<std::pair<std::string, tmpl::Json>> entries;
        for (const auto& [k, v] : j.entries()) entries.emplace_back(k, value(v));
        return tmpl::Json::object(std::move(entries));
      }
      default: return j;
    }
  }

  bool any() const { return !originals_.empty(); }

  // The rendered text with every marker replaced by what it stood for;
  // *spans gets their byte ranges there.
  std::string restore(const std::string& rendered, std::vector<TextSpan>* spans) const {
    std::string out;
    out.reserve(rendered.size());
    size_t pos = 0;
    for (size_t f; (f = rendered.find(prefix_, pos)) != std::string::npos;) {
      out.append(rendered, pos, f - pos);
      size_t q = f + prefix_.size(), idx = 0;
      const size_t digits = q;
      while (q < rendered.size() && q - digits < 9 && rendered[q] >= '0' && rendered[q] <= '9')
        idx = idx * 10 + size_t(rendered[q++] - '0');
      if (q == digits || q >= rendered.size() || rendered[q] != 'Z' || idx >= originals_.size())
        fail("the chat template cut a message's text inside a control token's text, so message text can no "
             "longer be told from the template's markup; allow control tokens in messages "
             "(parse_special_in_messages) or use another template");
      spans->push_back({out.size(), out.size() + originals_[idx].size()});
      out += originals_[idx];
      pos = q + 1;
    }
    out.append(rendered, pos, std::string::npos);
    return out;
  }

 private:
  // s with each run of control-token texts (overlapping or touching ones
  // joined) replaced by a marker.
  std::string text(const std::string& s) {
    std::string out;
    size_t copied = 0, run_begin = 0, run_end = 0;  // run_end == 0: no run open
    auto close_run = [&] {
      out.append(s, copied, run_begin - copied);
      out += prefix_ + std::to_string(originals_.size()) + "Z";
      originals_.push_back(s.substr(run_begin, run_end - run_begin));
      copied = run_end;
      run_end = 0;
    };
    for (size_t i = 0; i < s.size(); ++i) {
      if (run_end != 0 && i > run_end) close_run();
      for (const std::string& t : by_first_[uint8_t(s[i])]) {
        if (s.compare(i, t.size(), t) != 0) continue;
        if (run_end == 0) run_begin = i;
        run_end = std::max(run_end, i + t.size());
      }
    }
    if (run_end != 0) close_run();
    if (copied == 0) return s;
    out.append(s, copied, std::string::npos);
    return out;
  }

  std::vector<std::string> by_first_[256];
  std::string prefix_;
  std::vector<std::string> originals_;
};

}  // namespace

std::vector<int32_t> tokenize_chat_prompt(const Tokenizer& tok, std::string_view text,
                                          const std::vector<TextSpan>& literal) {
  // BOS as the vocabulary asks, unless the template already put it there
  // (as `edgellm template --tokens`).
  const Vocab& v = tok.vocab();
  const bool has_bos = v.bos >= 0 && text.starts_with(v.tokens[size_t(v.bos)]);
  return tok.encode_with_literals(text, v.add_bos && !has_bos, literal);
}

ChatPrompt build_chat_prompt(const Tokenizer& tok, std::string_view template_text, const tmpl::Json& messages,
                             bool add_generation_prompt, const ChatPromptOptions& opt) {
  const Vocab& v = tok.vocab();
  const std::string bos = v.bos >= 0 ? v.tokens[size_t(v.bos)] : "";
  const std::string eos = v.eos >= 0 ? v.tokens[size_t(v.eos)] : "";
  ChatPrompt p;
  if (opt.parse_special_in_messages) {
    p.text = tmpl::render_chat(template_text, messages, add_generation_prompt, bos, eos, opt.extra, opt.limits);
  } else {
    if (!messages.is_array()) fail("chat messages must be a JSON array");
    Literalizer lit(v, template_text, messages, opt.extra);
    const tmpl::Json msgs = lit.messages(messages), extra = lit.value(opt.extra);
    const std::string rendered =
        tmpl::render_chat(template_text, lit.any() ? msgs : messages, add_generation_prompt, bos, eos,
                          lit.any() ? extra : opt.extra, opt.limits);
    p.text = lit.any() ? lit.restore(rendered, &p.literal) : rendered;
  }
  p.tokens = tokenize_chat_prompt(tok, p.text, p.literal);
  return p;
}

std::optional<DroppedRun> find_dropped_run(std::span<const int32_t> cached, std::span<const int32_t> logical) {
  if (cached.size() > logical.size()) return std::nullopt;
  const size_t at = common_prefix(cached, logical), len = logical.size() - cached.size();
  if (len == 0) return at == cached.size() ? std::optional<DroppedRun>(DroppedRun{at, 0}) : std::nullopt;
  if (at == cached.size()) return std::nullopt;  // a prefix: nothing after the "run" is cached
  if (!std::equal(cached.begin() + long(at), cached.end(), logical.begin() + long(at + len))) return std::nullopt;
  return DroppedRun{at, len};
}

PrefillPlan plan_prefill(std::span<const int32_t> cached, std::span<const int32_t> prompt,
                         std::span<const int32_t> logical) {
  PrefillPlan p;
  const std::optional<DroppedRun> run = logical.empty() ? std::nullopt : find_dropped_run(cached, logical);
  if (run && run->len > 0) {
    size_t l = common_prefix(logical, prompt);
    if (l == prompt.size() && l > 0) --l;  // at least one id is evaluated
    if (l >= run->at + run->len) {
      p.keep = l - run->len;  // the positions after the run, up to the difference
      p.covered = l;
    } else {
      p.keep = p.covered = std::min(l, run->at);
    }
  } else {
    size_t l = common_prefix(cached, prompt);
    if (l == prompt.size() && l > 0) --l;
    p.keep = p.covered = l;
  }
  p.feed.assign(prompt.begin() + long(p.covered), prompt.end());
  return p;
}

}  // namespace edgellm
