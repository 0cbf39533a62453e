// What a YAML file's tree may be, checked on its event stream before anything walks the tree
// (issue 37 item 3): aliases are never expanded here, so a few hundred bytes of nested aliases
// (an "alias bomb", 9^9 nodes from 10 anchors) are refused at once instead of keeping a walk at
// 100% CPU for minutes. Pure (no MPI, no GPU).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace collbench::yamlio {

// The most nodes a document may hold with every alias replaced by what it names. The largest
// file in profiles/ holds under 2,000; a sweep of 10,000 cases with 5 keys each, 100,000.
inline constexpr std::uint64_t kMaxExpandedNodes = 1'000'000;
// The deepest nesting of mappings and lists (collbench's files nest at most 5 levels).
inline constexpr int kMaxDepth = 64;

// Checks TEXT's first document, before YAML::Load (whose own depth limit would say only "bad
// file"):
//  - a key given twice in one mapping: "<origin>:<line>: key '<a.b>': given twice (first on
//    line <n>); keep one" (an anchored mapping is checked once, where it is written);
//  - more than kMaxExpandedNodes nodes once aliases are expanded: "<origin>:<line>: aliases
//    expand to more than 1000000 nodes (an alias bomb?); write the values out instead";
//  - nesting deeper than kMaxDepth: "<origin>:<line>: nested deeper than 64 levels";
//  - a key or value that is not UTF-8: "<origin>:<line>: key '<a.b>': byte 0xFF at offset 3 is
//    not UTF-8 text; ..." (yaml-cpp passes such bytes through; the results writer would replace
//    them, so a sweep's name or parameter would not read back as written).
// InputError (exit 2) for each; a syntax error is left to the YAML::Load that follows.
void check_structure(std::string_view text, const std::string& origin);

// The offset of the first byte of TEXT that does not start a well-formed UTF-8 sequence (RFC
// 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or nullopt.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

}  // namespace collbench::yamlio
