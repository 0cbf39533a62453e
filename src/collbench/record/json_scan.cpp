// A reader of JSON text that gives up instead of failing (see json_scan.hpp).
#include "collbench/record/json_scan.hpp"

#include <charconv>
#include <climits>
#include <cmath>
#include <utility>

namespace collbench::record::json_scan {

using nlohmann::json;

// A string without escapes, control characters or bytes outside ASCII.
bool Scanner::string(std::string_view& out) {
  if (!eat('"')) return false;
  const std::size_t begin = i_;
  for (; i_ < s_.size(); ++i_) {
    const auto c = static_cast<unsigned char>(s_[i_]);
    if (c == '"') {
      out = s_.substr(begin, i_++ - begin);
      return true;
    }
    if (c < 0x20 || c >= 0x80 || c == '\\') return false;
  }
  return false;
}

// A number of JSON's grammar that is not negative.
bool Scanner::number(Number& out) {
  peek();
  const std::size_t begin = i_;
  if (!digits()) return false;
  if (s_[begin] == '0' && i_ - begin > 1) return false;
  if (i_ < s_.size() && s_[i_] == '.') {
    ++i_;
    if (!digits()) return false;
    out.is_float = true;
  }
  if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
    ++i_;
    if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
    if (!digits()) return false;
    out.is_float = true;
  }
  const char* first = s_.data() + begin;
  const char* last = s_.data() + i_;
  if (!out.is_float) {
    const auto res = std::from_chars(first, last, out.u);
    return res.ec == std::errc{} && res.ptr == last;
  }
  const auto res = std::from_chars(first, last, out.d);
  return res.ec == std::errc{} && res.ptr == last && std::isfinite(out.d);
}

bool any_value(Scanner& in, json& out, int depth) {
  if (depth > kMaxDepth) return false;
  switch (in.peek()) {
    case '{':
      out = json::object();
      return members(in, [&](std::string_view key) {
        auto [it, fresh] = out.get_ref<json::object_t&>().try_emplace(std::string(key));
        return fresh && any_value(in, it->second, depth + 1);
      });
    case '[':
      out = json::array();
      return elements(in, [&] { return any_value(in, out.emplace_back(), depth + 1); });
    case '"': {
      std::string_view s;
      if (!in.string(s)) return false;
      out = std::string(s);
      return true;
    }
    case 't':
      out = true;
      return in.literal("true");
    case 'f':
      out = false;
      return in.literal("false");
    case 'n':
      out = nullptr;
      return in.literal("null");
    default: {
      Number n;
      if (!in.number(n)) return false;
      out = n.is_float ? json(n.d) : json(n.u);
      return true;
    }
  }
}

bool skip_value(Scanner& in) {
  json ignored;
  return any_value(in, ignored, 1);
}

bool string_value(Scanner& in, std::string& out) {
  std::string_view s;
  if (!in.string(s)) return false;
  out.assign(s);
  return true;
}

bool double_value(Scanner& in, double& out) {
  Number n;
  if (!in.number(n)) return false;
  out = n.as_double();
  return true;
}

bool uint64_value(Scanner& in, std::uint64_t& out) {
  Number n;
  if (!in.number(n) || n.is_float) return false;
  out = n.u;
  return true;
}

bool int_value(Scanner& in, int& out) {
  std::uint64_t u = 0;
  if (!uint64_value(in, u) || u > static_cast<std::uint64_t>(INT_MAX)) return false;
  out = static_cast<int>(u);
  return true;
}

bool bool_value(Scanner& in, bool& out) {
  out = in.peek() == 't';
  return in.literal(out ? "true" : "false");
}

bool doubles_value(Scanner& in, std::vector<double>& out) {
  return elements(in, [&] { return double_value(in, out.emplace_back()); });
}

bool ints_value(Scanner& in, std::vector<int>& out) {
  return elements(in, [&] { return int_value(in, out.emplace_back()); });
}

}  // namespace collbench::record::json_scan
