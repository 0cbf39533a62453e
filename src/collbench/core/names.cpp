// Name lists and their parsers.
#include "collbench/core/names.hpp"

#include <algorithm>

#include "collbench/core/error.hpp"

namespace collbench {
namespace {

std::string parse_from(const std::vector<std::string>& valid, std::string_view name, std::string_view what) {
  if (std::find(valid.begin(), valid.end(), name) != valid.end()) return std::string(name);
  throw InputError(unknown_name_message(what, name, valid));
}

}  // namespace

std::string_view to_string(Scope s) {
  return s == Scope::domain ? "domain" : "global";
}
std::string_view to_string(Timing t) {
  return t == Timing::isolated ? "isolated" : "pipelined";
}

Scope parse_scope(std::string_view name) {
  return parse_from({"domain", "global"}, name, "scope") == "domain" ? Scope::domain : Scope::global;
}

Timing parse_timing(std::string_view name) {
  return parse_from({"isolated", "pipelined"}, name, "timing mode") == "isolated" ? Timing::isolated
                                                                                  : Timing::pipelined;
}

const std::vector<std::string>& backend_names() {
  static const std::vector<std::string> kNames{"mpi", "nccl"};
  return kNames;
}

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> kNames{
      "auto",          "ring",         "tree",      "nvls",        "nvlstree",     "pat",  "collnet", "collnet-direct",
      "collnet-chain", "nvls-collnet", "symmetric", "cb-multimem", "hierarchical", "flat", "linear"};
  return kNames;
}

const std::vector<std::string>& buffer_kinds() {
  static const std::vector<std::string> kNames{"host", "plain", "registered", "symmetric"};
  return kNames;
}

std::string parse_backend(std::string_view name) {
  return parse_from(backend_names(), name, "backend");
}
std::string parse_algorithm(std::string_view name) {
  return parse_from(algorithm_names(), name, "algorithm (--algo)");
}
std::string parse_buffer_kind(std::string_view name) {
  return parse_from(buffer_kinds(), name, "buffer kind");
}

std::vector<std::string> split_list(std::string_view text, std::string_view what) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) {
      throw InputError("empty item in " + std::string(what) + " list '" + std::string(text) + "'");
    }
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace collbench
