// edgellm: one binary, one subcommand per job. Errors from the library arrive
// as edgellm::Error and leave as one "error: ..." line and exit status 1.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "base/text_escape.h"

namespace {

struct Command {
  const char* name;
  int (*fn)(int, char**);
  const char* help;
};

const Command kCommands[] = {
    {"run", edgellm::cli::cmd_run, "generate text from a prompt"},
    {"inspect", edgellm::cli::cmd_inspect, "show a GGUF file's metadata, tensors and resolved architecture"},
    {"eval", edgellm::cli::cmd_eval, "evaluate a prompt and dump per-position logits"},
    {"synth", edgellm::cli::cmd_synth, "write a random-weight model of a real architecture's shape"},
    {"chat", edgellm::cli::cmd_chat, "multi-turn chat over stdin/stdout, keeping the KV cache between turns"},
    {"tokenize", edgellm::cli::cmd_tokenize, "show how a vocabulary splits a text into tokens"},
    {"template", edgellm::cli::cmd_template, "print the prompt a chat template makes of a conversation (and its tokens)"},
    {"bench", edgellm::cli::cmd_bench, "measure prefill and decode speed (llama-bench style)"},
    {"serve", edgellm::cli::cmd_serve, "serve a local OpenAI-compatible HTTP API (chat, completions, metrics)"},
    {"plan", edgellm::cli::cmd_plan, "plan memory (weights, KV cache, buffers) against a device budget"},
    {"report", edgellm::cli::cmd_report, "compare bench run records: markdown tables and SVG charts"},
    {"probe", edgellm::cli::cmd_probe, "measure this host's memory bandwidth and int8 throughput"},
    {"perplexity", edgellm::cli::cmd_perplexity, "perplexity and KL divergence of a text (llama-perplexity's method and files)"},
};

void usage(FILE* out) {
  std::fprintf(out, "usage: edgellm COMMAND [options]   (edgellm COMMAND --help for its options)\n"
                   "       edgellm --version\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.help);
}

// Runs one subcommand; every failure becomes one "error: ..." line (control
// characters in it escaped: messages may quote text from a file) and exit 1.
int run_command(const Command& c, int argc, char** argv) {
  std::string error;
  try {
    const int rc = c.fn(argc, argv);
    edgellm::cli::flush_stdout_or_fail();  // output lost to a full disk is a failure too
    return rc;
  } catch (const edgellm::Error& e) {
    error = e.what();
  } catch (const std::bad_alloc&) {
    error = "out of memory (try a smaller context with -c or a smaller model)";
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::fprintf(stderr, "error: %s\n", edgellm::escape_control(error).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 1;
  }
  const std::string cmd = argv[1];
  if (cmd == "--version") {
    std::printf("%s\n", edgellm::cli::version_string().c_str());
    return run_command({"--version", [](int, char**) { return 0; }, ""}, 0, nullptr);
  }
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(stdout);
    return run_command({"--help", [](int, char**) { return 0; }, ""}, 0, nullptr);
  }
  for (const Command& c : kCommands)
    if (cmd == c.name) return run_command(c, argc - 2, argv + 2);
  std::fprintf(stderr, "error: unknown command '%s' (run 'edgellm --help' for the list)\n",
               edgellm::escape_control(cmd).c_str());
  return 1;
}
