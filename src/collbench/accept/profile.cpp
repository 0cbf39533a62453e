// Acceptance profile loader: strict validation with file, line, key and closest-key hints.
#include "collbench/accept/profile.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "collbench/coll/collective.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/paths.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/yamlio/reader.hpp"

namespace collbench::accept {
namespace fs = std::filesystem;

std::string_view to_string(Policy p) {
  return p == Policy::median ? "median" : "best";
}

namespace {

const std::vector<std::string> kTopKeys{"name", "description", "system", "progress", "requires", "defaults", "checks"};
const std::vector<std::string> kRequiresKeys{"min_ranks", "max_ranks", "ranks_multiple_of"};
const std::vector<std::string> kThresholdKeys{"fraction_of_bound",    "fraction_of_expected", "min_busbw_gbps",
                                              "min_algbw_gbps",       "max_time_us",          "max_interference",
                                              "reference_busbw_gbps", "reference_source"};
// Keys a check may carry besides name/description/collective/bytes (also valid in defaults).
const std::vector<std::string> kSettingKeys{
    // case
    "dtype", "redop", "backend", "algo", "scope", "timing", "in_place", "buffers", "check", "root",
    // stopping rule of each repetition
    "warmup", "min_iters", "max_iters", "iters", "min_time", "max_time", "max_noise", "batch",
    // judging
    "threshold", "repetitions", "policy", "require_algo", "rounds",
    // placement
    "ranks_per_domain", "domain_sizes",
    // collective parameters: sendrecv pairing, MoE harness
    "pairing", "round", "workload", "tokens", "routing", "ep_size", "imbalance", "counts_exchange", "seed",
    // ep-dp-concurrent: the all-reduce's buffer across domains
    "dp_bytes"};
const std::vector<std::string> kParamKeys{"pairing", "round",     "workload",        "tokens", "routing",
                                          "ep_size", "imbalance", "counts_exchange", "seed",   "dp_bytes"};

std::vector<std::string> all_check_keys() {
  std::vector<std::string> keys{"name", "description", "collective", "bytes"};
  keys.insert(keys.end(), kSettingKeys.begin(), kSettingKeys.end());
  return keys;
}

using yamlio::kind_of;
using yamlio::Reader;

// The settings of a check (or of `defaults`), applied key by key onto `c`.
struct Settings {
  plan::Case base;
  std::optional<Threshold> threshold;
  std::optional<int> repetitions;
  std::optional<int> rounds;
  std::optional<Policy> policy;
  std::optional<bool> require_algo;
  std::optional<int> ranks_per_domain;
  std::optional<std::string> domain_sizes;
};

Threshold read_threshold(const Reader& r, const YAML::Node& node, const std::string& path) {
  r.check_map(node, path, kThresholdKeys, Reader::EmptyValues::reject);
  Threshold t;
  const auto key = [&path](const char* k) { return path + "." + k; };
  if (const auto v = node["fraction_of_bound"]) t.fraction_of_bound = r.positive(v, key("fraction_of_bound"), 1.0);
  if (const auto v = node["fraction_of_expected"]) {
    // Above 1 is allowed (a run may beat a prediction), but not absurdly so.
    t.fraction_of_expected = r.positive(v, key("fraction_of_expected"), 10.0);
  }
  if (const auto v = node["min_busbw_gbps"]) t.min_busbw_gbps = r.positive(v, key("min_busbw_gbps"), 1e7);
  if (const auto v = node["min_algbw_gbps"]) t.min_algbw_gbps = r.positive(v, key("min_algbw_gbps"), 1e7);
  if (const auto v = node["max_time_us"]) t.max_time_us = r.positive(v, key("max_time_us"), 1e12);
  if (const auto v = node["max_interference"]) {
    t.max_interference = r.positive(v, key("max_interference"), 100.0);
    if (*t.max_interference < 1.0) {
      r.fail(v.Mark(), key("max_interference"),
             fmt::format("must be at least 1 (t_both / max(t_ep, t_dp): 1.0 = fully concurrent, 2.0 = serialized "
                         "for equal parts), got {}",
                         v.Scalar()));
    }
  }
  if (const auto v = node["reference_busbw_gbps"])
    t.reference_busbw_gbps = r.positive(v, key("reference_busbw_gbps"), 1e7);
  if (const auto v = node["reference_source"]) {
    if (!t.reference_busbw_gbps) r.fail(v.Mark(), key("reference_source"), "applies only with reference_busbw_gbps");
    t.reference_source = r.text(v, key("reference_source"));
  }
  if (t.reference_busbw_gbps && !t.fraction_of_expected) {
    r.fail(node.Mark(), key("reference_busbw_gbps"),
           "applies only with fraction_of_expected (it replaces the expected value beyond the model's checked range)");
  }
  if (t.empty()) r.fail(node.Mark(), path, "names no limit; accepted: " + join(kThresholdKeys));
  return t;
}

// A setting of the case itself (its dtype, operator, backend, ...); false when `key` is none.
bool apply_case_setting(const Reader& r, plan::Case& c, const std::string& key, const YAML::Node& value,
                        const std::string& v, const std::string& full) {
  if (key == "dtype")
    c.dtype = r.at(value, full, [&] { return parse_dtype(v); });
  else if (key == "redop")
    c.redop = r.at(value, full, [&] { return parse_redop(v); });
  else if (key == "backend")
    c.backend = r.at(value, full, [&] { return parse_backend(v); });
  else if (key == "algo")
    c.algo = r.at(value, full, [&] { return parse_algorithm(v); });
  else if (key == "scope")
    c.scope = r.at(value, full, [&] { return parse_scope(v); });
  else if (key == "timing")
    c.timing = r.at(value, full, [&] { return parse_timing(v); });
  else if (key == "buffers")
    c.buffers = r.at(value, full, [&] { return parse_buffer_kind(v); });
  else if (key == "in_place")
    c.in_place = r.boolean(value, full);
  else if (key == "check")
    c.check = r.boolean(value, full);
  else if (key == "root")
    c.root = r.integer(value, full, 0, 1 << 30);
  else
    return false;
  return true;
}

// A setting of the case's stopping rule (warmup, iterations, noise, time); false when `key` is none.
bool apply_stop_setting(const Reader& r, plan::StopRule& stop, const std::string& key, const YAML::Node& value,
                        const std::string& v, const std::string& full) {
  if (key == "warmup")
    stop.warmup = r.integer(value, full, 0, 1000000);
  else if (key == "min_iters")
    stop.min_iters = r.integer(value, full, 1, 1000000000);
  else if (key == "max_iters")
    stop.max_iters = r.integer(value, full, 1, 1000000000);
  else if (key == "iters")
    stop.min_iters = stop.max_iters = r.integer(value, full, 1, 1000000000);
  else if (key == "batch")
    stop.batch = r.integer(value, full, 1, 1000000);
  else if (key == "max_noise") {
    stop.max_noise = r.positive(value, full, 1.0);
    if (stop.max_noise >= 1.0) r.fail(value.Mark(), full, "must be a fraction below 1, e.g. 0.01");
  } else if (key == "min_time")
    stop.min_time_s = r.at(value, full, [&] { return parse_duration_s(v); });
  else if (key == "max_time")
    stop.max_time_s = r.at(value, full, [&] { return parse_duration_s(v); });
  else
    return false;
  return true;
}

// A setting of the check around its case (repetitions, policy, placement, ...); false when `key`
// is none.
bool apply_check_setting(const Reader& r, Settings& s, const std::string& key, const YAML::Node& value,
                         const std::string& v, const std::string& full) {
  if (key == "repetitions")
    s.repetitions = r.integer(value, full, 1, 1000);
  else if (key == "rounds")
    s.rounds = r.integer(value, full, 1, 1'000'000);
  else if (key == "policy") {
    if (v == "median")
      s.policy = Policy::median;
    else if (v == "best")
      s.policy = Policy::best;
    else
      r.fail(value.Mark(), full, unknown_name_message("policy", v, {"median", "best"}));
  } else if (key == "require_algo")
    s.require_algo = r.boolean(value, full);
  else if (key == "ranks_per_domain")
    s.ranks_per_domain = r.integer(value, full, 1, 1 << 24);
  else if (key == "domain_sizes") {
    r.at(value, full, [&] { return parse_domain_sizes(v); });
    s.domain_sizes = v;
  } else
    return false;
  return true;
}

void apply_setting(const Reader& r, Settings& s, const std::string& key, const YAML::Node& value,
                   const std::string& path) {
  plan::Case& c = s.base;
  const std::string full = path.empty() ? key : path + "." + key;
  if (key == "threshold") {
    s.threshold = read_threshold(r, value, full);
    return;
  }
  if (key == "routing" && value.IsMap()) {  // MoE routing is a mapping, kept as flow text
    std::ostringstream os;
    os << YAML::Flow << value;
    c.params[key] = os.str();
    return;
  }
  const std::string v = r.scalar(value, full, "a single value");
  if (apply_case_setting(r, c, key, value, v, full) || apply_stop_setting(r, c.stop, key, value, v, full) ||
      apply_check_setting(r, s, key, value, v, full)) {
    return;
  }
  if (std::find(kParamKeys.begin(), kParamKeys.end(), key) != kParamKeys.end()) {
    c.params[key] = v;
  } else {
    r.fail(value.Mark(), full, "internal: unhandled key");  // kSettingKeys and this function disagree
  }
}

void merge(Settings& into, const Settings& from) {
  if (from.threshold) into.threshold = from.threshold;
  if (from.repetitions) into.repetitions = from.repetitions;
  if (from.rounds) into.rounds = from.rounds;
  if (from.policy) into.policy = from.policy;
  if (from.require_algo) into.require_algo = from.require_algo;
  if (from.ranks_per_domain) into.ranks_per_domain = from.ranks_per_domain;
  if (from.domain_sizes) into.domain_sizes = from.domain_sizes;
}

bool valid_check_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
           ch == '.';
  });
}

std::vector<std::uint64_t> read_sizes(const Reader& r, const YAML::Node& node, const std::string& key) {
  std::vector<std::uint64_t> sizes;
  auto one = [&](const YAML::Node& item, const std::string& k) {
    const std::string v = r.scalar(item, k, "a size such as 16M");
    sizes.push_back(r.at(item, k, [&] { return parse_bytes(v); }));
  };
  if (node.IsSequence()) {
    if (node.size() == 0) r.fail(node.Mark(), key, "must not be an empty list");
    for (std::size_t i = 0; i < node.size(); ++i) one(node[i], fmt::format("{}[{}]", key, i));
  } else {
    one(node, key);
  }
  return sizes;
}

// A check's name and description; returns the path its errors name ("checks[i] (name)").
std::string read_check_identity(const Reader& r, const YAML::Node& entry, std::size_t index, Check& check) {
  const std::string path = fmt::format("checks[{}]", index);
  r.check_map(entry, path, all_check_keys(), Reader::EmptyValues::reject);
  check.line = entry.Mark().line + 1;
  const YAML::Node name = entry["name"];
  if (!name) r.fail(entry.Mark(), path, "missing required key 'name'");
  check.name = r.text(name, path + ".name");
  if (!valid_check_name(check.name)) {
    r.fail(name.Mark(), path + ".name",
           fmt::format("'{}' may use only letters, digits, '-', '_' and '.' (it names JUnit test cases and "
                       "Prometheus labels)",
                       check.name));
  }
  const std::string cpath = fmt::format("checks[{}] ({})", index, check.name);
  if (const auto d = entry["description"]) check.description = r.text(d, cpath + ".description");
  return cpath;
}

// A check's settings over the defaults, its collective and the family that runs it (whose
// parameters and dtype it checks).
const coll::Collective& read_check_case(const Reader& r, const YAML::Node& entry, const std::string& cpath,
                                        const plan::Case& default_case, const Settings& defaults, Settings& s) {
  const YAML::Node coll = entry["collective"];
  if (!coll) r.fail(entry.Mark(), cpath, "missing required key 'collective'");
  s.base = default_case;
  merge(s, defaults);
  for (const auto& kv : entry) {
    const std::string key = kv.first.Scalar();
    if (key == "name" || key == "description" || key == "collective" || key == "bytes") continue;
    apply_setting(r, s, key, kv.second, cpath);
  }
  s.base.collective = r.text(coll, cpath + ".collective");
  const coll::Collective* family = nullptr;
  r.at(coll, cpath + ".collective", [&] {
    family = &coll::find_collective(s.base.collective);
    return 0;
  });
  r.at(entry, cpath, [&] {
    family->check_params(s.base.params);
    return 0;
  });
  if (const auto d = family->case_dtype(s.base.params)) s.base.dtype = *d;
  return *family;
}

// A pairwise check (sendrecv with pairing round-robin or rail and no round) runs every round, or
// `rounds` of them.
void read_check_rounds(const Reader& r, const YAML::Node& entry, const std::string& cpath, const Settings& s,
                       Check& check) {
  const auto pairing = s.base.params.find("pairing");
  if (collective_id(s.base.collective) == CollectiveId::sendrecv && pairing != s.base.params.end() &&
      pairing->second != "ring" && s.base.params.count("round") == 0) {
    check.all_rounds = true;
  }
  if (s.rounds && !check.all_rounds) {
    r.fail(entry.Mark(), cpath,
           "rounds: K samples the rounds of a pairwise check (collective: sendrecv, pairing: round-robin or rail, "
           "no round)");
  }
  check.sampled_rounds = s.rounds.value_or(0);
  if (check.all_rounds && pairing->second == "rail" && s.base.scope != Scope::global) {
    r.fail(entry.Mark(), cpath, "pairing: rail exchanges between domains; it needs scope: global");
  }
}

Check read_check(const Reader& r, const YAML::Node& entry, std::size_t index, const plan::Case& default_case,
                 const Settings& defaults) {
  Check check;
  const std::string cpath = read_check_identity(r, entry, index, check);
  Settings s;
  const coll::Collective& family = read_check_case(r, entry, cpath, default_case, defaults, s);

  if (const auto b = entry["bytes"]) {
    check.sizes = read_sizes(r, b, cpath + ".bytes");
  } else if (s.base.params.count("workload") > 0) {
    check.sizes = {0};  // the workload sets the size
  } else {
    r.fail(entry.Mark(), cpath, "missing required key 'bytes' (a size or a list, e.g. [1M, 64M])");
  }

  if (!s.threshold) {
    r.fail(entry.Mark(), cpath,
           "no threshold: give 'threshold:' here or in 'defaults' with one or more of " + join(kThresholdKeys));
  }
  check.threshold = *s.threshold;
  if (check.threshold.max_interference && !family.uses_levels()) {
    r.fail(entry.Mark(), cpath + ".threshold.max_interference",
           fmt::format("applies only to the concurrent families (ep-dp-concurrent), not {}", s.base.collective));
  }
  check.repetitions = s.repetitions.value_or(3);
  check.policy = s.policy.value_or(Policy::median);
  check.require_algo = s.require_algo.value_or(false);
  if (check.require_algo && s.base.algo == "auto") {
    r.fail(entry.Mark(), cpath,
           "require_algo: true needs a specific algorithm (algo: nvls, ring, hierarchical, ...), not auto");
  }
  if (s.ranks_per_domain && s.domain_sizes) {
    r.fail(entry.Mark(), cpath, "ranks_per_domain and domain_sizes exclude each other");
  }
  check.ranks_per_domain = s.ranks_per_domain;
  check.domain_sizes = s.domain_sizes;
  if (s.base.stop.min_iters > s.base.stop.max_iters) r.fail(entry.Mark(), cpath, "min_iters is larger than max_iters");
  read_check_rounds(r, entry, cpath, s, check);
  check.base = s.base;
  return check;
}

// The `requires` section: the rank counts the profile runs on.
Requirements read_requirements(const Reader& r, const YAML::Node& q) {
  Requirements req;
  r.check_map(q, "requires", kRequiresKeys, Reader::EmptyValues::reject);
  if (const auto v = q["min_ranks"]) req.min_ranks = r.integer(v, "requires.min_ranks", 1, 1 << 24);
  if (const auto v = q["max_ranks"]) req.max_ranks = r.integer(v, "requires.max_ranks", 1, 1 << 24);
  if (const auto v = q["ranks_multiple_of"]) {
    req.ranks_multiple_of = r.integer(v, "requires.ranks_multiple_of", 1, 1 << 24);
  }
  if (req.max_ranks && *req.max_ranks < req.min_ranks) {
    r.fail(q.Mark(), "requires", "max_ranks is smaller than min_ranks");
  }
  return req;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read acceptance profile '{}'", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> search_dirs() {
  std::vector<std::string> dirs;
  // Every profile folder (core/paths.hpp), not only those that also hold systems/: a user's
  // folder may carry acceptance profiles alone.
  for (const auto& d : profile_search_dirs()) {
    const std::string a = d + "/acceptance";
    if (fs::is_directory(a)) dirs.push_back(a);
  }
  return dirs;
}

}  // namespace

const std::vector<std::string>& check_keys() {
  static const std::vector<std::string> kKeys = all_check_keys();
  return kKeys;
}

const std::vector<std::string>& threshold_keys() {
  return kThresholdKeys;
}

AcceptanceProfile parse_acceptance_profile(std::string_view yaml_text, const std::string& origin) {
  const Reader r(origin);
  YAML::Node root;
  yamlio::check_structure(yaml_text, origin);  // first: it refuses what would make YAML::Load or a walk blow up
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: invalid YAML: {}", origin, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) r.fail(root.Mark(), "", "an acceptance profile is a mapping with keys " + join(kTopKeys));
  r.check_map(root, "", kTopKeys, Reader::EmptyValues::reject);
  AcceptanceProfile p;
  p.source = origin;
  if (!root["name"]) r.fail(root.Mark(), "name", "missing required key");
  p.name = r.text(root["name"], "name");
  if (!valid_check_name(p.name)) {
    r.fail(root["name"].Mark(), "name", "may use only letters, digits, '-', '_' and '.'");
  }
  if (const auto d = root["description"]) p.description = r.text(d, "description");
  if (const auto s = root["system"]) p.system = r.text(s, "system");
  if (const auto s = root["progress"]) {
    const std::string v = r.text(s, "progress");
    if (v != "auto" && v != "spin" && v != "yield") {
      r.fail(s.Mark(), "progress", unknown_name_message("progress mode", v, {"auto", "spin", "yield"}));
    }
    p.progress = v;
  }
  if (const auto q = root["requires"]) p.requirements = read_requirements(r, q);

  Settings defaults;
  // A repetition's default stopping rule: shorter than a sweep's, since every check repeats.
  defaults.base.stop.max_time_s = 1.0;
  if (const auto d = root["defaults"]) {
    r.check_map(d, "defaults", kSettingKeys, Reader::EmptyValues::reject);
    for (const auto& kv : d) apply_setting(r, defaults, kv.first.Scalar(), kv.second, "defaults");
  }

  const auto checks = root["checks"];
  if (!checks) r.fail(root.Mark(), "checks", "missing required key (a list of checks)");
  if (!checks.IsSequence() || checks.size() == 0) {
    r.fail(checks.Mark(), "checks", fmt::format("expected a non-empty list of checks, got a {}", kind_of(checks)));
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < checks.size(); ++i) {
    Check c = read_check(r, checks[i], i, defaults.base, defaults);
    if (!names.insert(c.name).second) {
      r.fail(checks[i]["name"].Mark(), fmt::format("checks[{}].name", i),
             fmt::format("duplicate check name '{}'", c.name));
    }
    p.checks.push_back(std::move(c));
  }
  return p;
}

AcceptanceProfile load_acceptance_profile(const std::string& name_or_path) {
  const bool is_path =
      name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml") || name_or_path.ends_with(".yml");
  if (is_path) return parse_acceptance_profile(read_text_file(name_or_path), name_or_path);
  for (const auto& dir : search_dirs()) {
    const std::string path = dir + "/" + name_or_path + ".yaml";
    if (fs::is_regular_file(path)) return parse_acceptance_profile(read_text_file(path), path);
  }
  const std::vector<std::string> searched = search_dirs();
  const std::vector<std::string> known = list_acceptance_profiles();
  const std::string what = known.empty() ? fmt::format("unknown acceptance profile '{}'; none installed", name_or_path)
                                         : unknown_name_message("acceptance profile", name_or_path, known);
  throw InputError(fmt::format("{} (searched {}; or pass a file path)", what,
                               searched.empty() ? std::string("no profiles/acceptance directory") : join(searched)));
}

std::vector<std::string> list_acceptance_profiles() {
  std::set<std::string> names;
  for (const auto& dir : search_dirs()) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".yaml") names.insert(entry.path().stem().string());
    }
  }
  return {names.begin(), names.end()};
}

std::string rank_count_problem(const AcceptanceProfile& p, int num_ranks) {
  const auto& q = p.requirements;
  if (num_ranks < q.min_ranks) {
    return fmt::format("acceptance profile '{}' needs at least {} ranks (requires.min_ranks), this run has {}", p.name,
                       q.min_ranks, num_ranks);
  }
  if (q.max_ranks && num_ranks > *q.max_ranks) {
    return fmt::format("acceptance profile '{}' takes at most {} ranks (requires.max_ranks), this run has {}", p.name,
                       *q.max_ranks, num_ranks);
  }
  if (num_ranks % q.ranks_multiple_of != 0) {
    return fmt::format(
        "acceptance profile '{}' needs a multiple of {} ranks (requires.ranks_multiple_of), this run "
        "has {}",
        p.name, q.ranks_multiple_of, num_ranks);
  }
  return {};
}

}  // namespace collbench::accept
