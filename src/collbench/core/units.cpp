// Unit parsing. Every rejection names the text and the accepted forms.
#include "collbench/core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "collbench/core/error.hpp"
#include "collbench/core/limits.hpp"

namespace collbench {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "1.5MiB" into (1.5, "MiB"). Throws when there is no leading number.
std::pair<double, std::string_view> split_number(std::string_view text, std::string_view what,
                                                 std::string_view accepted) {
  const std::string_view s = trim(text);
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  // exponent, e.g. 1e6
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E') && i + 1 < s.size() &&
      (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-' || s[i + 1] == '+')) {
    ++i;
    if (s[i] == '-' || s[i] == '+') ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  }
  const std::string number(s.substr(0, i));
  double value = 0.0;
  const auto* begin = number.data();
  const auto* end = number.data() + number.size();
  const auto res = std::from_chars(begin, end, value);
  if (number.empty() || res.ec != std::errc{} || res.ptr != end || !std::isfinite(value)) {
    throw InputError(fmt::format("invalid {} '{}': expected a number with a unit, e.g. {}", what, text, accepted));
  }
  return {value, trim(s.substr(i))};
}

struct Suffix {
  std::string_view name;
  double factor;
};

}  // namespace

std::uint64_t parse_bytes(std::string_view text) {
  static constexpr std::array<Suffix, 18> kSuffixes{{
      {"", 1.0},
      {"B", 1.0},
      {"K", 1024.0},
      {"KiB", 1024.0},
      {"k", 1024.0},
      {"M", 1048576.0},
      {"MiB", 1048576.0},
      {"G", 1073741824.0},
      {"GiB", 1073741824.0},
      {"T", 1099511627776.0},
      {"TiB", 1099511627776.0},
      {"kB", 1e3},
      {"KB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"TB", 1e12},
      {"Ki", 1024.0},
      {"Mi", 1048576.0},
  }};
  constexpr std::string_view kAccepted =
      "8, 4K, 128MiB, 1G, 1.5GB (K/M/G/T and KiB/MiB/GiB/TiB = 1024^n; kB/KB/MB/GB/TB = 1000^n)";
  const auto [value, suffix] = split_number(text, "size", kAccepted);
  const Suffix* found = nullptr;
  for (const auto& s : kSuffixes) {
    if (s.name == suffix) found = &s;
  }
  if (found == nullptr) {
    throw InputError(fmt::format("invalid size '{}': unknown unit '{}'; accepted: {}", text, suffix, kAccepted));
  }
  if (value < 0.0) {
    throw InputError(fmt::format("invalid size '{}': sizes must not be negative", text));
  }
  const double bytes = value * found->factor;
  if (bytes > static_cast<double>(kMaxBytes)) {
    throw InputError(fmt::format("invalid size '{}': larger than the limit of 1PiB ({} bytes, 2^50)", text, kMaxBytes));
  }
  if (bytes != std::floor(bytes)) {
    throw InputError(fmt::format("invalid size '{}': not a whole number of bytes ({})", text, bytes));
  }
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr std::array<std::string_view, 5> kNames{"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  double value = static_cast<double>(bytes);
  while (unit + 1 < kNames.size() && value >= 1024.0) {
    value /= 1024.0;
    ++unit;
  }
  if (value == std::floor(value)) return fmt::format("{}{}", static_cast<std::uint64_t>(value), kNames[unit]);
  return fmt::format("{:.3g}{}", value, kNames[unit]);
}

namespace {

// The direction word after a rate's unit (empty: unspecified).
Direction rate_direction(std::string_view text, std::string_view dir_word) {
  if (dir_word.empty()) return Direction::unspecified;
  if (dir_word == "bidirectional" || dir_word == "bidir" || dir_word == "duplex") return Direction::bidirectional;
  if (dir_word == "per-direction" || dir_word == "unidirectional" || dir_word == "each-way" ||
      dir_word == "per_direction") {
    return Direction::per_direction;
  }
  throw InputError(
      fmt::format("invalid rate '{}': unknown direction '{}'; accepted: bidirectional, bidir, duplex, "
                  "per-direction, unidirectional, each-way",
                  text, dir_word));
}

// A rate unit's factors: [prefix][i](B|b)(/s|ps); prefix 0 when the unit is unknown.
struct RateUnit {
  double prefix = 0.0;
  double bits_factor = 0.0;
};

RateUnit rate_unit(std::string_view unit) {
  std::string_view u = unit;
  bool per_second = false;
  if (u.size() >= 2 && u.substr(u.size() - 2) == "/s") {
    u.remove_suffix(2);
    per_second = true;
  } else if (u.size() >= 2 && u.substr(u.size() - 2) == "ps") {
    u.remove_suffix(2);
    per_second = true;
  }
  RateUnit f;
  if (per_second && !u.empty() && (u.back() == 'B' || u.back() == 'b')) {
    f.bits_factor = u.back() == 'B' ? 1.0 : 1.0 / kBitsPerByte;
    u.remove_suffix(1);
  }
  if (f.bits_factor != 0.0) {
    static constexpr std::array<Suffix, 10> kPrefixes{{{"", 1.0},
                                                       {"K", 1e3},
                                                       {"k", 1e3},
                                                       {"M", 1e6},
                                                       {"G", 1e9},
                                                       {"T", 1e12},
                                                       {"Ki", 1024.0},
                                                       {"Mi", 1048576.0},
                                                       {"Gi", 1073741824.0},
                                                       {"Ti", 1099511627776.0}}};
    for (const auto& p : kPrefixes) {
      if (p.name == u) f.prefix = p.factor;
    }
  }
  return f;
}

}  // namespace

Rate parse_rate(std::string_view text) {
  constexpr std::string_view kAccepted =
      "900GB/s, 1.8TB/s bidirectional, 800Gb/s, 100GB/s per-direction (B = bytes, b = bits; "
      "K/M/G/T = 1000^n, Ki/Mi/Gi/Ti = 1024^n)";
  auto [value, rest] = split_number(text, "rate", kAccepted);
  if (value < 0.0) throw InputError(fmt::format("invalid rate '{}': must not be negative", text));

  // Split unit and optional direction word.
  std::string_view unit = rest;
  std::string_view dir_word;
  if (const auto sp = rest.find_first_of(" \t"); sp != std::string_view::npos) {
    unit = trim(rest.substr(0, sp));
    dir_word = trim(rest.substr(sp));
  }
  Rate rate;
  rate.direction = rate_direction(text, dir_word);
  const RateUnit f = rate_unit(unit);
  if (f.prefix == 0.0) {
    throw InputError(fmt::format("invalid rate '{}': unknown unit '{}'; accepted: {}", text, unit, kAccepted));
  }
  rate.bytes_per_s = value * f.prefix * f.bits_factor;
  return rate;
}

double per_direction_bytes_per_s(const Rate& rate, Direction assume) {
  const Direction d = rate.direction == Direction::unspecified ? assume : rate.direction;
  return d == Direction::bidirectional ? rate.bytes_per_s / 2.0 : rate.bytes_per_s;
}

double parse_duration_s(std::string_view text) {
  constexpr std::string_view kAccepted = "2s, 500ms, 100us, 250ns, 1.5m, 1h (a bare number is seconds)";
  static constexpr std::array<Suffix, 8> kSuffixes{
      {{"", 1.0}, {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"m", 60.0}, {"min", 60.0}, {"h", 3600.0}}};
  const auto [value, suffix] = split_number(text, "duration", kAccepted);
  for (const auto& s : kSuffixes) {
    if (s.name == suffix) {
      if (value < 0.0) throw InputError(fmt::format("invalid duration '{}': must not be negative", text));
      return value * s.factor;
    }
  }
  throw InputError(fmt::format("invalid duration '{}': unknown unit '{}'; accepted: {}", text, suffix, kAccepted));
}

}  // namespace collbench
