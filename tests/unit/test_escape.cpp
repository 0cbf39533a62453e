// The writers' shared escaping (report/escape.hpp): exact outputs. Pure C++.
#include <gtest/gtest.h>

#include <string>

#include "collbench/report/escape.hpp"

using collbench::report::md_escape;
using collbench::report::xml_escape;

TEST(Escape, XmlEntitiesAndForbiddenControlCharacters) {
  EXPECT_EQ(xml_escape(R"(<a href="x">Tom & Jerry's</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;");
  EXPECT_EQ(xml_escape(std::string("a\x01"
                                   "b\tc\nd\x1f",
                                   8)),
            "ab\tc\nd");
  EXPECT_EQ(xml_escape(""), "");
}

TEST(Escape, MarkdownCellPipesAndNewlines) {
  EXPECT_EQ(md_escape("a|b\nc"), "a\\|b c");
  EXPECT_EQ(md_escape("plain"), "plain");
}
