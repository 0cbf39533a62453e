// YAML structure checks on the event stream: see structure.hpp.
#include "collbench/yamlio/structure.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <sstream>
#include <vector>

#include "collbench/core/error.hpp"

namespace collbench::yamlio {
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
    leaf(mark, anchor, 1, value);
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

  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, std::uint64_t nodes, const std::string& text) {
    (void)child_path(mark, next_is_key(), text);
    count(mark, nodes);
    if (anchor != 0) sizes_[anchor] = nodes;
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
