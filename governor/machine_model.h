// governor/machine_model: how long one operator takes on a team of t threads on
// this CPU budget, from a calibration (`parwidth calibrate`) or a built-in model.
//
// Pure: the calibration's text is parsed and written here; reading and writing
// the file is the caller's (core/cache). Parsing never throws and never
// trusts its input: a bad file is a status and a reason, never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace pw::gov {

// Times measured (or modelled) for one operator size: seconds[t-1] is the time
// of one operator of `flops` floating-point operations on a team of t threads,
// alone on the budget. Team sizes run 1..2 x cores (oversubscribed included).
struct SizeRow {
  double flops = 0;
  std::vector<double> seconds;
};

struct MachineModel {
  std::string source = "builtin";  // "builtin" or "calibration" (+ when, in `detail`)
  std::string detail;              // one line for the report
  int cores = 1;
  double bytes_per_s = 8e9;  // one core streaming memory (light operators)
  // An operator whose bytes fit in one core's level-2 cache (cache_bytes; 0:
  // unknown) moves them at cache_bytes_per_s per thread instead: the weights
  // and activations of small operators stay there from one run to the next.
  int64_t cache_bytes = 0;
  double cache_bytes_per_s = 0;
  // An empty OpenMP parallel region on a team of t threads (region_s[t - 1]),
  // its workers spinning between regions as they do between operators: the
  // fork and join that every operator on a team pays, light ones too (oneDNN
  // forks its team for an element-wise operator of any size). Beyond the
  // list, its last entry; an empty list: nothing beyond the rows. A
  // calibration file from before it gets the built-in model's.
  std::vector<double> region_s;
  double op_overhead_s = 3e-6;  // fixed cost of dispatching one operator
  // Waking a sleeping thread (futex wake and a context switch): what an
  // operator pays when an idle inter-op pool must be woken to run it.
  double wake_s = 1e-5;
  // What one operator on a team of t > 1 threads pays when the team's
  // threads sleep between operators (teams_sleep): libgomp spins only briefly once a process
  // manages more OpenMP threads than it has CPUs (a host whose inter-op
  // workers each keep a team, or whose caller keeps one), and then every
  // parallel region starts by waking its workers through the kernel. A
  // calibration measures it as an OpenMP region of two threads, pinned to two
  // cores, in that state, less the same region with its worker spinning;
  // where none was measured (the built-in model, older files) it is wake_s.
  double team_wake_s = 1e-5;
  // What the thread that releases ready operators pays to signal a sleeping
  // inter-op pool (a futex wake; an inter-processor interrupt when the
  // sleeper is pinned to another core, which on a virtual machine is an exit
  // to the hypervisor). Executors signal a sleeper whenever they make work
  // ready, also when they then run it themselves.
  double notify_s = 5e-6;
  // The logical CPUs that the OpenMP runtime counts (libgomp: the process's
  // affinity; here the budget's): teams_sleep() compares the process's OpenMP
  // threads with it. 0: the cores.
  int cpus = 0;
  std::vector<SizeRow> rows;  // ascending flops, same team count in each

  // Sockets and SMT (governor/socket_plan.h). Where a calibration did not
  // measure one of these (one socket, no SMT, a file from before them), the
  // built-in value stands, and *_measured says which.
  //
  // A team whose threads lie on more than one socket: its compute takes
  // span_factor times as long as a team of that size on one socket would (the
  // paper measured two sockets speeding ResNet-50 up only 1.43x over one:
  // 2 / 1.43 = 1.4), and each of its parallel regions span_region_s more (a
  // barrier across the sockets' interconnect). A calibration measures both as
  // a team of two threads, one per socket, against two on one socket.
  double span_factor = 1.4;
  double span_region_s = 5e-6;
  bool span_measured = false;
  // What one socket's memory moves per second, all its cores copying: the
  // roofline of a team's memory time (team_bytes_per_s_max). 0: the built-in
  // rule, eight cores' worth of bytes_per_s (a socket's memory channels
  // saturate well before its cores run out).
  double socket_bytes_per_s = 0;
  bool socket_bytes_measured = false;
  // What a second SMT sibling adds to one core's throughput on dense
  // operators: 0.1 (10%, built in); a calibration measures it as one core's
  // matrix product on its two siblings against one.
  double smt_gain = 0.1;
  bool smt_measured = false;
  // The most bytes per second a team's memory time may assume (0: no limit):
  // set where a plan is laid out over sockets (model_placed), never by a
  // calibration: on one socket the model stays as it was.
  double team_bytes_per_s_max = 0;
  // The sockets a layout's pools lie on (pool q on socket q x sockets_used /
  // pools): operators running at once on one socket share its
  // team_bytes_per_s_max (simulate). 0: no layout, nothing shared.
  int sockets_used = 0;
};

// What /proc/cpuinfo says about the CPU that the built-in model can use.
struct CpuTraits {
  bool hypervisor = false;  // the "hypervisor" flag: a virtual machine's guest
  int vector_bits = 0;      // widest FMA vectors: 512 (avx512f), 256 (avx2 + fma); 0 unknown
  double mhz = 0;           // the first CPU's "cpu MHz"; 0 unknown
  int64_t l2_bytes = 0;     // one core's level-2 cache (sysfs); 0 unknown
};
// Parses /proc/cpuinfo's text (x86 fields; other architectures give unknowns).
CpuTraits cpu_traits_parse(const std::string& cpuinfo);

// The built-in model for `cores` physical cores, used while no calibration is
// stored. Per core at large sizes: where cpuinfo gives the clock and the FMA
// vector width, 80% of two FMA units' peak (0.8 x clock x 2 units x 2 x
// float lanes: 1.33e11 FLOP/s for AVX-512 at 2.6 GHz, where oneDNN's sgemm
// measured 1.7e11 on one core of a KVM Xeon, with turbo), else 2.5e10 FLOP/s;
// a team of t <= cores threads runs an operator of f FLOPs, at that rate R, in
//   f / (R * t) * (1 + 0.2 * (t - 1) / t) + 1e-6 * ceil(log2 t) (fork/join)
//     + 4e-7 * t (per-thread setup)
// with its threads awake (the second factor: what a team loses to shares that
// end apart and memory its cores share; the last two terms are its region_s); light
// operators stream 8e9 bytes/s per core from memory, and those that fit in
// one core's level-2 cache (its size from sysfs) 32 bytes per clock cycle
// (3.2e10 bytes/s where the clock is unknown), which is what a memory copy
// within the L2 moves on recent x86 cores (1e11 bytes/s measured on a
// 2.5 GHz KVM Xeon); an oversubscribed team (t > cores) gets the cores'
// throughput, and each extra thread per core, x = (t - cores) / cores, adds
// half the compute again and 50 us (a share of a scheduler slice: preempted
// threads stall the team's barriers). Waking a sleeping thread costs
// wake_s = 10 us (a futex wake and a context switch; bare metal is nearer
// 3-5 us): every operator on a team of t > 1 pays it where the plan's teams
// sleep (op_seconds, teams_sleep), and so does
// an operator that an idle inter-op pool must wake up for (simulate);
// signalling a sleeping pool costs its signaller notify_s = 5 us; a team's
// wake-up (team_wake_s) is wake_s. In a
// virtual machine's guest (the hypervisor flag) a wake-up on another core is
// an inter-processor interrupt, an exit to the hypervisor: wake_s = 40 us and
// notify_s = 14 us (measured by `parwidth calibrate` on an Intel KVM guest,
// pinned; an AMD guest measured 20-35 us, and an OpenMP team's wake-up there
// 35-58 us, which a calibration measures and this model does not know).
// A calibration measures all of these on this budget, with the two threads
// pinned to two cores, as governed pools and teams are.
MachineModel builtin_model(int cores, const CpuTraits& cpu = {});

// Whether the OpenMP teams of `pools` inter-op pools of `threads` threads sleep
// between operators, so that every operator on a team pays team_wake_s.
// libgomp (the runtime of Debian's oneDNN and of PyTorch's wheels) lets a
// team's workers spin for the next region (GOMP_SPINCOUNT, 300000 rounds)
// while the threads it manages are no more than the CPUs it may use, and only
// ~100 rounds, then a futex wait, once they are more. It manages the initial
// thread and every team's workers (not the pools' own threads, which are the
// teams' masters): 1 + pools x (threads - 1). So a plan within the cores keeps
// its teams awake, and an oversubscribed one (or a host where some other
// thread keeps a team: the model does not know of it) pays the wake-up at
// every operator. LLVM's libomp keeps its workers awake for KMP_BLOCKTIME
// (200 ms) in either case, which the rule overrates only where it
// oversubscribes.
bool teams_sleep(const MachineModel& m, int pools, int threads);

// Seconds for one operator of `flops` FLOPs and `bytes` bytes moved on a team
// of `threads` threads, alone on the budget: the dispatch overhead, the
// larger of compute and memory time (memory at cache_bytes_per_s where the
// bytes fit in cache_bytes), on a team of t > 1 never less than its time on
// one thread divided among the team's cores plus the team's fork and join
// (region_s: the calibrated rows are of a matrix product that a small size
// runs on one thread, where most operators still fork the team), and
// team_wake_s when threads > 1 and
// the team's threads sleep between operators (`team_asleep`: teams_sleep()
// for the plan the operator runs under) and the team fits the CPUs (a larger
// team's own times, measured or built in, are those of a sleeping team).
// Between calibrated sizes the
// team's speed-up is interpolated on log(flops); beyond them it is clamped.
// A team larger than the cores never computes faster than a team of the
// cores (a calibration that measured it so met a burst of other load).
// flops <= 0 costs the memory time and the overhead only.
double op_seconds(const MachineModel& m, double flops, double bytes, int threads, bool team_asleep);

// The calibration file: a text header naming the machine and the budget it
// was measured on, then the model's numbers. `machine` and `budget` are the
// caller's strings (CPU model, cpu list, quota), compared verbatim on load.
struct Calibration {
  std::string machine;
  std::string budget;
  int64_t created = 0;  // unix seconds
  MachineModel model;
};

std::string calibration_format(const Calibration& c);

inline constexpr int64_t kCalibrationMaxAge = 90LL * 24 * 3600;
inline constexpr size_t kCalibrationMaxBytes = size_t{64} * 1024;

// Parses and validates `text` against the machine and budget of this process
// at time `now`. On kOk fills *out (model.source = "calibration"); otherwise
// kCorrupt (not a calibration, truncated, out-of-range numbers), kOtherMachine,
// kOtherBudget, or kStale (older than kCalibrationMaxAge, or from the future).
Status calibration_parse(const std::string& text, const std::string& machine,
                         const std::string& budget, int64_t now, Calibration* out,
                         std::string* why);

}  // namespace pw::gov
