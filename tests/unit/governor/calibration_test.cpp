// The calibration text: what a good file gives, and the documented fallback
// status for corrupt, truncated, foreign-machine, other-budget and stale ones.
#include <gtest/gtest.h>

#include <vector>

#include "governor/machine_model.h"

namespace pw::gov {
namespace {

constexpr int64_t kNow = 1'800'000'000;

Calibration sample() {
  Calibration c;
  c.machine = "AMD EPYC 9B14 x2";
  c.budget = "cpus 0-1 quota none";
  c.created = kNow - 60;
  c.model = builtin_model(2);
  c.model.bytes_per_s = 1.25e10;
  c.model.op_overhead_s = 4e-6;
  c.model.wake_s = 2.5e-5;
  c.model.notify_s = 1.2e-5;
  c.model.team_wake_s = 5.5e-5;
  c.model.cache_bytes = 2 << 20;
  c.model.cache_bytes_per_s = 9e10;
  c.model.region_s = {4e-7, 8e-7, 7.5e-5, 1e-4};
  return c;
}

Status parse(const std::string& text, Calibration* out, std::string* why) {
  return calibration_parse(text, "AMD EPYC 9B14 x2", "cpus 0-1 quota none", kNow, out, why);
}

// `text` without the line of `key`, as a calibration written before that key existed.
std::string without(const std::string& text, const std::string& key) {
  const size_t at = text.find("\n" + key + " ");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no '" << key << "' line";
    return text;
  }
  std::string t = text;
  t.erase(at + 1, t.find('\n', at + 1) - at);
  return t;
}

TEST(Calibration, RoundTrip) {
  const Calibration c = sample();
  Calibration back;
  std::string why;
  ASSERT_EQ(parse(calibration_format(c), &back, &why), Status::kOk) << why;
  EXPECT_EQ(back.model.source, "calibration");
  EXPECT_EQ(back.model.cores, 2);
  EXPECT_EQ(back.model.rows.size(), c.model.rows.size());
  EXPECT_DOUBLE_EQ(back.model.bytes_per_s, 1.25e10);
  EXPECT_DOUBLE_EQ(back.model.wake_s, 2.5e-5);
  EXPECT_DOUBLE_EQ(back.model.notify_s, 1.2e-5);
  EXPECT_DOUBLE_EQ(back.model.team_wake_s, 5.5e-5);
  EXPECT_EQ(back.model.cache_bytes, 2 << 20);
  EXPECT_DOUBLE_EQ(back.model.cache_bytes_per_s, 9e10);
  EXPECT_EQ(back.model.region_s, (std::vector<double>{4e-7, 8e-7, 7.5e-5, 1e-4}));
  for (double f : {1e5, 3e7, 1e9})
    for (int t = 1; t <= 4; ++t)
      EXPECT_NEAR(op_seconds(back.model, f, 0, t, true), op_seconds(c.model, f, 0, t, true),
                  1e-5 * op_seconds(c.model, f, 0, t, true));
}

TEST(Calibration, TruncatedAtEveryLength) {
  const std::string text = calibration_format(sample());
  Calibration out;
  std::string why;
  for (size_t n = 0; n < text.size(); ++n) {
    EXPECT_EQ(parse(text.substr(0, n), &out, &why), Status::kCorrupt) << n;
  }
}

TEST(Calibration, Corrupt) {
  Calibration out;
  std::string why;
  const std::string good = calibration_format(sample());
  EXPECT_EQ(parse("", &out, &why), Status::kCorrupt);
  EXPECT_EQ(parse(std::string(1000, '\0'), &out, &why), Status::kCorrupt);
  EXPECT_EQ(parse("parwidth-calibration 2\nend\n", &out, &why), Status::kCorrupt);
  EXPECT_EQ(parse(good + "size 1 1\n", &out, &why), Status::kCorrupt);
  EXPECT_EQ(parse(std::string(kCalibrationMaxBytes + 1, 'x'), &out, &why), Status::kCorrupt);
  // Each number made bad in turn.
  for (const char* bad : {"cores 0",
                          "cores 2.5",
                          "bytes_per_s nan",
                          "bytes_per_s -1",
                          "op_overhead_s 7",
                          "wake_s -1e-6",
                          "wake_s 1",
                          "notify_s -1e-6",
                          "notify_s 0.5",
                          "team_wake_s -1e-6",
                          "team_wake_s 0.2",
                          "team_wake_s x",
                          "created soon",
                          "size 1e9 0.1 -0.2 0.1 0.1",
                          "size 1e9 0.1 inf 0.1 0.1",
                          "size 1e9",
                          "size 1e12 1 1 1 1",
                          "cache_bytes 512",
                          "cache_bytes 3000.5",
                          "cache_bytes -1",
                          "cache_bytes_per_s 0",
                          "cache_bytes_per_s 1e14",
                          "region_s",
                          "region_s 1e-6,2e-6",
                          "region_s 1e-6 0",
                          "region_s 1e-6 nan",
                          "region_s 1e-6 2e-6 x"}) {
    std::string t = good;
    const std::string key = std::string(bad).substr(0, std::string(bad).find(' '));
    const size_t at = t.find("\n" + key + " ");
    ASSERT_NE(at, std::string::npos) << key;
    const size_t end = t.find('\n', at + 1);
    t.replace(at + 1, end - at - 1, bad);
    EXPECT_EQ(parse(t, &out, &why), Status::kCorrupt) << bad;
  }
}

TEST(Calibration, FileWithoutWakeOrNotifyKeepsTheDefault) {
  // A calibration written before wake_s (or notify_s) existed still loads, with the default.
  for (const char* key : {"wake_s", "notify_s"}) {
    const std::string t = without(calibration_format(sample()), key);
    Calibration out;
    std::string why;
    ASSERT_EQ(parse(t, &out, &why), Status::kOk) << key << ": " << why;
    const MachineModel fresh{};
    EXPECT_DOUBLE_EQ(std::string(key) == "wake_s" ? out.model.wake_s : out.model.notify_s,
                     std::string(key) == "wake_s" ? fresh.wake_s : fresh.notify_s);
  }
}

TEST(Calibration, FileWithoutTeamWakeGivesTeamsTheWakeItMeasured) {
  // Written before team_wake_s: its teams paid wake_s per operator, as they did then.
  const std::string t = without(calibration_format(sample()), "team_wake_s");
  Calibration out;
  std::string why;
  ASSERT_EQ(parse(t, &out, &why), Status::kOk) << why;
  EXPECT_DOUBLE_EQ(out.model.team_wake_s, 2.5e-5);
  EXPECT_DOUBLE_EQ(out.model.wake_s, 2.5e-5);
}

TEST(Calibration, FileWithoutRegionsGivesTeamsTheBuiltInForkAndJoin) {
  // Written before region_s: a team's fork and join are the built-in model's.
  const std::string t = without(calibration_format(sample()), "region_s");
  Calibration out;
  std::string why;
  ASSERT_EQ(parse(t, &out, &why), Status::kOk) << why;
  EXPECT_EQ(out.model.region_s, builtin_model(2).region_s);
}

TEST(Calibration, FileWithoutTheCachesRateMovesEveryByteFromMemory) {
  const std::string t = without(calibration_format(sample()), "cache_bytes_per_s");
  Calibration out;
  std::string why;
  ASSERT_EQ(parse(t, &out, &why), Status::kOk) << why;
  EXPECT_EQ(out.model.cache_bytes, 0);
  EXPECT_DOUBLE_EQ(op_seconds(out.model, 0, 1e6, 1, false),
                   out.model.op_overhead_s + 1e6 / 1.25e10);
}

// A model whose rows are a matrix product that runs on one thread below 1e6
// FLOPs (both team sizes alike, as oneDNN's sgemm does at n = 16..64) and
// scales at 1e8; no overhead, so that each term shows.
MachineModel flat_small_rows() {
  MachineModel m;
  m.cores = 2;
  m.op_overhead_s = 0;
  m.bytes_per_s = 1e10;
  m.rows = {{1e4, {1e-6, 1e-6}}, {1e6, {1e-4, 1e-4}}, {1e8, {1e-2, 5.5e-3}}};
  m.region_s = {0, 2e-6, 5e-5, 8e-5};
  return m;
}

TEST(MachineModel, ATeamForksAndJoinsWhereTheRowsRanOnOneThread) {
  const MachineModel m = flat_small_rows();
  // 1e4 FLOPs: 1 us on one thread; on two, never less than half of it plus the fork and
  // join (0.5 + 2 us), where the rows said 1 us.
  EXPECT_DOUBLE_EQ(op_seconds(m, 1e4, 0, 1, false), 1e-6);
  EXPECT_DOUBLE_EQ(op_seconds(m, 1e4, 0, 2, false), 0.5e-6 + 2e-6);
  // 1e8 FLOPs: the rows' 5.5 ms stand, above 10 / 2 + 0.002 ms.
  EXPECT_DOUBLE_EQ(op_seconds(m, 1e8, 0, 2, false), 5.5e-3);
  // A light operator (bytes only) forks its team too: 1e4 bytes at 1e10/s is 1 us on one
  // thread, 0.5 us per thread on two, plus the fork and join.
  EXPECT_DOUBLE_EQ(op_seconds(m, 0, 1e4, 1, false), 1e-6);
  EXPECT_DOUBLE_EQ(op_seconds(m, 0, 1e4, 2, false), 0.5e-6 + 2e-6);
  // A view moves nothing and runs no region.
  EXPECT_DOUBLE_EQ(op_seconds(m, 0, 0, 2, false), 0);
  // A team larger than the cores pays its own, larger, region on the cores' share.
  EXPECT_DOUBLE_EQ(op_seconds(m, 1e4, 0, 4, false), 0.5e-6 + 8e-5);
  // Beyond the list, its last entry; without one, nothing beyond the rows.
  EXPECT_DOUBLE_EQ(op_seconds(m, 1e4, 0, 6, false), 0.5e-6 + 8e-5);
  MachineModel bare = m;
  bare.region_s.clear();
  EXPECT_DOUBLE_EQ(op_seconds(bare, 1e4, 0, 2, false), 1e-6);
}

TEST(MachineModel, BytesThatFitInOneCoresCacheMoveAtTheCachesRate) {
  MachineModel m = flat_small_rows();
  m.region_s.clear();
  m.cache_bytes = 1 << 20;
  m.cache_bytes_per_s = 1e11;
  // 512 KiB fit: 1e11 bytes/s per thread; 2 MiB do not: 1e10.
  EXPECT_DOUBLE_EQ(op_seconds(m, 0, 512 << 10, 1, false), (512 << 10) / 1e11);
  EXPECT_DOUBLE_EQ(op_seconds(m, 0, 512 << 10, 2, false), (512 << 10) / 2e11);
  EXPECT_DOUBLE_EQ(op_seconds(m, 0, 2 << 20, 1, false), (2 << 20) / 1e10);
  // Whether they fit is the operator's bytes against one core's cache, whatever the team:
  // two threads do not make 2 MiB fit.
  EXPECT_DOUBLE_EQ(op_seconds(m, 0, 2 << 20, 2, false), (2 << 20) / 2e10);
  // A matrix product of few FLOPs and many cached bytes is as long as its bytes take.
  EXPECT_DOUBLE_EQ(op_seconds(m, 1e4, 512 << 10, 1, false), (512 << 10) / 1e11);
  // No cache known: every byte from memory.
  m.cache_bytes = 0;
  EXPECT_DOUBLE_EQ(op_seconds(m, 0, 512 << 10, 1, false), (512 << 10) / 1e10);
}

TEST(BuiltinModel, ForkAndJoinPerTeamSizeAndTheCacheFromTheTraits) {
  const MachineModel m = builtin_model(2);
  // Team sizes 1..2 x cores: 1 us per level of the barrier tree, 0.4 us per thread, and
  // 50 us per extra thread per core beyond the cores.
  ASSERT_EQ(m.region_s.size(), 4u);
  EXPECT_DOUBLE_EQ(m.region_s[0], 4e-7);
  EXPECT_DOUBLE_EQ(m.region_s[1], 1e-6 + 8e-7);
  EXPECT_DOUBLE_EQ(m.region_s[2], 2e-6 + 1.2e-6 + 2.5e-5);
  EXPECT_DOUBLE_EQ(m.region_s[3], 2e-6 + 1.6e-6 + 5e-5);
  EXPECT_EQ(m.cache_bytes, 0);
  CpuTraits t;
  t.l2_bytes = 2 << 20;
  t.mhz = 2500;
  const MachineModel c = builtin_model(2, t);
  EXPECT_EQ(c.cache_bytes, 2 << 20);
  EXPECT_DOUBLE_EQ(c.cache_bytes_per_s, 32 * 2.5e9);
  t.mhz = 0;
  EXPECT_DOUBLE_EQ(builtin_model(2, t).cache_bytes_per_s, 3.2e10);
}

TEST(MachineModel, TeamsSleepOnceTheProcessKeepsMoreOpenMPThreadsThanCPUs) {
  // libgomp's count: the initial thread and each team's workers, 1 + pools x (threads - 1).
  MachineModel m = builtin_model(2);
  EXPECT_FALSE(teams_sleep(m, 1, 1));
  EXPECT_FALSE(teams_sleep(m, 2, 1));
  EXPECT_FALSE(teams_sleep(m, 1, 2));  // 2 threads on 2 CPUs
  EXPECT_TRUE(teams_sleep(m, 1, 3));   // 3
  EXPECT_TRUE(teams_sleep(m, 2, 2));   // 3
  // Without cpus, the cores; with SMT siblings counted, more CPUs than cores.
  m.cpus = 4;
  EXPECT_FALSE(teams_sleep(m, 1, 4));
  EXPECT_FALSE(teams_sleep(m, 2, 2));
  EXPECT_TRUE(teams_sleep(m, 2, 3));  // 5 on 4
  m = builtin_model(16);
  EXPECT_FALSE(teams_sleep(m, 4, 4));  // 13 on 16
  EXPECT_FALSE(teams_sleep(m, 3, 6));  // 16
  EXPECT_TRUE(teams_sleep(m, 2, 9));   // 17
}

TEST(MachineModel, TeamsPayTheTeamWakeAndPoolsTheThreadWake) {
  MachineModel m = builtin_model(2);
  m.wake_s = 1e-5;
  m.team_wake_s = 2e-4;
  // An operator on one thread wakes no team; on a sleeping team of two or more it pays
  // team_wake_s, not wake_s; on a team that spins, nothing.
  const double one = op_seconds(m, 1e6, 0, 1, true), two = op_seconds(m, 1e6, 0, 2, true);
  const double spinning = op_seconds(m, 1e6, 0, 2, false);
  m.team_wake_s = 0;
  EXPECT_DOUBLE_EQ(op_seconds(m, 1e6, 0, 1, true), one);
  EXPECT_NEAR(two - op_seconds(m, 1e6, 0, 2, true), 2e-4, 1e-12);
  EXPECT_DOUBLE_EQ(op_seconds(m, 1e6, 0, 2, true), spinning);
  // The built-in model has no measurement of its own: a team wakes as a thread does.
  EXPECT_DOUBLE_EQ(builtin_model(2).team_wake_s, builtin_model(2).wake_s);
  CpuTraits guest;
  guest.hypervisor = true;
  EXPECT_DOUBLE_EQ(builtin_model(2, guest).team_wake_s, builtin_model(2, guest).wake_s);
}

// /proc/cpuinfo's first CPU block decides the built-in model's rate and wake-up costs.
TEST(BuiltinModel, CpuTraitsFromCpuinfo) {
  const std::string kvm =
      "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu MHz\t\t: 2600.000\n"
      "flags\t\t: fpu sse2 fma avx hypervisor avx2 avx512f avx512dq\n\n"
      "processor\t: 1\ncpu MHz\t\t: 1.000\nflags\t\t: fpu\n\n";
  CpuTraits t = cpu_traits_parse(kvm);
  EXPECT_TRUE(t.hypervisor);
  EXPECT_EQ(t.vector_bits, 512);
  EXPECT_DOUBLE_EQ(t.mhz, 2600);
  t = cpu_traits_parse("processor\t: 0\ncpu MHz\t\t: 3000.5\nflags\t\t: sse2 avx avx2 fma\n\n");
  EXPECT_FALSE(t.hypervisor);
  EXPECT_EQ(t.vector_bits, 256);
  EXPECT_DOUBLE_EQ(t.mhz, 3000.5);
  // avx2 without fma, a flag that only starts like one, an arm64 block, garbage: unknowns.
  t = cpu_traits_parse("cpu MHz : 2000\nflags : avx2 avx512fx hypervisorx\n");
  EXPECT_EQ(t.vector_bits, 0);
  EXPECT_FALSE(t.hypervisor);
  t = cpu_traits_parse("processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n");
  EXPECT_EQ(t.vector_bits, 0);
  EXPECT_EQ(t.mhz, 0);
  t = cpu_traits_parse(std::string("cpu MHz : nan\n\0\xff", 16));
  EXPECT_EQ(t.mhz, 0);
  EXPECT_EQ(cpu_traits_parse("").vector_bits, 0);
}

TEST(BuiltinModel, TraitsSetTheRateAndTheGuestsWakeUps) {
  const MachineModel plain = builtin_model(2);
  CpuTraits t;
  t.mhz = 2600;
  t.vector_bits = 512;
  const MachineModel fast = builtin_model(2, t);
  t.hypervisor = true;
  const MachineModel guest = builtin_model(2, t);
  // 0.8 x 2 units x 2 (FMA) x 16 lanes x 2.6 GHz = 1.33e11 FLOP/s: a large operator on one
  // thread takes its FLOPs over that rate (plus the small fixed costs).
  const double f = 1e10;
  EXPECT_NEAR(op_seconds(fast, f, 0, 1, false), f / 1.3312e11, 1e-4);
  EXPECT_NEAR(op_seconds(plain, f, 0, 1, false), f / 2.5e10, 1e-3);
  EXPECT_DOUBLE_EQ(fast.wake_s, plain.wake_s);
  EXPECT_DOUBLE_EQ(guest.wake_s, 4e-5);
  EXPECT_DOUBLE_EQ(guest.notify_s, 1.4e-5);
  EXPECT_GT(guest.wake_s, plain.wake_s);
  EXPECT_NE(guest.detail.find("virtual machine"), std::string::npos) << guest.detail;
  // Unknown clock or width: the plain rate.
  t.mhz = 0;
  EXPECT_DOUBLE_EQ(op_seconds(builtin_model(2, t), f, 0, 1, false),
                   op_seconds(plain, f, 0, 1, false));
}

TEST(Calibration, OtherMachineOtherBudgetStale) {
  Calibration out;
  std::string why;
  Calibration c = sample();
  c.machine = "Intel Xeon Platinum 8175M x96";
  EXPECT_EQ(parse(calibration_format(c), &out, &why), Status::kOtherMachine);
  EXPECT_NE(why.find("8175M"), std::string::npos);
  c = sample();
  c.budget = "cpus 0 quota none";
  EXPECT_EQ(parse(calibration_format(c), &out, &why), Status::kOtherBudget);
  c = sample();
  c.created = kNow - kCalibrationMaxAge - 1;
  EXPECT_EQ(parse(calibration_format(c), &out, &why), Status::kStale);
  c.created = kNow + 3600;  // from the future: a clock that jumped
  EXPECT_EQ(parse(calibration_format(c), &out, &why), Status::kStale);
}

}  // namespace
}  // namespace pw::gov
