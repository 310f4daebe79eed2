// The built-in prompts of `edgellm bench --scenario`: fixed texts, so that
// two runs of a scenario on the same model feed the same tokens and a run on
// another model feeds the same words. Written for this project (no dataset
// is downloaded or copied); English prose of the kind a phone assistant is
// asked about. Token counts are for a ~4-characters-per-token BPE vocabulary
// (qwen2, llama3); other vocabularies give other counts, which the record
// states.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace edgellm {

struct ScenarioSpec {
  std::string name;                 // "chat", "summary", "multiturn"
  std::vector<std::string> turns;   // the user's messages, one per turn
  int64_t n_gen_per_turn = 0;       // tokens generated after each
  int64_t default_ctx = 0;          // context the session is planned for (capped at the model's)
};

// "chat": one ~50-token question, 128 tokens generated.
// "summary": an ~800-token document to summarize, 256 generated.
// "multiturn": 8 turns of one conversation (the document, then follow-up
//   questions), 256 tokens generated each; ~3,200 tokens of context at the end.
// Throws Error for another name.
ScenarioSpec builtin_scenario(std::string_view name);
// "chat, summary, multiturn", for messages.
const char* scenario_names();
// The summary document alone (tests check its length).
std::string_view summary_document();

}  // namespace edgellm
