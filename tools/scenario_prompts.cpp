#include "tools/scenario_prompts.h"

#include "base/error.h"

namespace edgellm {

namespace {

constexpr std::string_view kChatQuestion =
    "I have a small balcony that gets about four hours of afternoon sun. Which three vegetables would you "
    "suggest I grow in pots there this spring, and how often should I water them?";

// ~600 words: ~800 tokens in qwen2's or llama3's vocabulary.
constexpr std::string_view kDocument =
    "Report of the Riverside Water Committee, prepared for the spring town meeting.\n\n"
    "For most of the last century the town drew its water from two wells on the east bank of the river and "
    "stored it in a brick reservoir on Cooper Hill. The wells were dug in 1921 and deepened twice, in 1948 and "
    "again in 1976, when a dry summer lowered the water table by almost three meters. The reservoir holds "
    "about two days of ordinary use. Pipes laid before 1960 are cast iron; those laid later are mostly ductile "
    "iron, with a few short runs of plastic near the new school.\n\n"
    "Three problems brought the committee together last year. First, the pumps at the north well are forty "
    "years old. Replacement parts must now be machined by hand, and each repair has taken between one and "
    "three weeks, during which the south well alone cannot keep the reservoir full on hot afternoons. Second, "
    "about a fifth of the water pumped never reaches a meter. Night-time flow measurements in October pointed "
    "to leaks in the oldest cast-iron mains under Mill Street and Orchard Lane. Third, the state has lowered "
    "the permitted level of nitrate in drinking water, and samples from the north well exceeded the new limit "
    "on four of twelve days in August, probably because of fertilizer from the fields upstream.\n\n"
    "The committee considered four options. The cheapest was to repair the north well's pumps once more and "
    "wait; it was rejected because it answers none of the other problems and the next failure could come in "
    "the middle of summer. The second option was to drill a third well on the west bank, where older surveys "
    "found deeper water with less nitrate. Test drilling in November confirmed this: nitrate at a quarter of "
    "the limit and a steady yield during a three-day pumping test. The third option was to buy water from the "
    "neighboring city through a new six-kilometer main. The city offered a fair price, but the main alone "
    "would cost more than the new well and the town would lose control of its own supply. The fourth option, "
    "a treatment plant that removes nitrate, works but would double the yearly running cost because of the "
    "energy it uses and the brine it leaves behind.\n\n"
    "The committee recommends the second option together with a program of main replacement. The new well "
    "would take over from the north well, which would be kept in reserve for emergencies and tested monthly. "
    "The Mill Street and Orchard Lane mains, about two kilometers in all, would be replaced over two summers, "
    "starting with the sections where the October measurements found the largest losses. Meters on the "
    "reservoir outlet and at four points in the network would be read automatically every fifteen minutes, "
    "so that new leaks are found within days instead of years.\n\n"
    "The total cost is estimated at 2.4 million, of which a state grant for water quality could cover up to "
    "forty percent. The remainder would be borrowed over twenty years. For a typical household the water bill "
    "would rise by about eight percent in the first year and then stay level, because the lost water and the "
    "repairs the town pays for today would mostly disappear. If the meeting approves the plan in April, "
    "drilling could start in June and the new well could supply the town before the end of the year.\n\n"
    "Members of the public raised two concerns at the hearings. Farmers on the west bank asked whether the new "
    "well would lower the water in their own wells; the pumping test showed no measurable change at the two "
    "nearest farms, and the committee proposes to keep measuring them for five years. Several residents asked "
    "why the reservoir is not being enlarged; the committee found that with the leaks repaired, two days of "
    "storage is enough, and a larger reservoir would let water stand long enough to lose its chlorine.";

constexpr std::string_view kFollowUps[] = {
    "Thank you. Which of the three problems did the committee consider the most urgent, and why do you think "
    "so from the report?",
    "Explain in simple words why the committee rejected buying water from the neighboring city. Were there any "
    "advantages to that option?",
    "How much of the 2.4 million would the town have to borrow if the state grant covers the largest share it "
    "can? Show the calculation.",
    "What would you say to a farmer on the west bank who is still worried about the new well after hearing "
    "about the pumping test?",
    "Write three short questions a reporter might ask the committee chair at the town meeting, each with a "
    "one-sentence answer based on the report.",
    "Is there anything important the report does not say that a careful voter would want to know before "
    "approving the plan? List a few points.",
    "Finally, summarize our whole conversation in a short paragraph that I could read aloud at the start of the "
    "meeting.",
};

}  // namespace

std::string_view summary_document() { return kDocument; }

const char* scenario_names() { return "chat, summary, multiturn"; }

ScenarioSpec builtin_scenario(std::string_view name) {
  ScenarioSpec s;
  s.name = std::string(name);
  if (name == "chat") {
    s.turns = {std::string(kChatQuestion)};
    s.n_gen_per_turn = 128;
    s.default_ctx = 512;
  } else if (name == "summary") {
    s.turns = {"Summarize the following report in a few sentences for a busy reader.\n\n" + std::string(kDocument)};
    s.n_gen_per_turn = 256;
    s.default_ctx = 2048;
  } else if (name == "multiturn") {
    s.turns = {"I will ask you some questions about this report; first, what is it about?\n\n" +
               std::string(kDocument)};
    for (std::string_view q : kFollowUps) s.turns.emplace_back(q);
    s.n_gen_per_turn = 256;
    s.default_ctx = 4096;
  } else {
    fail("--scenario: unknown scenario '", name, "' (", scenario_names(), ")");
  }
  return s;
}

}  // namespace edgellm
