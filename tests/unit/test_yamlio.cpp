// The strict YAML reader shared by the profile loaders: exact messages with file, line, key,
// accepted keys and the closest one. Pure.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/yamlio/reader.hpp"

using collbench::InputError;
using collbench::yamlio::Reader;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(YamlReader, UnknownDuplicateAndEmptyKeysNameFileLineAndKey) {
  const Reader r("p.yaml");
  const YAML::Node doc = YAML::Load("a: 1\nbandwidht: 2\n");
  EXPECT_EQ(error_of([&] {
              r.check_map(doc, "top", {"a", "bandwidth"});
            }),
            "p.yaml:2: key 'top.bandwidht': unknown key; accepted here: a, bandwidth (did you mean 'bandwidth'?)");
  EXPECT_EQ(error_of([&] { r.check_map(YAML::Load("a: 1\na: 2\n"), "", {"a"}); }), "p.yaml:2: key 'a': duplicate key");
  const YAML::Node empty = YAML::Load("a:\nb: 1\n");
  EXPECT_EQ(error_of([&] { r.check_map(empty, "", {"a", "b"}); }), "no error");
  EXPECT_EQ(error_of([&] {
              r.check_map(empty, "", {"a", "b"}, Reader::EmptyValues::reject);
            }),
            "p.yaml:1: key 'a': has no value");
  EXPECT_EQ(error_of([&] { r.check_map(YAML::Load("[1, 2]"), "x", {"a"}); }),
            "p.yaml:1: key 'x': expected a mapping of keys (a)");
}

TEST(YamlReader, ValuesAreCheckedWithTheirRange) {
  const Reader r("p.yaml");
  const YAML::Node doc = YAML::Load("n: 7\nf: 0.5\nz: 0\nb: yes\nl: [x, y]\nname: ring\n");
  EXPECT_EQ(r.integer(doc["n"], "n", 1), 7);
  EXPECT_EQ(error_of([&] { (void)r.integer(doc["n"], "n", 8); }), "p.yaml:1: key 'n': must be at least 8, got 7");
  EXPECT_EQ(error_of([&] { (void)r.integer(doc["n"], "n", 1, 4); }), "p.yaml:1: key 'n': must be in [1, 4], got 7");
  EXPECT_EQ(error_of([&] { (void)r.integer(doc["f"], "f", 0); }), "p.yaml:2: key 'f': expected an integer, got '0.5'");
  EXPECT_DOUBLE_EQ(r.number(doc["f"], "f", 0.0, 1.0), 0.5);
  EXPECT_EQ(error_of([&] { (void)r.positive(doc["z"], "z", 1.0); }), "p.yaml:3: key 'z': must be in (0, 1], got 0");
  EXPECT_EQ(error_of([&] { (void)r.boolean(doc["b"], "b"); }), "p.yaml:4: key 'b': expected true or false, got 'yes'");
  EXPECT_EQ(r.text_list(doc["l"], "l"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(error_of([&] { (void)r.text(doc["l"], "l"); }), "p.yaml:5: key 'l': expected a string, got a list");
  EXPECT_EQ(r.one_of(doc["name"], "name", {"ring", "tree"}), "ring");
  EXPECT_EQ(error_of([&] { (void)r.required(doc, "", "missing"); }), "p.yaml:1: key 'missing': missing required key");
  EXPECT_FALSE(r.optional(doc, "", "missing").IsDefined());
}
