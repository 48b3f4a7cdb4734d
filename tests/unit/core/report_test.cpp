// The report: keys of docs/report.md, paths, JSON escaping.
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/json.h"
#include "core/report.h"

namespace pw::report {
namespace {

TEST(Report, PathExpandsPidAndSeparatesForkChildren) {
  const std::string pid = std::to_string(getpid());
  EXPECT_EQ(report_path("/tmp/r-%p.json", false), "/tmp/r-" + pid + ".json");
  EXPECT_EQ(report_path("/tmp/r.json", false), "/tmp/r.json");
  EXPECT_EQ(report_path("/tmp/r.json", true), "/tmp/r.json." + pid);
  EXPECT_EQ(report_path("/tmp/r-%p.json", true), "/tmp/r-" + pid + ".json");
}

TEST(Report, HasEveryKeyOfTheDesign) {
  opt::Options o;
  planning::Planned p;
  p.budget.cpus = {0, 1};
  p.budget.cores = 2;
  p.plan.pools = 1;
  p.plan.threads = 2;
  p.plan.core_sets = {{0, 1}};
  Input in;
  in.opt = &o;
  in.program = "prog";
  in.active = true;
  in.planned = &p;
  gov::ThreadRecord t;
  t.tid = 7;
  t.creator = "libgomp.so.1";
  t.pool = 0;
  t.cpu = 1;
  t.pinned = true;
  in.threads.push_back(t);
  in.frameworks.push_back({"openmp", "team", "2", true, "plan"});
  const std::string j = report_text(in);
  for (const char* k : {"\"mode\":\"govern\"",
                        "\"pid\":",
                        "\"program\":\"prog\"",
                        "\"budget\":{",
                        "\"cpus\":[0,1]",
                        "\"cores\":2",
                        "\"sockets\":",
                        "\"quota_cpus\":null",
                        "\"local_rank\":0",
                        "\"local_size\":1",
                        "\"graph\":null",
                        "\"plan\":{",
                        "\"pools\":1",
                        "\"threads\":2",
                        "\"core_sets\":[[0,1]]",
                        "\"threads\":[{\"tid\":7,\"creator\":\"libgomp.so.1\",\"pool\":0,\"cpu\":1",
                        "\"frameworks\":[{\"name\":\"openmp\"",
                        "\"applied\":true",
                        "\"monitor\":null",
                        "\"warnings\":[]"})
    EXPECT_NE(j.find(k), std::string::npos) << k << " in " << j;
}

TEST(Report, UnpinnedThreadsHaveNullCpu) {
  opt::Options o;
  Input in;
  in.opt = &o;
  gov::ThreadRecord t;
  t.tid = 9;
  t.cpu = 1;
  t.pinned = false;
  in.threads.push_back(t);
  EXPECT_NE(report_text(in).find("\"cpu\":null"), std::string::npos);
}

TEST(Json, EscapesControlCharactersAndQuotes) {
  EXPECT_EQ(json::quote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  json::Writer w;
  w.begin_object().key("a").ints({1, 2}).key("b").value(1.5).key("c").null().end_object();
  EXPECT_EQ(w.str(), "{\"a\":[1,2],\"b\":1.5,\"c\":null}");
}

}  // namespace
}  // namespace pw::report
