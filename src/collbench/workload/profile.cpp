// Workload profile loading and validation. Every message names the file, the line and the
// dotted key (e.g. "deepseek-v3.yaml:14: key 'model.top_k'"), and what is accepted.
#include "collbench/workload/profile.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "collbench/core/build_info.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/paths.hpp"
#include "collbench/core/units.hpp"
#include "collbench/yamlio/reader.hpp"

namespace collbench::workload {
namespace {

namespace fs = std::filesystem;

template <class Enum>
struct NamedEnum {
  Enum value;
  const char* name;
};

constexpr NamedEnum<Popularity> kPopularities[] = {{Popularity::uniform, "uniform"},
                                                   {Popularity::lognormal, "lognormal"},
                                                   {Popularity::zipf, "zipf"},
                                                   {Popularity::one_hot_rank, "one-hot-rank"}};
constexpr NamedEnum<TokenDistribution> kTokenDistributions[] = {{TokenDistribution::fixed, "fixed"},
                                                                {TokenDistribution::linear, "linear"},
                                                                {TokenDistribution::uniform, "uniform"}};
constexpr NamedEnum<RowConvention> kRowConventions[] = {{RowConvention::copy, "copy"}, {RowConvention::dedup, "dedup"}};

template <class Enum, std::size_t N>
std::vector<std::string> names_of(const NamedEnum<Enum> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& e : table) out.emplace_back(e.name);
  return out;
}

template <class Enum, std::size_t N>
std::string_view name_of(const NamedEnum<Enum> (&table)[N], Enum value) {
  for (const auto& e : table) {
    if (e.value == value) return e.name;
  }
  return "?";
}

template <class Enum, std::size_t N>
Enum parse_named(const NamedEnum<Enum> (&table)[N], std::string_view name, std::string_view what) {
  for (const auto& e : table) {
    if (name == e.name) return e.value;
  }
  throw InputError(unknown_name_message(what, name, names_of(table)));
}

// --- scalar parsing (messages without location; callers prefix it) ---

std::int64_t parse_integer(std::string_view text, std::int64_t min_value, std::int64_t max_value) {
  std::int64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto res = std::from_chars(text.data(), end, value);
  if (text.empty() || res.ec != std::errc{} || res.ptr != end) {
    throw InputError(fmt::format("expected an integer, got '{}'", text));
  }
  if (value < min_value || value > max_value) {
    throw InputError(fmt::format("{} is out of range; accepted: {} to {}", value, min_value, max_value));
  }
  return value;
}

std::uint64_t parse_seed(std::string_view text) {
  std::uint64_t value = 0;
  int base = 10;
  std::string_view digits = text;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  const auto* end = digits.data() + digits.size();
  const auto res = std::from_chars(digits.data(), end, value, base);
  if (digits.empty() || res.ec != std::errc{} || res.ptr != end) {
    throw InputError(fmt::format("expected a non-negative integer seed (decimal or 0x hex), got '{}'", text));
  }
  return value;
}

double parse_real(std::string_view text, double min_value, bool min_inclusive, std::string_view accepted) {
  double value = 0.0;
  const auto* end = text.data() + text.size();
  const auto res = std::from_chars(text.data(), end, value);
  if (text.empty() || res.ec != std::errc{} || res.ptr != end || !std::isfinite(value)) {
    throw InputError(fmt::format("expected a number, got '{}'", text));
  }
  if (value < min_value || (!min_inclusive && value == min_value)) {
    throw InputError(fmt::format("{} is out of range; accepted: {}", text, accepted));
  }
  return value;
}

int to_int(std::int64_t v) {
  return static_cast<int>(v);
}

// --- YAML walking with locations ---

struct Reader {
  std::string source;

  [[nodiscard]] std::string where(const YAML::Node& node, std::string_view dotted_key) const {
    const auto mark = node.Mark();
    if (mark.line >= 0) return fmt::format("{}:{}: key '{}'", source, mark.line + 1, dotted_key);
    return fmt::format("{}: key '{}'", source, dotted_key);
  }

  [[nodiscard]] std::string scalar(const YAML::Node& node, std::string_view dotted_key) const {
    if (node.IsNull()) throw InputError(where(node, dotted_key) + ": missing value");
    if (!node.IsScalar()) throw InputError(where(node, dotted_key) + ": expected a single value, got a list or map");
    return node.Scalar();
  }

  // Runs a value parser, prefixing its InputError with the location.
  template <class F>
  auto value(const YAML::Node& node, std::string_view dotted_key, F&& parse) const {
    const std::string text = scalar(node, dotted_key);
    try {
      return parse(text);
    } catch (const InputError& e) {
      throw InputError(where(node, dotted_key) + ": " + e.what());
    }
  }

  // Checks that `map` is a mapping whose keys are all in `valid`; `section` is the dotted prefix.
  void check_keys(const YAML::Node& map, std::string_view section, const std::vector<std::string>& valid) const {
    if (!map.IsMap()) {
      throw InputError(where(map, section) + ": expected a mapping with keys: " + join(valid));
    }
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (std::find(valid.begin(), valid.end(), key) == valid.end()) {
        const std::string dotted = section.empty() ? key : std::string(section) + "." + key;
        const std::string what = section.empty() ? "top-level key" : "key in '" + std::string(section) + "'";
        throw InputError(where(kv.first, dotted) + ": " + unknown_name_message(what, key, valid));
      }
    }
  }

  // An empty value ("top_k:") is reported at its key's line (yaml-cpp marks an empty node at
  // the following token, often the next line).
  void check_no_empty_values(const YAML::Node& map, const std::string& section) const {
    if (!map.IsMap()) return;
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      const std::string dotted = section.empty() ? key : section + "." + key;
      if (kv.second.IsNull()) {
        throw InputError(where(kv.first, dotted) + ": missing value (give one or remove the key)");
      }
      check_no_empty_values(kv.second, dotted);
    }
  }

  [[nodiscard]] YAML::Node require(const YAML::Node& map, std::string_view section, const std::string& key) const {
    const YAML::Node node = map[key];
    if (!node) {
      const std::string dotted = section.empty() ? key : std::string(section) + "." + key;
      const auto mark = map.Mark();
      const std::string loc = mark.line >= 0 ? fmt::format("{}:{}", source, mark.line + 1) : source;
      throw InputError(fmt::format("{}: missing key '{}'", loc, dotted));
    }
    return node;
  }
};

const std::vector<std::string> kTopKeys{"name",    "description", "model",           "dispatch",
                                        "combine", "rows",        "tokens_per_rank", "routing"};
const std::vector<std::string> kModelKeys{"hidden_size",
                                          "num_routed_experts",
                                          "num_shared_experts",
                                          "top_k",
                                          "num_expert_groups",
                                          "num_layers",
                                          "num_moe_layers",
                                          "expert_intermediate_size",
                                          "dense_intermediate_size",
                                          "num_attention_heads",
                                          "q_lora_rank",
                                          "kv_lora_rank",
                                          "qk_nope_head_dim",
                                          "qk_rope_head_dim",
                                          "v_head_dim",
                                          "num_key_value_heads",
                                          "head_dim",
                                          "sliding_window",
                                          "num_sliding_window_layers",
                                          "num_mtp_layers",
                                          "vocab_size",
                                          "sequence_length"};
const std::vector<std::string> kFormatKeys{"dtype", "scale_block", "scale_dtype", "bytes_per_row"};

constexpr std::int64_t kMaxCount = 1 << 24;  // sanity bound for sizes and counts in a profile

RowFormat parse_row_format(const Reader& r, const YAML::Node& map, const std::string& section, int hidden_size) {
  r.check_keys(map, section, kFormatKeys);
  RowFormat f;
  f.dtype = r.value(r.require(map, section, "dtype"), section + ".dtype",
                    [](const std::string& t) { return parse_dtype(t); });
  if (const auto n = map["scale_block"]) {
    f.scale_block_channels = to_int(
        r.value(n, section + ".scale_block", [](const std::string& t) { return parse_integer(t, 0, kMaxCount); }));
  }
  if (const auto n = map["scale_dtype"]) {
    f.scale_dtype = r.value(n, section + ".scale_dtype", [](const std::string& t) { return parse_dtype(t); });
    if (f.scale_block_channels == 0) {
      throw InputError(r.where(n, section + ".scale_dtype") +
                       ": a scale dtype needs 'scale_block' (channels per scale)");
    }
  }
  f.bytes_per_row = row_bytes(hidden_size, f);
  if (const auto n = map["bytes_per_row"]) {
    const auto given = r.value(n, section + ".bytes_per_row", [](const std::string& t) { return parse_bytes(t); });
    if (static_cast<std::int64_t>(given) != f.bytes_per_row) {
      std::string derivation = fmt::format("{} x {} ({} B each)", hidden_size, to_string(f.dtype), dtype_size(f.dtype));
      if (f.scale_block_channels > 0) {
        derivation += fmt::format(" + one {} scale per {} channels", to_string(f.scale_dtype), f.scale_block_channels);
      }
      throw InputError(fmt::format("{}: {} B does not match the format: {} = {} B (fix it or remove the key)",
                                   r.where(n, section + ".bytes_per_row"), given, derivation, f.bytes_per_row));
    }
  }
  return f;
}

}  // namespace

std::string_view to_string(Popularity p) {
  return name_of(kPopularities, p);
}
std::string_view to_string(TokenDistribution t) {
  return name_of(kTokenDistributions, t);
}
std::string_view to_string(RowConvention c) {
  return name_of(kRowConventions, c);
}

const std::vector<std::string>& popularity_names() {
  static const auto kNames = names_of(kPopularities);
  return kNames;
}
const std::vector<std::string>& token_distribution_names() {
  static const auto kNames = names_of(kTokenDistributions);
  return kNames;
}
const std::vector<std::string>& row_convention_names() {
  static const auto kNames = names_of(kRowConventions);
  return kNames;
}

Popularity parse_popularity(std::string_view name) {
  return parse_named(kPopularities, name, "popularity");
}
TokenDistribution parse_token_distribution(std::string_view name) {
  return parse_named(kTokenDistributions, name, "token distribution");
}
RowConvention parse_row_convention(std::string_view name) {
  return parse_named(kRowConventions, name, "row convention");
}

const std::vector<std::string>& routing_setting_keys() {
  static const std::vector<std::string> kKeys{
      "popularity", "sigma",      "imbalance",  "zipf_s",  "hot_rank",          "hot_factor", "groups_per_token",
      "tokens",     "min_tokens", "max_tokens", "ep_size", "redundant_experts", "seed",       "layer"};
  return kKeys;
}

void apply_routing_setting(RoutingSettings& s, std::string_view key, std::string_view value, const std::string& where) {
  const auto& keys = routing_setting_keys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    throw InputError(where + ": " + unknown_name_message("routing key", key, keys));
  }
  try {
    if (key == "popularity") {
      s.popularity = parse_popularity(value);
    } else if (key == "sigma") {
      s.sigma = parse_real(value, 0.0, true, "sigma >= 0 (0 = uniform)");
      s.imbalance.reset();  // an explicit sigma replaces an imbalance target
      s.popularity = Popularity::lognormal;
    } else if (key == "imbalance") {
      s.imbalance = parse_real(value, 1.0, true, "a ratio max/mean >= 1, e.g. 1.25");
      s.popularity = Popularity::lognormal;
    } else if (key == "zipf_s") {
      s.zipf_s = parse_real(value, 0.0, true, "an exponent >= 0, e.g. 1.0");
    } else if (key == "hot_rank") {
      s.hot_rank_idx = to_int(parse_integer(value, 0, kMaxCount));
    } else if (key == "hot_factor") {
      s.hot_factor = parse_real(value, 0.0, false, "a factor > 0, e.g. 4 (1 = uniform)");
    } else if (key == "groups_per_token") {
      s.groups_per_token = to_int(parse_integer(value, 0, kMaxCount));
    } else if (key == "tokens") {
      s.tokens = parse_token_distribution(value);
    } else if (key == "min_tokens") {
      s.min_tokens = to_int(parse_integer(value, 0, kMaxCount));
    } else if (key == "max_tokens") {
      s.max_tokens = to_int(parse_integer(value, 0, kMaxCount));
    } else if (key == "ep_size") {
      s.ep_size = to_int(parse_integer(value, 0, kMaxCount));
    } else if (key == "redundant_experts") {
      s.num_redundant_experts = to_int(parse_integer(value, 0, kMaxCount));
    } else if (key == "seed") {
      s.seed = parse_seed(value);
    } else if (key == "layer") {
      s.layer = to_int(parse_integer(value, 0, kMaxCount));
    }
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
}

void apply_routing_map(RoutingSettings& settings, const YAML::Node& map, const std::string& source) {
  const Reader r{source};
  r.check_keys(map, "routing", routing_setting_keys());
  r.check_no_empty_values(map, "routing");
  if (map["sigma"] && map["imbalance"]) {
    throw InputError(r.where(map["imbalance"], "routing.imbalance") +
                     ": give either 'sigma' or 'imbalance' (which finds sigma), not both");
  }
  // Popularity last, so that an explicit popularity wins over the lognormal implied by sigma.
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (key == "popularity") continue;
    apply_routing_setting(settings, key, r.scalar(kv.second, "routing." + key), r.where(kv.second, "routing." + key));
  }
  if (const auto n = map["popularity"]) {
    apply_routing_setting(settings, "popularity", r.scalar(n, "routing.popularity"), r.where(n, "routing.popularity"));
  }
  // A parameter of another popularity model is almost certainly a mistake: say so.
  struct Owner {
    const char* key;
    Popularity popularity;
  };
  constexpr Owner kOwners[] = {{"sigma", Popularity::lognormal},
                               {"imbalance", Popularity::lognormal},
                               {"zipf_s", Popularity::zipf},
                               {"hot_rank", Popularity::one_hot_rank},
                               {"hot_factor", Popularity::one_hot_rank}};
  for (const auto& o : kOwners) {
    if (map[o.key] && settings.popularity != o.popularity) {
      throw InputError(fmt::format("{}: applies to popularity '{}', but popularity is '{}'",
                                   r.where(map[o.key], std::string("routing.") + o.key), to_string(o.popularity),
                                   to_string(settings.popularity)));
    }
  }
  if ((map["min_tokens"] || map["max_tokens"]) && settings.tokens != TokenDistribution::uniform) {
    const auto n = map["min_tokens"] ? map["min_tokens"] : map["max_tokens"];
    throw InputError(r.where(n, "routing.tokens") + ": min_tokens/max_tokens apply to tokens 'uniform'");
  }
}

std::int64_t row_bytes(int hidden_size, const RowFormat& format) {
  std::int64_t bytes = static_cast<std::int64_t>(hidden_size) * static_cast<std::int64_t>(dtype_size(format.dtype));
  if (format.scale_block_channels > 0) {
    const std::int64_t num_scales = (hidden_size + format.scale_block_channels - 1) / format.scale_block_channels;
    bytes += num_scales * static_cast<std::int64_t>(dtype_size(format.scale_dtype));
  }
  return bytes;
}

namespace {

// The profile's root mapping, its top-level keys checked.
YAML::Node profile_load_root(const std::string& yaml_text, const std::string& source) {
  YAML::Node root;
  yamlio::check_structure(yaml_text, source);  // first: it refuses what would make YAML::Load or a walk blow up
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: invalid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  const Reader r{source};
  if (!root.IsMap()) {
    throw InputError(source + ": a workload profile must be a mapping with keys: " + join(kTopKeys));
  }
  r.check_keys(root, "", kTopKeys);
  r.check_no_empty_values(root, "");
  return root;
}

// The `model` section: its counts, and their limits against each other.
void profile_parse_model(const Reader& r, const YAML::Node& model, WorkloadProfile& p) {
  r.check_keys(model, "model", kModelKeys);
  auto count = [&](const std::string& key, std::int64_t min_value, bool required, int fallback) {
    const YAML::Node n = required ? r.require(model, "model", key) : model[key];
    if (!n) return fallback;
    return to_int(
        r.value(n, "model." + key, [&](const std::string& t) { return parse_integer(t, min_value, kMaxCount); }));
  };
  p.hidden_size = count("hidden_size", 1, true, 0);
  p.num_routed_experts = count("num_routed_experts", 1, true, 0);
  p.top_k = count("top_k", 1, true, 0);
  p.num_shared_experts = count("num_shared_experts", 0, false, 0);
  p.num_expert_groups = count("num_expert_groups", 1, false, 1);
  p.num_layers = count("num_layers", 0, false, 0);
  p.num_moe_layers = count("num_moe_layers", 0, false, 0);
  p.expert_intermediate_size = count("expert_intermediate_size", 1, false, 0);
  p.dense_intermediate_size = count("dense_intermediate_size", 1, false, 0);
  p.num_attention_heads = count("num_attention_heads", 1, false, 0);
  p.q_lora_rank = count("q_lora_rank", 0, false, 0);
  p.kv_lora_rank = count("kv_lora_rank", 1, false, 0);
  p.qk_nope_head_dim = count("qk_nope_head_dim", 0, false, 0);
  p.qk_rope_head_dim = count("qk_rope_head_dim", 0, false, 0);
  p.v_head_dim = count("v_head_dim", 1, false, 0);
  p.num_key_value_heads = count("num_key_value_heads", 1, false, 0);
  p.head_dim = count("head_dim", 1, false, 0);
  p.sliding_window = count("sliding_window", 1, false, 0);
  p.num_sliding_window_layers = count("num_sliding_window_layers", 0, false, 0);
  p.num_mtp_layers = count("num_mtp_layers", 0, false, 0);
  p.vocab_size = count("vocab_size", 1, false, 0);
  p.sequence_length = count("sequence_length", 1, false, 0);
  if (p.top_k > p.num_routed_experts) {
    throw InputError(fmt::format("{}: top_k {} exceeds num_routed_experts {}", r.where(model["top_k"], "model.top_k"),
                                 p.top_k, p.num_routed_experts));
  }
  if (p.num_routed_experts % p.num_expert_groups != 0) {
    throw InputError(fmt::format("{}: {} experts do not split into {} equal groups of contiguous experts",
                                 r.where(model["num_expert_groups"], "model.num_expert_groups"), p.num_routed_experts,
                                 p.num_expert_groups));
  }
  if (p.num_layers > 0 && p.num_moe_layers > p.num_layers) {
    throw InputError(fmt::format("{}: {} MoE layers but only {} layers",
                                 r.where(model["num_moe_layers"], "model.num_moe_layers"), p.num_moe_layers,
                                 p.num_layers));
  }
}

// The routing's expert groups against the model's.
void profile_check_routing_groups(const Reader& r, const YAML::Node& root, const WorkloadProfile& p) {
  const auto& s = p.routing;
  if (s.groups_per_token > p.num_expert_groups) {
    throw InputError(fmt::format("{}: groups_per_token {} exceeds model.num_expert_groups {} (0 = unlimited)",
                                 r.where(root["routing"]["groups_per_token"], "routing.groups_per_token"),
                                 s.groups_per_token, p.num_expert_groups));
  }
  if (s.groups_per_token > 0 &&
      static_cast<std::int64_t>(s.groups_per_token) * (p.num_routed_experts / p.num_expert_groups) < p.top_k) {
    throw InputError(fmt::format("{}: {} groups of {} experts hold fewer than top_k = {} experts",
                                 r.where(root["routing"]["groups_per_token"], "routing.groups_per_token"),
                                 s.groups_per_token, p.num_routed_experts / p.num_expert_groups, p.top_k));
  }
}

// `expected_name`: the file's stem when loaded from a file (the name must match it), else empty.
WorkloadProfile parse_profile(const std::string& yaml_text, const std::string& source,
                              const std::string& expected_name) {
  const YAML::Node root = profile_load_root(yaml_text, source);
  const Reader r{source};
  WorkloadProfile p;
  p.source = source;
  p.name = r.scalar(r.require(root, "", "name"), "name");
  if (!expected_name.empty() && p.name != expected_name) {
    throw InputError(
        fmt::format("{}: '{}' differs from the file name '{}'; profiles are found by file name, so "
                    "make them equal",
                    r.where(root["name"], "name"), p.name, expected_name));
  }
  if (const auto n = root["description"]) p.description = r.scalar(n, "description");

  const YAML::Node model = r.require(root, "", "model");
  profile_parse_model(r, model, p);

  p.dispatch = parse_row_format(r, r.require(root, "", "dispatch"), "dispatch", p.hidden_size);
  p.combine = parse_row_format(r, r.require(root, "", "combine"), "combine", p.hidden_size);
  if (const auto n = root["rows"]) {
    p.rows = r.value(n, "rows", [](const std::string& t) { return parse_row_convention(t); });
  }
  p.tokens_per_rank = to_int(r.value(r.require(root, "", "tokens_per_rank"), "tokens_per_rank",
                                     [](const std::string& t) { return parse_integer(t, 1, kMaxCount); }));
  if (const auto n = root["routing"]) apply_routing_map(p.routing, n, source);
  profile_check_routing_groups(r, root, p);
  return p;
}

}  // namespace

WorkloadProfile parse_workload_profile(const std::string& yaml_text, const std::string& source) {
  return parse_profile(yaml_text, source, "");
}

std::vector<std::string> workload_profile_search_dirs() {
  return collbench::profile_search_dirs();
}

std::vector<std::string> list_workload_profiles() {
  std::set<std::string> names;
  for (const auto& dir : workload_profile_search_dirs()) {
    std::error_code ec;
    const fs::path workloads = fs::path(dir) / "workloads";
    if (!fs::is_directory(workloads, ec)) continue;
    for (const auto& entry : fs::directory_iterator(workloads, ec)) {
      const auto& path = entry.path();
      if (entry.is_regular_file(ec) && (path.extension() == ".yaml" || path.extension() == ".yml")) {
        names.insert(path.stem().string());
      }
    }
  }
  return {names.begin(), names.end()};
}

WorkloadProfile load_workload_profile(const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       (name_or_path.size() > 5 && (name_or_path.ends_with(".yaml") || name_or_path.ends_with(".yml")));
  fs::path path;
  if (is_path) {
    path = name_or_path;
    if (!fs::is_regular_file(path)) throw InputError(fmt::format("workload profile '{}': no such file", name_or_path));
  } else {
    for (const auto& dir : workload_profile_search_dirs()) {
      for (const char* ext : {".yaml", ".yml"}) {
        const fs::path candidate = fs::path(dir) / "workloads" / (name_or_path + ext);
        if (path.empty() && fs::is_regular_file(candidate)) path = candidate;
      }
    }
    if (path.empty()) {
      throw InputError(unknown_name_message("workload profile", name_or_path, list_workload_profiles()) +
                       " (searched <dir>/workloads/ for dir in: " + join(workload_profile_search_dirs()) + ")");
    }
  }
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("workload profile '{}': cannot read {}", name_or_path, path.string()));
  std::stringstream text;
  text << in.rdbuf();
  return parse_profile(text.str(), path.string(), path.stem().string());
}

}  // namespace collbench::workload
