// Size, bandwidth and duration parsing with explicit units (bits vs bytes, binary vs decimal,
// per-direction vs bidirectional), and the constants that convert between them.
// Pure C++; no hardware needed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace collbench {

inline constexpr double kBytesPerGB = 1e9;  // GB = 1e9 B everywhere in records (never GiB)
inline constexpr double kBitsPerByte = 8.0;

// Sizes as nccl-tests reads them: a bare number is bytes; K, M, G, T (and KiB, MiB, GiB,
// TiB) are powers of 1024; KB, MB, GB, TB (and kB) are powers of 1000. "B" alone is bytes.
// Rejects negatives, fractions of a byte, unknown suffixes and overflow (InputError).
std::uint64_t parse_bytes(std::string_view text);

// Human-readable binary size, exact where possible: 8 -> "8B", 4096 -> "4KiB", 1536 -> "1.5KiB".
std::string format_bytes(std::uint64_t bytes);

enum class Direction { unspecified, per_direction, bidirectional };

struct Rate {
  double bytes_per_s = 0.0;  // as written (before any direction conversion)
  Direction direction = Direction::unspecified;
};

// Link rates: "900GB/s", "1.8TB/s bidirectional", "800Gb/s", "100 GB/s per-direction".
// Byte units: B/s KB/s MB/s GB/s TB/s (decimal) and KiB/s MiB/s GiB/s TiB/s (binary).
// Bit units: b/s Kb/s Mb/s Gb/s Tb/s (decimal), also "bps", "Gbps". A direction word may
// follow: bidirectional|bidir|duplex or per-direction|unidirectional|each-way.
Rate parse_rate(std::string_view text);

// Per-direction bytes/s from a rate; `assume` applies when the text names no direction.
double per_direction_bytes_per_s(const Rate& rate, Direction assume);

// Durations: "2s", "500ms", "100us", "250ns", "1.5m", "1h"; a bare number is seconds.
double parse_duration_s(std::string_view text);

// Bandwidth in GB/s (1e9 B/s) for `bytes` moved in `time_us` microseconds.
constexpr double gbps(double bytes, double time_us) {
  return time_us > 0.0 ? bytes / (time_us * 1e-6) / kBytesPerGB : 0.0;
}

}  // namespace collbench
