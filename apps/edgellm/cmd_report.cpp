// edgellm report: bench run records (edgellm bench --scenario ... --out
// RUN.json) side by side, as a markdown report and SVG charts (tools/report.h).
//
// Every input is read and checked, and every chart drawn, before anything is
// written: a bad file leaves no report at all. Each output file is written
// whole or not at all (write_file_atomic), report.md last, so a report.md
// never links a chart that is not there.
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "base/file_util.h"
#include "tools/report.h"

namespace edgellm::cli {

namespace {

namespace fs = std::filesystem;

// Args takes one positional argument; report takes many. The run files are
// taken out here by Args' own rule for what an option is ("-x...", not "-"
// nor "-5..."), together with the values of the options that take one.
void split_positionals(int argc, char** argv, std::vector<std::string>* files, std::vector<char*>* rest) {
  bool only_files = false;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool option = !only_files && a.size() > 1 && a[0] == '-' && !std::isdigit(static_cast<unsigned char>(a[1]));
    if (a == "--" && !only_files) {
      only_files = true;
    } else if (!option) {
      files->push_back(a);
    } else {
      rest->push_back(argv[i]);
      const bool takes_value = a == "-o" || a == "--output" || a == "--out-dir";
      if (takes_value && i + 1 < argc) rest->push_back(argv[++i]);
    }
  }
}

// The output directory: created (with its parents) if missing; a path that
// exists as anything but a directory is refused.
void prepare_out_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) fail("--out-dir ", dir, ": exists and is not a directory; give a directory");
    return;
  }
  if (errno != ENOENT) fail("--out-dir ", dir, ": ", std::strerror(errno));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("--out-dir ", dir, ": cannot create: ", ec.message());
}

// Where the markdown finds the charts: beside it when it is DIR/report.md,
// relative to its own directory when -o puts it elsewhere, relative to the
// working directory when it goes to stdout.
std::string chart_prefix(const std::string& out_dir, const std::string& md_path) {
  if (md_path == "-") return (fs::path(out_dir) / "").generic_string();
  const fs::path md_dir = fs::absolute(md_path).parent_path();
  std::string rel =
      fs::absolute(out_dir).lexically_normal().lexically_relative(md_dir.lexically_normal()).generic_string();
  if (rel.empty() || rel == ".") return "";
  return rel + "/";
}

}  // namespace

int cmd_report(int argc, char** argv) {
  Args args("report",
            "Compare bench run records (edgellm bench --scenario ... --out RUN.json): a markdown report "
            "with the conditions that differ marked, and SVG charts of decode speed, memory and "
            "sustained speed and temperature.");
  std::string out_dir = "report", md_path, unused;
  args.positional("RUN.json...", &unused, "one or more run records");
  args.add({"--out-dir"}, &out_dir, "directory for report.md and the charts, created if missing (default report)");
  args.add({"-o", "--output"}, &md_path, "the markdown file (default DIR/report.md; - prints it to stdout)");
  std::vector<std::string> files;
  std::vector<char*> rest;
  split_positionals(argc, argv, &files, &rest);
  if (!args.parse(int(rest.size()), rest.data())) return 0;
  if (files.empty())
    fail("edgellm report: no run records given; pass one or more RUN.json files (from edgellm bench --scenario ... "
         "--out RUN.json)");
  if (out_dir.empty()) fail("--out-dir: the path is empty; give a directory");
  if (args.given("-o") && md_path.empty()) fail("-o: the path is empty; give a file, or - for stdout");
  if (md_path.empty()) md_path = (fs::path(out_dir) / "report.md").string();

  std::vector<report::RunFile> runs;
  for (const std::string& f : files) runs.push_back(report::load_run(f));
  report::label_runs(runs);
  const report::Report rep = report::make_report(runs, chart_prefix(out_dir, md_path));

  // A markdown target that cannot be written is refused before anything is written.
  if (md_path != "-") {
    std::error_code ec;
    if (fs::is_directory(md_path, ec)) fail("-o ", md_path, ": is a directory; give a file path");
    const fs::path parent = fs::path(md_path).parent_path();
    const bool made_here = parent.lexically_normal() == fs::path(out_dir).lexically_normal();  // prepare_out_dir
    if (!parent.empty() && !made_here && !fs::is_directory(parent, ec))
      fail("-o ", md_path, ": no directory ", parent.string(), "; create it first");
  }
  prepare_out_dir(out_dir);
  for (const report::ReportFile& c : rep.charts)
    write_file_atomic((fs::path(out_dir) / c.name).string(), c.text.data(), c.text.size());
  if (md_path == "-") {
    std::fwrite(rep.markdown.data(), 1, rep.markdown.size(), stdout);
  } else {
    write_file_atomic(md_path, rep.markdown.data(), rep.markdown.size());
  }
  std::fprintf(stderr, "report: %zu run%s, %zu chart%s in %s; markdown %s\n", runs.size(), runs.size() == 1 ? "" : "s",
               rep.charts.size(), rep.charts.size() == 1 ? "" : "s", out_dir.c_str(),
               md_path == "-" ? "on stdout" : md_path.c_str());
  return 0;
}

}  // namespace edgellm::cli
