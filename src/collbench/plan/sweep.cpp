// Sweep YAML loader. Messages name the file, line and key, and list the accepted values.
#include "collbench/plan/sweep.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/input_file.hpp"
#include "collbench/core/units.hpp"
#include "collbench/overlap/spec.hpp"
#include "collbench/yamlio/reader.hpp"

namespace collbench::plan {
namespace {

struct Ctx {
  std::string source;
  [[nodiscard]] std::string where(const YAML::Node& node, std::string_view key) const {
    const auto mark = node.Mark();
    if (mark.line >= 0) return fmt::format("{}:{}: key '{}'", source, mark.line + 1, key);
    return fmt::format("{}: key '{}'", source, key);
  }
};

const std::vector<std::string> kTopKeys{"name", "description", "system", "defaults", "cases"};
constexpr std::uint64_t kMaxCases = 1000000;

std::vector<std::string> scalars(const YAML::Node& node, const Ctx& ctx, std::string_view key) {
  std::vector<std::string> out;
  if (node.IsScalar()) {
    out.push_back(node.as<std::string>());
  } else if (node.IsSequence()) {
    for (const auto& item : node) {
      if (!item.IsScalar()) throw InputError(ctx.where(item, key) + ": list items must be plain values");
      out.push_back(item.as<std::string>());
    }
    if (out.empty()) throw InputError(ctx.where(node, key) + ": empty list");
  } else {
    throw InputError(ctx.where(node, key) + ": expected a value or a list of values");
  }
  return out;
}

// A mapping key as text: YAML allows lists and maps as keys ("? [a, b]: 1"), a sweep does not.
std::string key_text(const YAML::Node& key_node, const Ctx& ctx) {
  if (!key_node.IsScalar()) throw InputError(ctx.where(key_node, "?") + ": keys must be plain names");
  return key_node.Scalar();
}

std::string scalar(const YAML::Node& node, const Ctx& ctx, std::string_view key) {
  if (!node.IsScalar()) throw InputError(ctx.where(node, key) + ": expected a single value");
  return node.as<std::string>();
}

bool parse_bool(const std::string& v, const std::string& where) {
  if (v == "true" || v == "yes" || v == "on" || v == "1") return true;
  if (v == "false" || v == "no" || v == "off" || v == "0") return false;
  throw InputError(where + ": '" + v + "' is not a boolean; accepted: true, false");
}

int parse_int(const std::string& v, const std::string& where, int min_value) {
  try {
    std::size_t pos = 0;
    const long x = std::stol(v, &pos);
    if (pos != v.size() || x < min_value || x > 1000000000L) throw std::invalid_argument("range");
    return static_cast<int>(x);
  } catch (const std::exception&) {
    throw InputError(fmt::format("{}: '{}' is not an integer >= {}", where, v, min_value));
  }
}

double parse_fraction(const std::string& v, const std::string& where) {
  try {
    std::size_t pos = 0;
    const double x = std::stod(v, &pos);
    if (pos != v.size() || !(x > 0.0) || x >= 1.0) throw std::invalid_argument("range");
    return x;
  } catch (const std::exception&) {
    throw InputError(fmt::format("{}: '{}' is not a fraction in (0, 1), e.g. 0.01", where, v));
  }
}

// Wraps an InputError from a value parser with the location.
template <class F>
auto at(const std::string& where, F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
}

// A collective collbench runs, checked where the sweep names it (the runner would find out only
// after every rank started, without the file and line).
std::string checked_collective(const std::string& name, const std::string& where) {
  const CollectiveFacts* facts = find_collective_facts(name);
  if (facts == nullptr || !facts->runs) {
    throw InputError(where + ": " +
                     unknown_name_message("collective", name, collective_names_where(&CollectiveFacts::runs)));
  }
  return name;
}

// One scalar setting of a Case: the value and where it was read (file:line: key 'k').
using ValueSetter = void (*)(Case& c, const std::string& value, const std::string& where);

// The case settings a sweep key writes; keys without one are the collective's own parameters.
const std::map<std::string, ValueSetter, std::less<>>& case_setters() {
  using S = const std::string&;
  static const std::map<std::string, ValueSetter, std::less<>> kSetters = {
      {"collective", [](Case& c, S v, S w) { c.collective = checked_collective(v, w); }},
      {"backend", [](Case& c, S v, S w) { c.backend = at(w, [&] { return parse_backend(v); }); }},
      {"dtype", [](Case& c, S v, S w) { c.dtype = at(w, [&] { return parse_dtype(v); }); }},
      {"redop", [](Case& c, S v, S w) { c.redop = at(w, [&] { return parse_redop(v); }); }},
      {"algo", [](Case& c, S v, S w) { c.algo = at(w, [&] { return parse_algorithm(v); }); }},
      {"scope", [](Case& c, S v, S w) { c.scope = at(w, [&] { return parse_scope(v); }); }},
      {"timing", [](Case& c, S v, S w) { c.timing = at(w, [&] { return parse_timing(v); }); }},
      {"buffers", [](Case& c, S v, S w) { c.buffers = at(w, [&] { return parse_buffer_kind(v); }); }},
      {"in_place", [](Case& c, S v, S w) { c.in_place = parse_bool(v, w); }},
      {"check", [](Case& c, S v, S w) { c.check = parse_bool(v, w); }},
      {"bytes", [](Case& c, S v, S w) { c.bytes = at(w, [&] { return parse_bytes(v); }); }},
      {"root", [](Case& c, S v, S w) { c.root = parse_int(v, w, 0); }},
      {"graph", [](Case& c, S v, S w) { c.graph = parse_int(v, w, 0); }},
      {"warmup", [](Case& c, S v, S w) { c.stop.warmup = parse_int(v, w, 0); }},
      {"min_iters", [](Case& c, S v, S w) { c.stop.min_iters = parse_int(v, w, 1); }},
      {"max_iters", [](Case& c, S v, S w) { c.stop.max_iters = parse_int(v, w, 1); }},
      {"iters", [](Case& c, S v, S w) { c.stop.min_iters = c.stop.max_iters = parse_int(v, w, 1); }},
      {"batch", [](Case& c, S v, S w) { c.stop.batch = parse_int(v, w, 1); }},
      {"max_noise", [](Case& c, S v, S w) { c.stop.max_noise = parse_fraction(v, w); }},
      {"min_time", [](Case& c, S v, S w) { c.stop.min_time_s = at(w, [&] { return parse_duration_s(v); }); }},
      {"max_time", [](Case& c, S v, S w) { c.stop.max_time_s = at(w, [&] { return parse_duration_s(v); }); }},
      {"budget", [](Case& c, S v, S w) { c.stop.budget_s = at(w, [&] { return parse_duration_s(v); }); }},
      {"overlap", [](Case& c, S v, S w) { c.overlap = at(w, [&] { return overlap::parse_compute_spec(v).text; }); }},
      {"overlap_chunks", [](Case& c, S v, S w) { c.overlap_chunks = parse_int(v, w, 1); }},
  };
  return kSetters;
}

// Applies one scalar setting to a Case.
void apply(Case& c, const std::string& key, const std::string& value, const std::string& where) {
  const auto& setters = case_setters();
  const auto it = setters.find(key);
  if (it != setters.end()) {
    it->second(c, value, where);
  } else {
    c.params[key] = value;  // collective-specific (workload, tokens, ...): checked by the collective
  }
}

}  // namespace

const std::vector<std::string>& sweep_case_keys() {
  static const std::vector<std::string> kKeys{
      "collective", "bytes", "backend", "dtype", "redop", "algo", "scope", "timing", "buffers", "in_place", "check",
      "root", "graph", "warmup", "min_iters", "max_iters", "iters", "batch", "max_noise", "min_time", "max_time",
      "budget",
      // overlap mode (docs/overlap.md)
      "overlap", "overlap_chunks",
      // MoE harness parameters (profiles/workloads)
      "workload", "tokens", "routing", "ep_size", "imbalance", "counts_exchange", "seed", "rows"};
  return kKeys;
}

namespace {

// A map value as flow YAML text ("{a: 1, b: 2}"), for the collective to parse.
std::string flow_text(const YAML::Node& node) {
  YAML::Emitter flow;  // (an ostream would print the YAML::Flow manipulator as a number)
  flow << YAML::Flow << node;
  return flow.c_str();
}

YAML::Node load_root(const std::string& yaml_text, const Ctx& ctx) {
  YAML::Node root;
  yamlio::check_structure(yaml_text, ctx.source);  // first: it refuses what would make YAML::Load or a walk blow up
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: invalid YAML: {}", ctx.source, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) throw InputError(ctx.source + ": a sweep file must be a mapping with keys: " + join(kTopKeys));
  for (const auto& kv : root) {
    const auto key = key_text(kv.first, ctx);
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end()) {
      throw InputError(ctx.where(kv.first, key) + ": " + unknown_name_message("top-level key", key, kTopKeys));
    }
  }
  return root;
}

bool is_case_key(const std::string& key) {
  const auto& keys = sweep_case_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// `defaults:`: every case key but collective and bytes, applied to a Case every entry starts from.
Case parse_defaults(const YAML::Node& d, const Ctx& ctx) {
  Case defaults;
  if (!d) return defaults;
  if (!d.IsMap()) throw InputError(ctx.where(d, "defaults") + ": expected a mapping of case settings");
  for (const auto& kv : d) {
    const auto key = key_text(kv.first, ctx);
    const std::string where = ctx.where(kv.first, "defaults." + key);
    if (key == "collective" || key == "bytes" || !is_case_key(key)) {
      std::vector<std::string> allowed;
      for (const auto& k : sweep_case_keys()) {
        if (k != "collective" && k != "bytes") allowed.push_back(k);
      }
      throw InputError(where + ": " + unknown_name_message("defaults key", key, allowed));
    }
    if (kv.second.IsMap()) {
      defaults.params[key] = flow_text(kv.second);
    } else {
      apply(defaults, key, scalar(kv.second, ctx, key), where);
    }
  }
  return defaults;
}

double parse_factor(const std::string& v, const std::string& where) {
  double factor = 0.0;
  const auto res = std::from_chars(v.data(), v.data() + v.size(), factor);
  if (v.empty() || res.ec != std::errc{} || res.ptr != v.data() + v.size() || !(factor > 1.0) ||
      !std::isfinite(factor)) {
    throw InputError(where + ": '" + v + "' is not a number greater than 1, e.g. 2 or 4");
  }
  return factor;
}

// `bytes: {min, max, factor}` or `{min, max, step}` (`increment` is step's other name).
std::vector<std::uint64_t> bytes_range(const YAML::Node& range, const Ctx& ctx, const std::string& where) {
  std::uint64_t min_b = 0, max_b = 0, inc = 0;
  double factor = 2.0;
  bool have_min = false, have_max = false;
  for (const auto& b : range) {
    const auto bk = key_text(b.first, ctx);
    const std::string bw = ctx.where(b.first, "bytes." + bk);
    const auto v = scalar(b.second, ctx, bk);
    if (bk == "min") {
      min_b = at(bw, [&] { return parse_bytes(v); });
      have_min = true;
    } else if (bk == "max") {
      max_b = at(bw, [&] { return parse_bytes(v); });
      have_max = true;
    } else if (bk == "factor") {
      factor = parse_factor(v, bw);
    } else if (bk == "step" || bk == "increment") {
      inc = at(bw, [&] { return parse_bytes(v); });
    } else {
      throw InputError(bw + ": " + unknown_name_message("bytes key", bk, {"min", "max", "factor", "step"}));
    }
  }
  if (!have_min || !have_max) throw InputError(where + ": a bytes range needs both 'min' and 'max'");
  return at(where, [&] { return size_series(min_b, max_b, factor, inc); });
}

// One alternative of one key of a case entry.
using AxisSetter = std::function<void(Case&)>;

std::vector<AxisSetter> bytes_axis(const YAML::Node& value, const Ctx& ctx, const std::string& where) {
  std::vector<std::uint64_t> sizes;
  if (value.IsMap()) {
    sizes = bytes_range(value, ctx, where);
  } else {
    for (const auto& v : scalars(value, ctx, "bytes")) sizes.push_back(at(where, [&] { return parse_bytes(v); }));
  }
  std::vector<AxisSetter> alternatives;
  for (auto size : sizes) alternatives.emplace_back([size](Case& c) { c.bytes = size; });
  return alternatives;
}

// The alternatives one key of a case entry contributes, each validated now so that errors point
// at the file.
std::vector<AxisSetter> axis_of(const std::string& key, const YAML::Node& value, const Ctx& ctx,
                                const std::string& where) {
  if (key == "bytes") return bytes_axis(value, ctx, where);
  std::vector<AxisSetter> alternatives;
  if (value.IsMap()) {
    const std::string text = flow_text(value);
    alternatives.emplace_back([key, text](Case& c) { c.params[key] = text; });
    return alternatives;
  }
  for (const auto& v : scalars(value, ctx, key)) {
    Case probe;
    apply(probe, key, v, where);
    alternatives.emplace_back([key, v, where](Case& c) { apply(c, key, v, where); });
  }
  return alternatives;
}

// Each key of a case entry contributes a list of alternatives (an axis), in file order.
std::vector<std::vector<AxisSetter>> entry_axes(const YAML::Node& entry, const Ctx& ctx) {
  if (!entry.IsMap()) throw InputError(ctx.where(entry, "cases") + ": each case entry must be a mapping");
  if (!entry["collective"]) throw InputError(ctx.where(entry, "cases") + ": case entry without 'collective'");
  std::vector<std::vector<AxisSetter>> axes;
  bool has_bytes = false;
  for (const auto& kv : entry) {
    const auto key = key_text(kv.first, ctx);
    const std::string where = ctx.where(kv.first, key);
    if (!is_case_key(key)) throw InputError(where + ": " + unknown_name_message("case key", key, sweep_case_keys()));
    has_bytes = has_bytes || key == "bytes";
    axes.push_back(axis_of(key, kv.second, ctx, where));
  }
  if (!has_bytes && !entry["workload"]) {
    throw InputError(ctx.where(entry, "cases") +
                     ": case entry without 'bytes' (e.g. bytes: {min: 1K, max: 16M, factor: 4})");
  }
  return axes;
}

// Bounded, so that a typo such as 'bytes: {min: 1, max: 1T, step: 1}' times a few lists cannot
// exhaust memory.
void check_expansion(const std::vector<std::vector<AxisSetter>>& axes, std::size_t cases_so_far,
                     const YAML::Node& entry, const Ctx& ctx) {
  std::uint64_t expanded = 1;
  for (const auto& axis : axes) {
    expanded *= axis.size();
    if (expanded + cases_so_far > kMaxCases) {
      throw InputError(
          ctx.where(entry, "cases") +
          fmt::format(": the sweep expands to more than {} cases; split it or use fewer values", kMaxCases));
    }
  }
}

// The cross product of the axes, first axis slowest (an odometer over the axes).
void expand(const std::vector<std::vector<AxisSetter>>& axes, const Case& defaults, std::vector<Case>& out) {
  std::vector<std::size_t> idx(axes.size(), 0);
  for (bool done = false; !done;) {
    Case c = defaults;
    for (std::size_t a = 0; a < axes.size(); ++a) axes[a][idx[a]](c);
    out.push_back(std::move(c));
    done = true;
    for (std::size_t a = axes.size(); a-- > 0;) {
      if (++idx[a] < axes[a].size()) {
        done = false;
        break;
      }
      idx[a] = 0;
    }
  }
}

// The collective parameters a case entry names (the keys without a case setting: workload, tokens,
// ...) are the MoE harness's: on another collective of the entry the runner would ignore them, so
// the sweep is refused where it names them, as `run --workload` is for a non-MoE collective.
void check_parameters_apply(const YAML::Node& entry, const Ctx& ctx, const std::vector<Case>& cases,
                            std::size_t first) {
  for (const auto& kv : entry) {
    const auto key = key_text(kv.first, ctx);
    if (key == "bytes" || case_setters().count(key) != 0) continue;
    for (std::size_t i = first; i < cases.size(); ++i) {
      if (is_moe_collective(cases[i].collective)) continue;
      throw InputError(ctx.where(kv.first, key) +
                       fmt::format(": applies only to the MoE collectives ({}), not {}",
                                   fmt::join(collective_names_where(&CollectiveFacts::moe), ", "),
                                   cases[i].collective));
    }
  }
}

}  // namespace

Sweep parse_sweep(const std::string& yaml_text, const std::string& source_name) {
  const Ctx ctx{source_name};
  const YAML::Node root = load_root(yaml_text, ctx);
  Sweep sweep;
  sweep.source = source_name;
  if (!root["name"]) throw InputError(source_name + ": missing required key 'name'");
  sweep.name = scalar(root["name"], ctx, "name");
  if (root["description"]) sweep.description = scalar(root["description"], ctx, "description");
  if (root["system"]) sweep.system = scalar(root["system"], ctx, "system");
  const Case defaults = parse_defaults(root["defaults"], ctx);
  const auto cases = root["cases"];
  if (!cases || !cases.IsSequence() || cases.size() == 0) {
    throw InputError(source_name + ": key 'cases' must be a non-empty list of case entries");
  }
  for (const auto& entry : cases) {
    const auto axes = entry_axes(entry, ctx);
    check_expansion(axes, sweep.cases.size(), entry, ctx);
    const std::size_t first = sweep.cases.size();
    expand(axes, defaults, sweep.cases);
    check_parameters_apply(entry, ctx, sweep.cases, first);
  }
  return sweep;
}

Sweep load_sweep_file(const std::string& path) {
  return parse_sweep(read_input_file(path, "sweep file", "a YAML file", kMaxYamlBytes), path);
}

std::uint64_t estimated_buffer_bytes(const Case& c, int num_ranks) {
  // Upper bound without the collective's exact rounding: send + recv of the largest side.
  const std::uint64_t n = static_cast<std::uint64_t>(std::max(num_ranks, 1));
  const CollectiveFacts* facts = find_collective_facts(c.collective);
  if (facts != nullptr && facts->buffers == BufferRule::full_and_chunk) return c.bytes + c.bytes / n;
  return c.in_place ? c.bytes : 2 * c.bytes;
}

}  // namespace collbench::plan
