// The per-boot machine cache's text: a round trip keeps every socket, core and
// PU; another key, a truncated or hostile file is refused with a reason.
#include <gtest/gtest.h>

#include "tests/unit/topology/test_util.h"
#include "topology/topology.h"

namespace pw::topo {
namespace {

bool same(const Machine& a, const Machine& b) {
  if (a.source != b.source || a.sockets.size() != b.sockets.size()) return false;
  for (size_t s = 0; s < a.sockets.size(); ++s) {
    const Socket &x = a.sockets[s], &y = b.sockets[s];
    if (x.os_index != y.os_index || x.cores.size() != y.cores.size()) return false;
    for (size_t c = 0; c < x.cores.size(); ++c)
      if (x.cores[c].pus != y.cores[c].pus || x.cores[c].socket != y.cores[c].socket) return false;
  }
  return true;
}

const char* const kKey = "boot 6f1c online 0-95 possible 0-95";

TEST(MachineText, RoundTripTwoSocketsSmt) {
  const Machine m = test::load("synthetic:package:2 core:24 pu:2");
  Machine back;
  std::string err;
  ASSERT_EQ(machine_parse(machine_format(m, kKey), kKey, &back, &err), Status::kOk) << err;
  EXPECT_TRUE(same(m, back));
  ASSERT_EQ(back.sockets.size(), 2u);
  EXPECT_EQ(back.sockets[1].cores.size(), 24u);
  EXPECT_EQ(back.sockets[1].cores[0].socket, 1);
}

TEST(MachineText, RoundTripThisMachine) {
  Machine m;
  std::string err;
  ASSERT_EQ(machine_load("", &m, &err), Status::kOk) << err;
  std::string key;
  ASSERT_TRUE(machine_cache_key(&key));
  EXPECT_EQ(key.compare(0, 5, "boot "), 0) << key;
  Machine back;
  ASSERT_EQ(machine_parse(machine_format(m, key), key, &back, &err), Status::kOk) << err;
  EXPECT_TRUE(same(m, back));
}

TEST(MachineText, AnotherKeyTruncatedOrHostileIsRefused) {
  const std::string good = machine_format(test::load("synthetic:package:1 core:2 pu:2"), kKey);
  Machine out;
  std::string err;
  EXPECT_EQ(machine_parse(good, "boot other online 0-95 possible 0-95", &out, &err),
            Status::kInvalid);
  EXPECT_NE(err.find("another boot"), std::string::npos) << err;
  for (size_t cut : {size_t{0}, size_t{5}, good.size() / 2, good.size() - 1}) {
    err.clear();
    EXPECT_EQ(machine_parse(good.substr(0, cut), kKey, &out, &err), Status::kInvalid) << cut;
    EXPECT_FALSE(err.empty());
  }
  const std::string head = std::string("parwidth-machine 1\nkey ") + kKey + "\nsource hwloc\n";
  for (const char* body :
       {"socket 0\ncore 0,0\nend\n",          // a PU twice
        "socket 0\ncore 0,\nend\n",           // an empty item
        "socket 0\ncore -1\nend\n",           // negative
        "socket 0\ncore 99999\nend\n",        // beyond any machine
        "core 0\nend\n",                      // a core outside a socket
        "socket 0\ncore 0\nend\nextra\n",     // text after the end
        "socket 0\ncore 0\nsocket 1\nend\n",  // fine but see below
        "socket 0 1\ncore 0\nend\n", "socket 0\ncore 0\nbogus 1\nend\n", "end\n"}) {
    err.clear();
    const Status st = machine_parse(head + body, kKey, &out, &err);
    if (std::string(body) == "socket 0\ncore 0\nsocket 1\nend\n") {
      // An empty socket has no PU: the grouping drops it, the rest is whole.
      ASSERT_EQ(st, Status::kOk) << err;
      EXPECT_EQ(out.sockets.size(), 1u);
      continue;
    }
    EXPECT_EQ(st, Status::kInvalid) << body;
    EXPECT_FALSE(err.empty()) << body;
  }
}

}  // namespace
}  // namespace pw::topo
