// Stated limits on counts and sizes (issue 37 item 4): every count and size a flag or a file
// gives is checked against one of these, with overflow-safe arithmetic, and refused (exit 2)
// before anything is allocated. docs/errors.md lists them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace collbench {

// The largest size any flag or file may give: 1 PiB, far past any buffer or message, and small
// enough that a size times 2^13 (buffers x ranks on a node) cannot wrap a 64-bit count and that
// a double holds every size exactly (2^50 < 2^53). parse_bytes refuses more.
inline constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 50;

// The most ranks or GPUs a count may name: 2^20, ten times the largest cluster built, so that a
// count times a size or a batch stays far inside 64 bits.
inline constexpr int kMaxRanks = 1 << 20;

// Why ITEM is not a whole count in [1, max_value], in words for a message ("is not a whole
// number", "is not positive", "is larger than the limit of 1048576"), or nullopt with VALUE set.
std::optional<std::string> count_problem(std::string_view item, int max_value, int& value);

}  // namespace collbench
