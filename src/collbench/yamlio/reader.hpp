// Strict YAML walking for the profile loaders (system and acceptance profiles): every problem is
// an InputError naming the file, the line (1-based) and the dotted key path, with the accepted
// keys or values and the closest one. Nothing is defaulted silently: optional keys are declared
// optional at the call site. Pure (no MPI, no GPU).
#pragma once

#include <yaml-cpp/yaml.h>

#include <climits>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/yamlio/structure.hpp"  // check_structure: keys given twice, alias bombs

namespace collbench::yamlio {

// "mapping", "list", "empty value" or "scalar".
std::string_view kind_of(const YAML::Node& node);
// "a.b" from "a" and "b"; "b" when the path is empty.
std::string join_path(const std::string& path, const std::string& key);

class Reader;

// The document of a profile-like file: check_structure first (duplicate keys, alias bombs, depth:
// what would make YAML::Load or a walk blow up, named as such), then YAML::Load ("ORIGIN:LINE: not
// valid YAML: ..."), then "ORIGIN: empty WHAT" for a file with nothing in it.
YAML::Node load_document(const Reader& r, std::string_view yaml_text, std::string_view what);

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[nodiscard]] const std::string& origin() const { return origin_; }

  // "<origin>:<line>: key '<key>': <what>" (no line when the mark is null, no key when empty).
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& key, const std::string& what) const;

  enum class EmptyValues { allow, reject };
  // Rejects a non-mapping, keys outside `allowed` (suggesting the closest), duplicate keys and,
  // with EmptyValues::reject, keys without a value.
  void check_map(const YAML::Node& node, const std::string& path, const std::vector<std::string>& allowed,
                 EmptyValues empty = EmptyValues::allow) const;

  // map[key]; "missing required key" when absent, "has no value" when empty.
  [[nodiscard]] YAML::Node required(const YAML::Node& map, const std::string& path, const std::string& key) const;
  // map[key], undefined when absent; a present-but-empty key is still an error.
  [[nodiscard]] YAML::Node optional(const YAML::Node& map, const std::string& path, const std::string& key) const;

  [[nodiscard]] std::string scalar(const YAML::Node& node, const std::string& key, std::string_view expected) const;
  // A non-empty string.
  [[nodiscard]] std::string text(const YAML::Node& node, const std::string& key) const;
  // A non-empty list of non-empty strings.
  [[nodiscard]] std::vector<std::string> text_list(const YAML::Node& node, const std::string& key) const;
  [[nodiscard]] int integer(const YAML::Node& node, const std::string& key, int min_value,
                            int max_value = INT_MAX) const;
  // A finite number in [lo, hi].
  [[nodiscard]] double number(const YAML::Node& node, const std::string& key, double lo, double hi) const;
  // A finite number in (0, hi] (0 excluded: a threshold of 0 would accept anything).
  [[nodiscard]] double positive(const YAML::Node& node, const std::string& key, double hi) const;
  [[nodiscard]] bool boolean(const YAML::Node& node, const std::string& key) const;
  // One of `valid` (the message lists them and the closest).
  [[nodiscard]] std::string one_of(const YAML::Node& node, const std::string& key,
                                   const std::vector<std::string>& valid) const;

  // Runs a value parser of the core layer and re-throws its InputError at the node.
  template <class F>
  auto at(const YAML::Node& node, const std::string& key, F&& f) const {
    try {
      return f();
    } catch (const InputError& e) {
      fail(node.Mark(), key, e.what());
    }
  }

 private:
  std::string origin_;
};

}  // namespace collbench::yamlio
