// base/key_lines: the framing of the small text files. A whole file splits into its
// key lines; a file cut anywhere, with a foreign header, text after "end" or a line
// without a key is refused with a reason.
#include "base/key_lines.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pw {
namespace {

constexpr const char* kGood = "hdr 1\nalpha 1 2 3\nbeta x\nend\n";

TEST(KeyLines, WholeFileSplitsIntoKeysAndRests) {
  std::vector<KeyLine> lines;
  std::string why;
  ASSERT_TRUE(key_lines_split(kGood, "hdr 1", "thing", &lines, &why)) << why;
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].key, "alpha");
  EXPECT_EQ(lines[0].rest, "1 2 3");
  EXPECT_EQ(lines[0].lineno, 2);
  EXPECT_EQ(lines[1].key, "beta");
  EXPECT_EQ(lines[1].rest, "x");
  EXPECT_EQ(lines[1].lineno, 3);
}

TEST(KeyLines, EveryCutShortFileIsRefused) {
  const std::string good = kGood;
  for (size_t cut = 0; cut < good.size(); ++cut) {
    std::vector<KeyLine> lines;
    std::string why;
    EXPECT_FALSE(key_lines_split(good.substr(0, cut), "hdr 1", "thing", &lines, &why)) << cut;
    if (cut > 0) {
      EXPECT_FALSE(why.empty()) << cut;
    }
  }
}

TEST(KeyLines, ForeignHeaderTrailingTextAndKeylessLinesAreRefused) {
  struct Case {
    std::string text, why;
  } cases[] = {
      {"hdr 2\nend\n", "not a thing (v1)"},
      {"hdr 1\nend\nmore 1\n", "text after 'end'"},
      {"hdr 1\nnokey\nend\n", "line 2"},
      {"hdr 1\n rest\nend\n", "line 2"},
  };
  for (const Case& c : cases) {
    std::vector<KeyLine> lines;
    std::string why;
    EXPECT_FALSE(key_lines_split(c.text, "hdr 1", "thing", &lines, &why)) << c.text;
    EXPECT_EQ(why, c.why) << c.text;
  }
}

TEST(NumberParse, WholeFiniteNumbersInRangeOnly) {
  double v = -1;
  EXPECT_TRUE(number_parse("2.5", 0, 10, &v));
  EXPECT_EQ(v, 2.5);
  EXPECT_TRUE(number_parse("1e3", 0, 1e3, &v));
  EXPECT_EQ(v, 1000);
  for (const char* bad : {"", "x", "2.5x", " 2", "2 ", "0x5", "nan", "inf", "11", "-1", "1e999"}) {
    v = -7;
    EXPECT_FALSE(number_parse(bad, 0, 10, &v)) << bad;
    EXPECT_EQ(v, -7) << bad;
  }
  EXPECT_FALSE(number_parse(std::string(41, '1'), 0, 1e300, &v));
}

}  // namespace
}  // namespace pw
