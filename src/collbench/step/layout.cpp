#include "collbench/step/layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "collbench/core/error.hpp"
#include "collbench/core/paths.hpp"
#include "collbench/yamlio/reader.hpp"

namespace collbench::step {
namespace fs = std::filesystem;
namespace {

const std::vector<std::string> kKeys{"name",
                                     "description",
                                     "workloads",
                                     "system",
                                     "published",
                                     "tp",
                                     "ep",
                                     "pp",
                                     "vpp",
                                     "micro_batch",
                                     "global_batch",
                                     "gpus",
                                     "first_stage_layers",
                                     "last_stage_layers",
                                     "recompute",
                                     "precision",
                                     "grad_reduce_dtype",
                                     "param_gather_dtype",
                                     "sources"};
const std::vector<std::string> kPublishedKeys{"release",        "gpus",       "tokens_per_s_per_gpu",
                                              "tflops_per_gpu", "counts_mtp", "source"};
const std::vector<std::string> kRecompute{"none", "selective", "full", "mla_up_proj"};
const std::vector<std::string> kPrecision{"bf16", "fp8"};
const std::vector<std::string> kGradDtypes{"float32", "bfloat16"};
const std::vector<std::string> kParamDtypes{"bfloat16", "float8"};

template <class T>
T pick(const std::vector<std::string>& names, const std::string& value, std::initializer_list<T> values) {
  std::size_t i = 0;
  while (names[i] != value) ++i;
  return *(values.begin() + i);
}

std::vector<Published> parse_published(const yamlio::Reader& r, const YAML::Node& list) {
  if (!list.IsSequence() || list.size() == 0) r.fail(list.Mark(), "published", "expected a non-empty list");
  std::vector<Published> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    const std::string path = fmt::format("published[{}]", i);
    r.check_map(e, path, kPublishedKeys, yamlio::Reader::EmptyValues::reject);
    Published p;
    p.release = r.text(r.required(e, path, "release"), path + ".release");
    p.gpus = r.integer(r.required(e, path, "gpus"), path + ".gpus", 1);
    p.tokens_per_s_per_gpu =
        r.positive(r.required(e, path, "tokens_per_s_per_gpu"), path + ".tokens_per_s_per_gpu", 1e9);
    p.tflops_per_gpu = r.positive(r.required(e, path, "tflops_per_gpu"), path + ".tflops_per_gpu", 1e6);
    p.counts_mtp = r.boolean(r.required(e, path, "counts_mtp"), path + ".counts_mtp");
    p.source = r.text(r.required(e, path, "source"), path + ".source");
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::string_view to_string(Recompute r) {
  return kRecompute[static_cast<std::size_t>(r)];
}
std::string_view to_string(Precision p) {
  return kPrecision[static_cast<std::size_t>(p)];
}

Layout parse_layout(const std::string& yaml_text, const std::string& origin) {
  const yamlio::Reader r(origin);
  const YAML::Node root = yamlio::load_document(r, yaml_text, "layout");
  r.check_map(root, "", kKeys, yamlio::Reader::EmptyValues::reject);
  Layout l;
  l.source = origin;
  l.name = r.text(r.required(root, "", "name"), "name");
  if (const auto n = r.optional(root, "", "description"); n.IsDefined()) l.description = r.text(n, "description");
  if (const auto n = r.optional(root, "", "workloads"); n.IsDefined()) l.workloads = r.text_list(n, "workloads");
  if (const auto n = r.optional(root, "", "system"); n.IsDefined()) l.system = r.text(n, "system");
  if (const auto n = r.optional(root, "", "published"); n.IsDefined()) l.published = parse_published(r, n);
  const auto opt_int = [&](const char* key, int min_value, int fallback) {
    const YAML::Node n = r.optional(root, "", key);
    return n.IsDefined() ? r.integer(n, key, min_value) : fallback;
  };
  l.tp = opt_int("tp", 1, 1);
  l.ep = opt_int("ep", 1, 1);
  l.pp = opt_int("pp", 1, 1);
  l.vpp = opt_int("vpp", 1, 1);
  l.micro_batch = opt_int("micro_batch", 1, 1);
  l.global_batch = r.integer(r.required(root, "", "global_batch"), "global_batch", 1);
  l.gpus = r.integer(r.required(root, "", "gpus"), "gpus", 1);
  l.first_stage_layers = opt_int("first_stage_layers", 0, -1);
  l.last_stage_layers = opt_int("last_stage_layers", 0, -1);
  if (const auto n = r.optional(root, "", "recompute"); n.IsDefined()) {
    l.recompute = pick(kRecompute, r.one_of(n, "recompute", kRecompute),
                       {Recompute::none, Recompute::selective, Recompute::full, Recompute::mla_up_proj});
  }
  if (const auto n = r.optional(root, "", "precision"); n.IsDefined()) {
    l.precision = pick(kPrecision, r.one_of(n, "precision", kPrecision), {Precision::bf16, Precision::fp8});
  }
  if (const auto n = r.optional(root, "", "grad_reduce_dtype"); n.IsDefined()) {
    l.grad_bytes = pick(kGradDtypes, r.one_of(n, "grad_reduce_dtype", kGradDtypes), {4, 2});
  }
  if (const auto n = r.optional(root, "", "param_gather_dtype"); n.IsDefined()) {
    l.param_bytes = pick(kParamDtypes, r.one_of(n, "param_gather_dtype", kParamDtypes), {2, 1});
  }
  if (const auto n = r.optional(root, "", "sources"); n.IsDefined()) l.sources = r.text_list(n, "sources");
  return l;
}

std::vector<std::string> list_layouts() {
  std::set<std::string> names;
  for (const auto& dir : profile_search_dirs()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(dir) / "layouts", ec)) {
      if (e.path().extension() == ".yaml") names.insert(e.path().stem().string());
    }
  }
  return {names.begin(), names.end()};
}

Layout load_layout(const std::string& name_or_path) {
  fs::path path;
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml")) {
    path = name_or_path;
    if (!fs::is_regular_file(path)) throw InputError(fmt::format("layout file '{}' not found", name_or_path));
  } else {
    for (const auto& dir : profile_search_dirs()) {
      const fs::path candidate = fs::path(dir) / "layouts" / (name_or_path + ".yaml");
      if (path.empty() && fs::is_regular_file(candidate)) path = candidate;
    }
    if (path.empty()) throw InputError(unknown_name_message("layout", name_or_path, list_layouts()));
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw InputError(fmt::format("layout '{}': cannot read {}", name_or_path, path.string()));
  return parse_layout(text.str(), path.string());
}

Layout default_layout(const std::string& workload, const std::string& system) {
  std::vector<Layout> hits;
  std::vector<std::string> pairs;
  for (const auto& name : list_layouts()) {
    Layout l = load_layout(name);
    if (l.workloads.empty() || l.system.empty()) continue;
    pairs.push_back(fmt::format("{} ({} on {})", name, fmt::join(l.workloads, " or "), l.system));
    const bool serves = std::find(l.workloads.begin(), l.workloads.end(), workload) != l.workloads.end();
    if (serves && l.system == system) hits.push_back(std::move(l));
  }
  if (hits.size() == 1) return hits.front();
  throw InputError(fmt::format(
      "no single default layout for workload '{}' on system '{}' ({} layouts name that pair); pass --layout NAME; "
      "published layouts: {}",
      workload, system, hits.size(), pairs.empty() ? std::string("none") : fmt::format("{}", fmt::join(pairs, ", "))));
}

namespace {

std::vector<int> split_stages(const Layout& l, const Architecture& a) {
  const int stages = l.pp * l.vpp;
  int first = l.first_stage_layers, last = l.last_stage_layers;
  int fixed = 0, inner = stages;
  if (first >= 0) fixed += first, --inner;
  if (last >= 0) fixed += last, --inner;
  const int rest = a.layers - fixed;
  const std::string what = fmt::format("layout '{}': {} layers over {} virtual stages (pp {} x vpp {}", l.name,
                                       a.layers, stages, l.pp, l.vpp);
  if (inner < 0 || rest < 0 || (inner == 0 && rest != 0) || (inner > 0 && rest % inner != 0)) {
    throw InputError(fmt::format(
        "{}{}{}): the {} remaining layers do not split evenly over {} stages; set pp/vpp, first_stage_layers or "
        "last_stage_layers so that they divide",
        what, first >= 0 ? fmt::format(", first stage {}", first) : "",
        last >= 0 ? fmt::format(", last stage {}", last) : "", rest, inner));
  }
  std::vector<int> out(static_cast<std::size_t>(stages), inner > 0 ? rest / inner : 0);
  if (first >= 0) out.front() = first;
  if (last >= 0) out.back() = last;
  return out;
}

}  // namespace

Shape shape_at(const Layout& l, const Architecture& a, int gpus) {
  Shape s;
  s.gpus = gpus;
  if (gpus > kMaxGpus) throw InputError(fmt::format("--gpus {}: accepted: 1 to {} GPUs", gpus, kMaxGpus));
  if (gpus % (l.tp * l.pp) != 0) {
    throw InputError(fmt::format("--gpus {}: not a multiple of tp x pp = {} x {} = {} (layout '{}')", gpus, l.tp, l.pp,
                                 l.tp * l.pp, l.name));
  }
  s.dp = gpus / (l.tp * l.pp);
  if ((l.tp * s.dp) % l.ep != 0) {
    throw InputError(
        fmt::format("--gpus {}: the {} ranks of a pipeline stage (tp {} x dp {}) do not split into EP "
                    "groups of {} (layout '{}')",
                    gpus, l.tp * s.dp, l.tp, s.dp, l.ep, l.name));
  }
  if (a.experts % l.ep != 0) {
    throw InputError(fmt::format("layout '{}': ep {} does not divide the {} experts", l.name, l.ep, a.experts));
  }
  s.edp = l.tp * s.dp / l.ep;
  if ((static_cast<long long>(l.global_batch) * gpus) % l.gpus != 0) {
    throw InputError(fmt::format("--gpus {}: the global batch {} (at {} GPUs) does not scale to a whole number", gpus,
                                 l.global_batch, l.gpus));
  }
  const long long batch = static_cast<long long>(l.global_batch) * gpus / l.gpus;  // < 2^31 x 2^20: no wrap
  if (batch > INT_MAX) {
    throw InputError(
        fmt::format("--gpus {}: the global batch {} (at {} GPUs) grows to {} sequences, past the limit of {}", gpus,
                    l.global_batch, l.gpus, batch, INT_MAX));
  }
  s.global_batch = static_cast<int>(batch);
  if (s.global_batch % (l.micro_batch * s.dp) != 0) {
    throw InputError(fmt::format("--gpus {}: the global batch {} is not a multiple of micro_batch x dp = {} x {}", gpus,
                                 s.global_batch, l.micro_batch, s.dp));
  }
  s.micro_batches = s.global_batch / (l.micro_batch * s.dp);
  s.stage_layers = split_stages(l, a);
  return s;
}

}  // namespace collbench::step
