// --set KEY=VALUE on a system profile (profile_overrides.hpp).
#include "collbench/model/profile_overrides.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "collbench/core/error.hpp"
#include "collbench/yamlio/structure.hpp"

namespace collbench::model {
namespace {

struct Override {
  std::vector<std::string> path;  // key split at '.'
  std::string value;
};

Override parse_override(const std::string& text) {
  const auto eq = text.find('=');
  const std::string key = eq == std::string::npos ? "" : text.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
  if (key.empty() || value.empty()) {
    throw InputError(
        fmt::format("--set '{}': expected KEY=VALUE with a profile key, e.g. scale_out.oversubscription=2 or "
                    "scale_out.in_network_reduction.supported=true",
                    text));
  }
  Override o;
  std::size_t start = 0;
  while (start <= key.size()) {
    const auto dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw InputError(fmt::format("--set '{}': key '{}' has an empty part", text, key));
    o.path.push_back(part);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  o.value = value;
  return o;
}

YAML::Node parse_value(const std::string& text, const std::string& set) {
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("--set '{}': the value is not valid YAML ({})", set, e.msg));
  }
  yamlio::check_structure(text, fmt::format("--set '{}'", set));
  return value;
}

// Sets root[path...] = value, creating sections that are missing.
void apply(YAML::Node root, const Override& o, const std::string& set) {
  YAML::Node node = root;
  std::string walked;
  for (std::size_t i = 0; i + 1 < o.path.size(); ++i) {
    walked += (walked.empty() ? "" : ".") + o.path[i];
    YAML::Node next = node[o.path[i]];
    if (next.IsDefined() && !next.IsNull() && !next.IsMap()) {
      throw InputError(fmt::format("--set '{}': '{}' is a value, not a section with keys", set, walked));
    }
    if (!next.IsDefined() || next.IsNull()) node[o.path[i]] = YAML::Node(YAML::NodeType::Map);
    node.reset(node[o.path[i]]);
  }
  node[o.path.back()] = parse_value(o.value, set);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read system profile '{}'", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string apply_profile_overrides(std::string_view yaml_text, const std::vector<std::string>& sets) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("system profile is not valid YAML: {}", e.msg));
  }
  if (!root.IsMap()) throw InputError("--set: the system profile is not a map of keys");
  for (const auto& set : sets) apply(root, parse_override(set), set);
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

SystemProfile load_system_profile(const std::string& name_or_path, const std::vector<std::string>& sets) {
  SystemProfile file = load_system_profile(name_or_path);
  if (sets.empty()) return file;
  std::string joined;
  for (const auto& s : sets) joined += (joined.empty() ? "" : ", ") + s;
  const std::string text = apply_profile_overrides(read_text(file.path), sets);
  SystemProfile p = parse_system_profile(text, fmt::format("{} with --set {}", file.path, joined));
  p.path = file.path;
  p.description += fmt::format(" (--set {})", joined);
  return p;
}

}  // namespace collbench::model
