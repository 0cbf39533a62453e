// YAML structure checks on the event stream: see structure.hpp.
#include "collbench/yamlio/structure.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "collbench/core/error.hpp"

namespace collbench::yamlio {

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char b = byte(i);
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (RFC 3629: no overlongs, no surrogates)
    if (b < 0x80) {
      len = 1;
    } else if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      lo = b == 0xE0 ? 0xA0 : 0x80;
      hi = b == 0xED ? 0x9F : 0xBF;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      lo = b == 0xF0 ? 0x90 : 0x80;
      hi = b == 0xF4 ? 0x8F : 0xBF;
    } else {
      return i;
    }
    if (i + len > text.size()) return i;
    for (std::size_t k = 1; k < len; ++k) {
      const unsigned char c = byte(i + k);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) return i;
    }
    i += len;
  }
  return std::nullopt;
}

namespace {

struct Frame {
  bool is_map = false;
  std::string path;                       // dotted path of this collection ("" at the top)
  std::uint64_t start = 0;                // the expanded count when the collection began
  YAML::anchor_t anchor = 0;              // its anchor, 0 when none
  bool expect_key = true;                 // a mapping: the next node is a key
  std::size_t index = 0;                  // a list: the next item's index
  std::string key;                        // a mapping: the key of the value that comes next
  std::map<std::string, int> first_line;  // a mapping: key -> 1-based line of its first occurrence
};

// Walks the events of one document: counts nodes with aliases expanded (from the sizes of the
// anchored nodes, computed once), keeps the path of keys for messages, and checks every mapping's
// keys as they come.
class Checker : public YAML::EventHandler {
 public:
  explicit Checker(const std::string& origin) : origin_(origin) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor, 1, "~"); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = sizes_.find(anchor);
    if (it == sizes_.end()) fail(mark, "an alias inside the node it names (a cycle); write the values out instead");
    const auto text = scalars_.find(anchor);
    leaf(mark, 0, it->second, text == scalars_.end() ? "?" : text->second);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    if (anchor != 0) scalars_[anchor] = value;
    const bool is_key = next_is_key();
    const std::string path = leaf(mark, anchor, 1, value);
    if (const auto bad = first_invalid_utf8(value)) {
      fail(mark, fmt::format("{}{}: byte 0x{:02X} at offset {} is not UTF-8 text; YAML files are UTF-8 (save the file "
                             "as UTF-8)",
                             is_key ? "a key" : "key '" + path + "'", is_key ? " in '" + parent_path() + "'" : "",
                             static_cast<unsigned char>(value[*bad]), *bad));
    }
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, true);
  }
  void OnMapEnd() override { close(); }

 private:
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what) const {
    throw InputError(fmt::format("{}:{}: {}", origin_, mark.line + 1, what));
  }

  void count(const YAML::Mark& mark, std::uint64_t nodes) {
    expanded_ = nodes > kMaxExpandedNodes - expanded_ ? kMaxExpandedNodes + 1 : expanded_ + nodes;
    if (expanded_ > kMaxExpandedNodes) {
      fail(mark, fmt::format("aliases expand to more than {} nodes (an alias bomb?); write the values out instead",
                             kMaxExpandedNodes));
    }
  }

  // The path of the node that comes next in the innermost collection; a key when it is one.
  std::string child_path(const YAML::Mark& mark, bool is_key, const std::string& key_text) {
    if (stack_.empty()) return "";
    Frame& f = stack_.back();
    if (!f.is_map) return fmt::format("{}[{}]", f.path, f.index++);
    if (!is_key) {
      f.expect_key = true;
      return f.path.empty() ? f.key : f.path + "." + f.key;
    }
    f.expect_key = false;
    f.key = key_text;
    const std::string full = f.path.empty() ? f.key : f.path + "." + f.key;
    const int line = mark.line + 1;
    const auto [it, fresh] = f.first_line.try_emplace(f.key, line);
    if (!fresh) fail(mark, fmt::format("key '{}': given twice (first on line {}); keep one", full, it->second));
    return full;
  }

  bool next_is_key() const { return !stack_.empty() && stack_.back().is_map && stack_.back().expect_key; }

  // The node's path (a key's own path when it is one).
  std::string leaf(const YAML::Mark& mark, YAML::anchor_t anchor, std::uint64_t nodes, const std::string& text) {
    std::string path = child_path(mark, next_is_key(), text);
    count(mark, nodes);
    if (anchor != 0) sizes_[anchor] = nodes;
    return path;
  }

  // The innermost collection's path ("the top level" at the top).
  std::string parent_path() const {
    return stack_.empty() || stack_.back().path.empty() ? std::string("the top level") : stack_.back().path;
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool is_map) {
    if (static_cast<int>(stack_.size()) >= kMaxDepth)
      fail(mark, fmt::format("nested deeper than {} levels", kMaxDepth));
    const bool as_key = next_is_key();
    std::string path = child_path(mark, as_key, "?");  // a mapping or list as a key: '?'
    count(mark, 1);
    Frame f;
    f.is_map = is_map;
    f.path = std::move(path);
    f.start = expanded_ - 1;
    f.anchor = anchor;
    stack_.push_back(std::move(f));
  }

  void close() {
    const Frame& f = stack_.back();
    if (f.anchor != 0) sizes_[f.anchor] = expanded_ - f.start;
    stack_.pop_back();
  }

  const std::string& origin_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::uint64_t> sizes_;  // anchored node -> its expanded size
  std::map<YAML::anchor_t, std::string> scalars_;  // anchored scalar -> its text (an alias as a key)
  std::uint64_t expanded_ = 0;
};

}  // namespace

void check_structure(std::string_view text, const std::string& origin) {
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  Checker checker(origin);
  try {
    parser.HandleNextDocument(checker);
  } catch (const YAML::Exception&) {
    return;  // a syntax error: YAML::Load's caller reports it in its own words
  }
}

}  // namespace collbench::yamlio
