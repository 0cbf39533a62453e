#include "collbench/record/value_checks.hpp"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "collbench/core/error.hpp"

namespace collbench::record {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 3> kNonFinite{"-Infinity", "Infinity", "NaN"};

void check_number(const json& value, const std::string& key) {
  if (!value.is_number()) return;
  if (value.get<double>() < 0.0) {
    throw InputError(fmt::format("key '{}': {} is negative; times and rates are numbers >= 0", key, value.dump()));
  }
}

void check_array(const json& values, const std::string& key) {
  if (!values.is_array()) return;
  for (std::size_t i = 0; i < values.size(); ++i) check_number(values[i], fmt::format("{}[{}]", key, i));
}

// The path of the string that stands for the first non-finite literal.
std::optional<std::string> sentinel_path(const json& j, const std::string& path) {
  if (j.is_string()) return j.get<std::string>() == "\x01nf0" ? std::optional<std::string>(path) : std::nullopt;
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (auto p = sentinel_path(j[i], fmt::format("{}[{}]", path, i))) return p;
    }
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (auto p = sentinel_path(*it, path.empty() ? it.key() : path + "." + it.key())) return p;
    }
  }
  return std::nullopt;
}

// The non-finite literal starting at `pos`, or empty.
std::string_view literal_at(std::string_view line, std::size_t pos) {
  for (const auto lit : kNonFinite) {
    if (line.substr(pos, lit.size()) == lit) return lit;
  }
  return {};
}

}  // namespace

void check_case_values(const json& record) {
  const auto kind = record.find("kind");
  if (kind == record.end() || *kind != "case") return;
  if (const auto t = record.find("time_us"); t != record.end() && t->is_object()) {
    for (auto it = t->begin(); it != t->end(); ++it) check_number(*it, "time_us." + it.key());
  }
  for (const char* key : {"samples_us", "per_rank_p50_us"}) {
    if (const auto a = record.find(key); a != record.end()) check_array(*a, key);
  }
  if (const auto pr = record.find("per_rank"); pr != record.end() && pr->is_object()) {
    for (auto it = pr->begin(); it != pr->end(); ++it) check_array(*it, "per_rank." + it.key());
  }
  for (const char* key : {"algbw_gbps", "busbw_gbps"}) {
    if (const auto v = record.find(key); v != record.end()) check_number(*v, key);
  }
}

std::optional<NonFinite> find_non_finite(std::string_view line) {
  // Each literal outside strings becomes a string of its own ("\u0001nf<k>"), so that the line
  // parses and the first one's key can be found.
  std::string patched;
  std::vector<std::string_view> tokens;
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    const std::string_view lit = in_string ? std::string_view() : literal_at(line, i);
    if (!lit.empty()) {
      patched += fmt::format("\"\\u0001nf{}\"", tokens.size());
      tokens.push_back(lit);
      i += lit.size() - 1;
      continue;
    }
    patched += c;
    if (in_string && c == '\\' && i + 1 < line.size()) {
      patched += line[++i];
    } else if (c == '"') {
      in_string = !in_string;
    }
  }
  if (tokens.empty()) return std::nullopt;
  try {
    if (const auto path = sentinel_path(json::parse(patched), "")) return NonFinite{*path, std::string(tokens[0])};
  } catch (const json::exception&) {
    // Not JSON apart from the literals either: the reader's own message says where.
  }
  return std::nullopt;
}

}  // namespace collbench::record
