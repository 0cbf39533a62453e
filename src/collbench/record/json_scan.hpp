// A reader of JSON text that gives up instead of failing, for case_scan.cpp: each test returns
// false, never throws, for what it would not read exactly as nlohmann::json::parse does. Internal
// to the record layer; pure C++.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench::record::json_scan {

// Deeper values are left to the general reader (records nest 3 levels; it refuses 65).
constexpr int kMaxDepth = 32;

// A JSON number as nlohmann reads one that is not negative: unsigned when written with digits
// only, else a double.
struct Number {
  bool is_float = false;
  std::uint64_t u = 0;
  double d = 0;
  [[nodiscard]] double as_double() const { return is_float ? d : static_cast<double>(u); }
};

// The JSON text of one line, read front to back.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  char peek() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n')) ++i_;
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  bool eat(char c) {
    if (peek() != c || i_ >= s_.size()) return false;
    ++i_;
    return true;
  }
  bool at_end() { return peek() == '\0' && i_ == s_.size(); }

  // A string without escapes, control characters or bytes outside ASCII.
  bool string(std::string_view& out);
  bool literal(std::string_view word) {
    peek();
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  // A number of JSON's grammar that is not negative.
  bool number(Number& out);

 private:
  bool digits() {
    const std::size_t begin = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    return i_ > begin;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

// Each member of an object: `on_member(key)` reads its value.
template <class F>
bool members(Scanner& in, F&& on_member) {
  if (!in.eat('{')) return false;
  if (in.eat('}')) return true;
  do {
    std::string_view key;
    if (!in.string(key) || !in.eat(':') || !on_member(key)) return false;
  } while (in.eat(','));
  return in.eat('}');
}

// Each element of an array: `on_element()` reads it.
template <class F>
bool elements(Scanner& in, F&& on_element) {
  if (!in.eat('[')) return false;
  if (in.eat(']')) return true;
  do {
    if (!on_element()) return false;
  } while (in.eat(','));
  return in.eat(']');
}

// Any value, as nlohmann's tree holds it, nested at most kMaxDepth deep below `depth`.
bool any_value(Scanner& in, nlohmann::json& out, int depth);
// A value read and dropped.
bool skip_value(Scanner& in);
// Values of one type, as case_from_json's typed reads take them.
bool string_value(Scanner& in, std::string& out);
bool double_value(Scanner& in, double& out);         // a number (not true, false or null)
bool uint64_value(Scanner& in, std::uint64_t& out);  // digits only
bool int_value(Scanner& in, int& out);               // digits only, at most INT_MAX
bool bool_value(Scanner& in, bool& out);
bool doubles_value(Scanner& in, std::vector<double>& out);
bool ints_value(Scanner& in, std::vector<int>& out);

// Reads a value that may be null: null leaves `out` empty; anything else `read(in, value)`.
template <class T, class F>
bool nullable(Scanner& in, std::optional<T>& out, F&& read) {
  if (in.peek() == 'n') return in.literal("null");
  return read(in, out.emplace());
}

// An object whose members named in `names` are read by `read(index)`, each at most once and all
// of them required; other members are read and ignored, as case_from_json ignores them.
template <std::size_t N, class F>
bool object_of(Scanner& in, const std::array<std::string_view, N>& names, F&& read) {
  std::uint32_t seen = 0;
  const bool ok = members(in, [&](std::string_view key) {
    for (std::size_t k = 0; k < N; ++k) {
      if (names[k] != key) continue;
      if ((seen >> k) & 1U) return false;
      seen |= 1U << k;
      return read(k);
    }
    return skip_value(in);
  });
  return ok && seen == (std::uint32_t{1} << N) - 1;
}

}  // namespace collbench::record::json_scan
