// Stop strings for a text stream. Generated text arrives a token's piece at
// a time and a stop string may span several pieces ("\n\nUser" as "\n",
// "\nUs", "er"), so text that could still turn out to be the start of a stop
// string is held back until the next piece decides: the client never sees a
// partial stop string, and sees exactly the text before the first stop.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace edgellm {

class StopText {
 public:
  explicit StopText(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Appends a piece; returns the text now safe to send. After a stop string
  // completes, stopped() is true and the text before it is all that is sent.
  std::string push(std::string_view piece);
  // The end of generation: whatever was held back (no stop can complete now).
  std::string flush();
  bool stopped() const { return stopped_; }
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace edgellm
