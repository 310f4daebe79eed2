// bench output in llama-bench's formats: md (its padded table), json (an
// array, one object per test), jsonl (one object per line), csv. Each row is
// printed and flushed as its test finishes; the md header and the json "["
// wait for the first row, so an error before any test leaves stdout empty.
//
// The fields are llama-bench's, in its order and with its types, filled with
// what it would print for a CPU-only run where we have no such setting
// (gpu_info "", n_gpu_layers 0, ...). Ours follow them, null where they do
// not apply (gbs and bw_share on pp rows, the probe with --no-probe).
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdlib>
#include <cstring>

#include "base/build_info.h"
#include "base/json.h"
#include "tensor/types.h"
#include "tools/bench.h"

namespace edgellm {

namespace {

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

// One output field: its name, JSON kind, and text (llama-bench's text: a
// bool is "0"/"1", a float "%f").
struct Field {
  enum Kind { Str, Int, Bool, Float, Null } kind;
  const char* name;
  std::string text;
};

Field str(const char* n, std::string v) { return {Field::Str, n, std::move(v)}; }
Field num(const char* n, int64_t v) { return {Field::Int, n, std::to_string(v)}; }
Field flag(const char* n, bool v) { return {Field::Bool, n, v ? "1" : "0"}; }
Field real(const char* n, double v) { return {Field::Float, n, fmt("%f", v)}; }
Field maybe(const char* n, const std::optional<double>& v) { return v ? real(n, *v) : Field{Field::Null, n, ""}; }

// llama-bench's fields (tools/llama-bench/llama-bench.cpp, test::get_fields),
// plus use_mmap, which releases before load_mode printed.
std::vector<Field> llama_bench_fields(const BenchResult& r, const BenchHost& host) {
  const bool mmap = r.load_mode == "mmap";
  return {
      str("build_commit", build_commit()),
      num("build_number", build_number()),
      str("cpu_info", host.cpu_info),
      str("gpu_info", ""),
      str("backends", "CPU"),
      str("model_filename", r.model_filename),
      str("model_type", r.model_type),
      num("model_size", int64_t(r.model_size)),
      num("model_n_params", int64_t(r.model_n_params)),
      num("n_batch", r.n_batch),
      num("n_ubatch", r.n_batch),  // our batch is the physical one: there is no larger logical batch
      num("n_threads", r.n_threads),
      str("cpu_mask", "0x0"),       // no -C mask: the process's own affinity
      flag("cpu_strict", r.cpu_strict),
      num("poll", 50),              // llama-bench's default; our pool likewise spins briefly, then sleeps
      str("type_k", type_name(uint32_t(r.type_k))),
      str("type_v", type_name(uint32_t(r.type_v))),
      num("n_gpu_layers", 0),
      num("n_cpu_moe", 0),
      str("split_mode", "layer"),
      num("main_gpu", 0),
      flag("no_kv_offload", false),
      num("flash_attn", 1),         // attention is fused with an online softmax (kernels/attention.h)
      str("devices", "auto"),
      str("tensor_split", "0.00"),
      str("tensor_buft_overrides", "none"),
      str("load_mode", r.load_mode),  // what the weights used: "mmap" or "hugepages" (--load-mode)
      str("lazy_mode", "auto"),
      flag("use_mmap", mmap),
      flag("embeddings", false),
      num("no_op_offload", 0),
      flag("no_host", false),
      num("fit_target", 0),
      num("fit_min_ctx", 0),
      num("n_prompt", r.n_prompt),
      num("n_gen", r.n_gen),
      num("n_depth", r.n_depth),
      str("test_time", r.test_time),
      num("avg_ns", std::llround(r.avg_ns())),
      num("stddev_ns", std::llround(r.stddev_ns())),
      real("avg_ts", r.avg_ts()),
      real("stddev_ts", r.stddev_ts()),
  };
}

// Ours (the probe, an object, is added by the JSON printers).
std::vector<Field> our_fields(const BenchResult& r) {
  return {
      str("isa", r.isa),
      maybe("gbs", r.gbs),
      maybe("bw_share", r.bw_share),
      maybe("read_gbs_before", r.read_gbs_before),
      maybe("read_gbs_after", r.read_gbs_after),
      maybe("bytes_per_token", r.bytes_per_token),
      real("load_ms", r.load_ms),
      num("peak_rss_bytes", int64_t(r.peak_rss_bytes)),
      num("peak_anon_bytes", int64_t(r.peak_anon_bytes)),
  };
}

std::string json_value(const Field& f) {
  switch (f.kind) {
    case Field::Str: return json_quote(f.text);
    case Field::Bool: return f.text == "1" ? "true" : "false";
    case Field::Null: return "null";
    default: return f.text;
  }
}

template <class T>
std::string join(const std::vector<T>& v, const char* fmt_one) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + fmt(fmt_one, v[i]);
  return s;
}

// One result as JSON members: `indent` before each, `sep` after all but the last.
std::string json_members(const BenchResult& r, const BenchHost& host, const char* indent, const char* sep) {
  std::vector<std::pair<std::string, std::string>> kv;
  for (const Field& f : llama_bench_fields(r, host)) kv.push_back({f.name, json_value(f)});
  std::vector<uint64_t> ns = r.samples_ns;
  kv.push_back({"samples_ns", "[ " + join(std::vector<unsigned long long>(ns.begin(), ns.end()), "%llu") + " ]"});
  kv.push_back({"samples_ts", "[ " + join(r.samples_ts(), "%g") + " ]"});
  for (const Field& f : our_fields(r)) kv.push_back({f.name, json_value(f)});
  kv.push_back({"probe", host.probe ? probe_to_json(*host.probe) : "null"});
  std::string s;
  for (size_t i = 0; i < kv.size(); ++i)
    s += indent + json_quote(kv[i].first) + ": " + kv[i].second + (i + 1 < kv.size() ? sep : "");
  return s;
}

class Printer : public BenchPrinter {
 public:
  explicit Printer(std::FILE* out) : out_(out) {}
  void host(const BenchHost& h) override { host_ = h; }

 protected:
  void put(const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), out_);
    std::fflush(out_);  // a row is visible as soon as its test is done
  }
  std::FILE* out_;
  BenchHost host_;
  bool started_ = false;
};

class JsonPrinter : public Printer {
 public:
  using Printer::Printer;
  void row(const BenchResult& r) override {
    put(std::string(started_ ? ",\n" : "[\n") + "  {\n" + json_members(r, host_, "    ", ",\n") + "\n  }");
    started_ = true;
  }
  void finish() override { put(started_ ? "\n]\n" : "[]\n"); }
};

class JsonlPrinter : public Printer {
 public:
  using Printer::Printer;
  void row(const BenchResult& r) override { put("{" + json_members(r, host_, "", ", ") + "}\n"); }
};

class CsvPrinter : public Printer {
 public:
  using Printer::Printer;
  void row(const BenchResult& r) override {
    std::vector<Field> f = llama_bench_fields(r, host_);
    for (Field& x : our_fields(r)) f.push_back(std::move(x));
    std::string s;
    if (!started_) {
      for (size_t i = 0; i < f.size(); ++i) s += std::string(i ? "," : "") + f[i].name;
      s += "\n";
      started_ = true;
    }
    // Every value quoted, quotes doubled, as llama-bench writes them.
    for (size_t i = 0; i < f.size(); ++i) {
      std::string q = "\"";
      for (char c : f[i].text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
      s += (i ? "," : "") + q + "\"";
    }
    put(s + "\n");
  }
};

// llama-bench's table: fixed columns, then one per setting that differs
// from its default or takes several values, then the test and t/s; ours
// (GB/s, share of the probed read bandwidth, peak memory) come last.
class MarkdownPrinter : public Printer {
 public:
  MarkdownPrinter(std::FILE* out, const BenchParams& p) : Printer(out) {
    cols_ = {{"model", -30}, {"size", 10}, {"params", 10}, {"backend", -10}, {"threads", 7}};
    if (p.pin) cols_.push_back({"cpu_strict", 10});
    if (p.n_batch.size() > 1 || p.n_batch != std::vector<int64_t>{512}) cols_.push_back({"n_batch", 7});
    if (p.type_k != GgmlType::F16) cols_.push_back({"type_k", 6});
    if (p.type_v != GgmlType::F16) cols_.push_back({"type_v", 6});
    if (p.residency != gguf::Residency::Auto) cols_.push_back({"lm", 10});
    cols_.insert(cols_.end(), {{"test", 15}, {"t/s", 20}, {"GB/s", 8}});
    if (p.probe) cols_.insert(cols_.end(), {{"read GB/s", 9}, {"share", 6}});
    cols_.insert(cols_.end(), {{"peak RSS", 12}, {"peak anon", 12}});
  }

  void row(const BenchResult& r) override {
    std::string s;
    if (!started_) {
      if (host_.probe) {
        const ProbeResult& h = *host_.probe;
        s += fmt("host: %d cores, isa %s, read %.1f GB/s (%d threads), %.1f GB/s (1 thread), int8 dot %.1f GOP/s\n\n",
                 h.cores, h.isa.c_str(), h.read_gbs_all, h.threads, h.read_gbs_one, h.int8_gops);
      }
      s += "|";
      for (const Col& c : cols_) s += fmt(" %*s |", c.width, c.name);
      s += "\n|";
      for (const Col& c : cols_) s += " " + std::string(size_t(std::abs(c.width) - 1), '-') + (c.width > 0 ? ":" : "-") + " |";
      s += "\n";
      started_ = true;
      isa_ = r.isa;
    }
    any_share_ = any_share_ || r.bw_share.has_value();
    s += "|";
    for (const Col& c : cols_) {
      int width = c.width;
      if (std::strcmp(c.name, "t/s") == 0) width += 1;  // "±" is two bytes and one column
      s += fmt(" %*s |", width, value(c.name, r).c_str());
    }
    put(s + "\n");
  }

  void finish() override {
    if (!started_) return;
    if (any_share_)
      put("\nread GB/s: the bus as read over the weights just before and after each tg test (the larger of the two; "
          "the start-up probe for models under 64 MiB); share = GB/s over it.\n");
    put(fmt("\nbuild: %s (%d) | isa %s\n", build_commit(), build_number(), isa_.c_str()));
  }

 private:
  struct Col {
    const char* name;
    int width;  // negative: left-aligned (text)
  };

  static std::string mib(uint64_t b) {
    return b < (uint64_t(1) << 30) ? fmt("%.2f MiB", double(b) / 1048576.0) : fmt("%.2f GiB", double(b) / 1073741824.0);
  }

  std::string value(const std::string& col, const BenchResult& r) const {
    if (col == "model") return r.model_type;
    if (col == "size") return mib(r.model_size);
    if (col == "params")
      return r.model_n_params < 1000000000ull ? fmt("%.2f M", double(r.model_n_params) / 1e6)
                                              : fmt("%.2f B", double(r.model_n_params) / 1e9);
    if (col == "backend") return "CPU";
    if (col == "threads") return std::to_string(r.n_threads);
    if (col == "cpu_strict") return r.cpu_strict ? "1" : "0";
    if (col == "n_batch") return std::to_string(r.n_batch);
    if (col == "type_k") return type_name(uint32_t(r.type_k));
    if (col == "type_v") return type_name(uint32_t(r.type_v));
    if (col == "lm") return r.load_mode;
    if (col == "test") return r.test_name();
    if (col == "t/s") return fmt("%.2f ± %.2f", r.avg_ts(), r.stddev_ts());
    if (col == "GB/s") return r.gbs ? fmt("%.2f", *r.gbs) : "";
    if (col == "share") return r.bw_share ? fmt("%.0f%%", *r.bw_share * 100) : "";
    if (col == "read GB/s") return r.bw_share ? fmt("%.1f", *r.gbs / *r.bw_share) : "";  // what share is of
    if (col == "peak RSS") return mib(r.peak_rss_bytes);
    if (col == "peak anon") return mib(r.peak_anon_bytes);
    return "";
  }

  std::vector<Col> cols_;
  std::string isa_;
  bool any_share_ = false;
};

}  // namespace

const char* bench_formats() { return "md, json, jsonl, csv"; }

std::unique_ptr<BenchPrinter> make_bench_printer(std::string_view format, const BenchParams& p, std::FILE* out) {
  if (format == "md") return std::make_unique<MarkdownPrinter>(out, p);
  if (format == "json") return std::make_unique<JsonPrinter>(out);
  if (format == "jsonl") return std::make_unique<JsonlPrinter>(out);
  if (format == "csv") return std::make_unique<CsvPrinter>(out);
  return nullptr;
}

}  // namespace edgellm
