#include "collbench/yamlio/reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "collbench/core/units.hpp"

namespace collbench::yamlio {

std::string_view kind_of(const YAML::Node& node) {
  if (node.IsMap()) return "mapping";
  if (node.IsSequence()) return "list";
  if (node.IsNull()) return "empty value";
  return "scalar";
}

std::string join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

YAML::Node load_document(const Reader& r, std::string_view yaml_text, std::string_view what) {
  check_structure(yaml_text, r.origin());
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    r.fail(e.mark, "", "not valid YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) r.fail(YAML::Mark::null_mark(), "", fmt::format("empty {}", what));
  return root;
}

void Reader::fail(const YAML::Mark& mark, const std::string& key, const std::string& what) const {
  const std::string where = mark.is_null() ? origin_ : fmt::format("{}:{}", origin_, mark.line + 1);
  if (key.empty()) throw InputError(fmt::format("{}: {}", where, what));
  throw InputError(fmt::format("{}: key '{}': {}", where, key, what));
}

void Reader::check_map(const YAML::Node& node, const std::string& path, const std::vector<std::string>& allowed,
                       EmptyValues empty) const {
  if (!node.IsMap()) fail(node.Mark(), path, fmt::format("expected a mapping of keys ({})", join(allowed)));
  std::set<std::string> seen;
  for (const auto& item : node) {
    const std::string key = item.first.Scalar();
    const std::string full = join_path(path, key);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string msg = "unknown key; accepted here: " + join(allowed);
      const std::string hint = closest_match(key, allowed);
      if (!hint.empty()) msg += fmt::format(" (did you mean '{}'?)", hint);
      fail(item.first.Mark(), full, msg);
    }
    if (!seen.insert(key).second) fail(item.first.Mark(), full, "duplicate key");
    if (empty == EmptyValues::reject && item.second.IsNull()) fail(item.first.Mark(), full, "has no value");
  }
}

YAML::Node Reader::required(const YAML::Node& map, const std::string& path, const std::string& key) const {
  YAML::Node value = map[key];
  if (!value.IsDefined()) {
    fail(map.Mark(), join_path(path, key),
         fmt::format("missing required key{}", path.empty() ? "" : " in '" + path + "'"));
  }
  if (value.IsNull()) fail(value.Mark(), join_path(path, key), "has no value");
  return value;
}

YAML::Node Reader::optional(const YAML::Node& map, const std::string& path, const std::string& key) const {
  YAML::Node value = map[key];
  if (value.IsDefined() && value.IsNull()) fail(value.Mark(), join_path(path, key), "has no value");
  return value;
}

std::string Reader::scalar(const YAML::Node& node, const std::string& key, std::string_view expected) const {
  if (!node.IsScalar()) fail(node.Mark(), key, fmt::format("expected {}, got a {}", expected, kind_of(node)));
  return node.Scalar();
}

std::string Reader::text(const YAML::Node& node, const std::string& key) const {
  std::string s = scalar(node, key, "a string");
  if (s.empty()) fail(node.Mark(), key, "must not be empty");
  return s;
}

std::vector<std::string> Reader::text_list(const YAML::Node& node, const std::string& key) const {
  if (!node.IsSequence()) fail(node.Mark(), key, fmt::format("expected a list, got a {}", kind_of(node)));
  if (node.size() == 0) fail(node.Mark(), key, "must not be an empty list");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(text(node[i], fmt::format("{}[{}]", key, i)));
  return out;
}

int Reader::integer(const YAML::Node& node, const std::string& key, int min_value, int max_value) const {
  const std::string s = scalar(node, key, "an integer");
  int value = 0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), value);
  if (res.ec != std::errc{} || res.ptr != s.data() + s.size()) {
    fail(node.Mark(), key, fmt::format("expected an integer, got '{}'", s));
  }
  if (max_value == INT_MAX) {
    if (value < min_value) fail(node.Mark(), key, fmt::format("must be at least {}, got {}", min_value, value));
  } else if (value < min_value || value > max_value) {
    fail(node.Mark(), key, fmt::format("must be in [{}, {}], got {}", min_value, max_value, value));
  }
  return value;
}

double Reader::number(const YAML::Node& node, const std::string& key, double lo, double hi) const {
  const std::string s = scalar(node, key, "a number");
  double value = 0.0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), value);
  if (res.ec != std::errc{} || res.ptr != s.data() + s.size() || !std::isfinite(value)) {
    fail(node.Mark(), key, fmt::format("expected a number, got '{}'", s));
  }
  if (!(value >= lo && value <= hi)) fail(node.Mark(), key, fmt::format("must be in [{}, {}], got {}", lo, hi, s));
  return value;
}

double Reader::positive(const YAML::Node& node, const std::string& key, double hi) const {
  const std::string s = scalar(node, key, "a number");
  double value = 0.0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), value);
  if (res.ec != std::errc{} || res.ptr != s.data() + s.size() || !std::isfinite(value)) {
    fail(node.Mark(), key, fmt::format("expected a number, got '{}'", s));
  }
  if (!(value > 0.0 && value <= hi)) fail(node.Mark(), key, fmt::format("must be in (0, {}], got {}", hi, s));
  return value;
}

bool Reader::boolean(const YAML::Node& node, const std::string& key) const {
  const std::string s = scalar(node, key, "true or false");
  if (s == "true") return true;
  if (s == "false") return false;
  fail(node.Mark(), key, fmt::format("expected true or false, got '{}'", s));
}

std::string Reader::one_of(const YAML::Node& node, const std::string& key,
                           const std::vector<std::string>& valid) const {
  const std::string s = scalar(node, key, "a name");
  if (std::find(valid.begin(), valid.end(), s) == valid.end())
    fail(node.Mark(), key, unknown_name_message("value", s, valid));
  return s;
}

}  // namespace collbench::yamlio
