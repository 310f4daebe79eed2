#include "apps/edgellm/chat_conversation.h"

namespace edgellm::cli {

namespace {
bool has_role(const tmpl::Json& m, const char* role) {
  const tmpl::Json* r = m.is_object() ? m.find("role") : nullptr;
  return r && r->is_string() && r->as_string() == role;
}
}  // namespace

tmpl::Json chat_message(const std::string& role, const std::string& content) {
  return tmpl::Json::object({{"role", tmpl::Json::string(role)}, {"content", tmpl::Json::string(content)}});
}

void ChatConversation::reset() {
  messages.clear();
  if (!system.empty()) messages.push_back(chat_message("system", system));
  logical.clear();
}

ChatPrompt ChatConversation::render() const {
  return build_chat_prompt(tok, template_text, tmpl::Json::array(messages), true, opt);
}

ChatPrompt ChatConversation::render_last_alone() const {
  std::vector<tmpl::Json> alone;
  if (!messages.empty() && has_role(messages.front(), "system") && messages.size() > 1) alone.push_back(messages.front());
  if (!messages.empty()) alone.push_back(messages.back());
  return build_chat_prompt(tok, template_text, tmpl::Json::array(std::move(alone)), true, opt);
}

bool ChatConversation::drop_oldest_turn() {
  size_t first = 0;
  while (first < messages.size() && has_role(messages[first], "system")) ++first;
  size_t end = first + 1;  // the next user message starts the next turn
  while (end < messages.size() && !has_role(messages[end], "user")) ++end;
  if (end >= messages.size()) return false;  // that was the last turn
  messages.erase(messages.begin() + long(first), messages.begin() + long(end));
  return true;
}

std::string DroppedTurns::say() const {
  return "dropped " + std::to_string(turns) + " oldest turn" + (turns == 1 ? "" : "s") + ": " +
         std::to_string(tokens) + " tokens";
}

DroppedTurns drop_turns_to_fit(ChatConversation& c, ChatPrompt* prompt, size_t tail, size_t limit) {
  DroppedTurns d;
  const size_t before = prompt->tokens.size();
  while (prompt->tokens.size() + tail > limit && c.drop_oldest_turn()) {
    ++d.turns;
    *prompt = c.render();
  }
  d.tokens = int64_t(before) - int64_t(prompt->tokens.size());
  return d;
}

}  // namespace edgellm::cli
