// Size, rate and duration parsing, including rejections.
#include <gtest/gtest.h>

#include "collbench/core/error.hpp"
#include "collbench/core/limits.hpp"
#include "collbench/core/units.hpp"

using namespace collbench;

TEST(ParseBytes, BareAndBinarySuffixes) {
  EXPECT_EQ(parse_bytes("8"), 8u);
  EXPECT_EQ(parse_bytes("4K"), 4096u);
  EXPECT_EQ(parse_bytes("4k"), 4096u);
  EXPECT_EQ(parse_bytes("128MiB"), 134217728u);
  EXPECT_EQ(parse_bytes("128M"), 134217728u);
  EXPECT_EQ(parse_bytes("1G"), 1073741824u);
  EXPECT_EQ(parse_bytes("8GiB"), 8589934592u);
  EXPECT_EQ(parse_bytes("1.5K"), 1536u);
  EXPECT_EQ(parse_bytes("512B"), 512u);
  EXPECT_EQ(parse_bytes(" 2T "), 2199023255552u);
}

TEST(ParseBytes, DecimalSuffixes) {
  EXPECT_EQ(parse_bytes("1KB"), 1000u);
  EXPECT_EQ(parse_bytes("1kB"), 1000u);
  EXPECT_EQ(parse_bytes("1.5GB"), 1500000000u);
  EXPECT_EQ(parse_bytes("3MB"), 3000000u);
}

TEST(ParseBytes, Rejections) {
  EXPECT_THROW(parse_bytes("12QB"), InputError);
  EXPECT_THROW(parse_bytes("-8"), InputError);
  EXPECT_THROW(parse_bytes(""), InputError);
  EXPECT_THROW(parse_bytes("K"), InputError);
  EXPECT_THROW(parse_bytes("0.3"), InputError);  // not a whole byte
  EXPECT_THROW(parse_bytes("1e30"), InputError);
  try {
    parse_bytes("12QB");
    FAIL();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("12QB"), std::string::npos);
    EXPECT_NE(msg.find("QB"), std::string::npos);
    EXPECT_NE(msg.find("MiB"), std::string::npos);  // lists accepted units
    EXPECT_EQ(e.code(), ExitCode::bad_input);
  }
}

TEST(ParseBytes, SizesUpTo1PiBAndNoFurther) {
  // Issue 37 item 4: 2^64 - 1 used to be called "larger than 2^64 bytes".
  EXPECT_EQ(parse_bytes("1125899906842624"), kMaxBytes);
  EXPECT_EQ(parse_bytes("1024T"), kMaxBytes);
  const auto message = [](const char* text) {
    try {
      (void)parse_bytes(text);
    } catch (const InputError& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("1125899906842625"),
            "invalid size '1125899906842625': larger than the limit of 1PiB (1125899906842624 bytes, 2^50)");
  EXPECT_EQ(message("18446744073709551615"),
            "invalid size '18446744073709551615': larger than the limit of 1PiB (1125899906842624 bytes, 2^50)");
  EXPECT_EQ(message("1025T"), "invalid size '1025T': larger than the limit of 1PiB (1125899906842624 bytes, 2^50)");
}

TEST(FormatBytes, Human) {
  EXPECT_EQ(format_bytes(8), "8B");
  EXPECT_EQ(format_bytes(4096), "4KiB");
  EXPECT_EQ(format_bytes(134217728), "128MiB");
  EXPECT_EQ(format_bytes(1536), "1.5KiB");
}

TEST(ParseRate, NvlinkBidirectionalToPerDirection) {
  const Rate r = parse_rate("1.8TB/s bidirectional");
  EXPECT_DOUBLE_EQ(r.bytes_per_s, 1.8e12);
  EXPECT_EQ(r.direction, Direction::bidirectional);
  EXPECT_DOUBLE_EQ(per_direction_bytes_per_s(r, Direction::per_direction), 900e9);
}

TEST(ParseRate, NicBitsToBytes) {
  const Rate r = parse_rate("800Gb/s");
  EXPECT_DOUBLE_EQ(per_direction_bytes_per_s(r, Direction::per_direction), 100e9);
  EXPECT_DOUBLE_EQ(parse_rate("400Gbps").bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(parse_rate("900GB/s per-direction").bytes_per_s, 900e9);
  EXPECT_DOUBLE_EQ(parse_rate("1GiB/s").bytes_per_s, 1073741824.0);
}

TEST(ParseRate, Rejections) {
  EXPECT_THROW(parse_rate("800Gx/s"), InputError);
  EXPECT_THROW(parse_rate("800"), InputError);
  EXPECT_THROW(parse_rate("1.8TB/s sideways"), InputError);
  EXPECT_THROW(parse_rate("-1GB/s"), InputError);
}

TEST(ParseDuration, Units) {
  EXPECT_DOUBLE_EQ(parse_duration_s("2s"), 2.0);
  EXPECT_DOUBLE_EQ(parse_duration_s("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(parse_duration_s("100us"), 1e-4);
  EXPECT_DOUBLE_EQ(parse_duration_s("1.5m"), 90.0);
  EXPECT_DOUBLE_EQ(parse_duration_s("3"), 3.0);
  EXPECT_THROW(parse_duration_s("3 fortnights"), InputError);
  EXPECT_THROW(parse_duration_s("-1s"), InputError);
}

TEST(Gbps, DecimalGigabytes) {
  EXPECT_DOUBLE_EQ(gbps(1e9, 1e6), 1.0);
  EXPECT_DOUBLE_EQ(gbps(4096, 0.0), 0.0);
}
