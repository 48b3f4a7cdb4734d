// The one owner of the plan in force (runtime/in_force.h): serialized changes with
// generations, no lost update when a change lands while another is computed, and a
// timeline that says what was applied for each plan.
#include "runtime/in_force.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace pw::rt {
namespace {

topo::Budget budget_of(std::vector<int> cpus) {
  topo::Budget b;
  topo::Socket s;
  for (int c : cpus) {
    topo::Core core;
    core.pus = {c};
    s.cores.push_back(core);
  }
  b.sockets.push_back(s);
  b.cpus = std::move(cpus);
  b.cores = static_cast<int>(b.cpus.size());
  return b;
}

planning::GraphSummary graph_of(long width) {
  planning::GraphSummary g;
  g.known = true;
  g.avg_width = width;
  g.max_level_width = width;
  g.source = "width " + std::to_string(width);
  return g;
}

// A planner of plain values: pools from the graph's width (at most the cores),
// threads = cores / pools; it counts its calls.
struct Planner {
  std::atomic<int> calls{0};
  std::function<void()> during;  // run inside the first compute (another change landing)
  gov::Plan operator()(const InForce& next, bool* found) {
    if (calls.fetch_add(1) == 0 && during) during();
    *found = false;
    gov::Plan p;
    const int cores = next.budget.cores > 0 ? next.budget.cores : 1;
    p.pools = next.graph.known ? static_cast<int>(std::min<long>(next.graph.avg_width, cores)) : 1;
    p.threads = cores / p.pools;
    p.core_sets.assign(static_cast<size_t>(p.pools), next.budget.cpus);
    return p;
  }
};

Change activation(std::vector<int> cpus, int cap) {
  Change c;
  c.kind = Change::Kind::kActivation;
  c.cause = "activation";
  c.budget = budget_of(std::move(cpus));
  c.omp_cap = cap;
  return c;
}

Change share(std::vector<int> cpus) {
  Change c;
  c.kind = Change::Kind::kShare;
  c.cause = "node: share " + std::to_string(cpus.size());
  c.budget = budget_of(std::move(cpus));
  return c;
}

Change graph(long width) {
  Change c;
  c.kind = Change::Kind::kGraph;
  c.cause = "graph";
  c.graph = graph_of(width);
  return c;
}

Change cap(int n) {
  Change c;
  c.kind = Change::Kind::kCap;
  c.cause = "monitor";
  c.omp_cap = n;
  return c;
}

Change children(bool on) {
  Change c;
  c.kind = Change::Kind::kChildren;
  c.cause = on ? "children: 1" : "children: none";
  c.children = on;
  return c;
}

PlanOwner::Planner planner_ref(Planner& p) {
  return [&p](const InForce& next, bool* found) { return p(next, found); };
}

TEST(PlanOwner, NothingIsInForceBeforeActivation) {
  PlanOwner owner;
  Planner p;
  EXPECT_EQ(owner.change(graph(2), planner_ref(p), nullptr), nullptr);
  EXPECT_EQ(owner.change(share({0}), planner_ref(p), nullptr), nullptr);
  EXPECT_EQ(owner.current(), nullptr);
  EXPECT_EQ(p.calls.load(), 0);
}

TEST(PlanOwner, EachChangeIsTheNextGenerationWithItsCause) {
  PlanOwner owner;
  Planner p;
  owner.change(activation({0, 1, 2, 3}, 1), planner_ref(p), nullptr);
  auto now = owner.current();
  ASSERT_NE(now, nullptr);
  EXPECT_EQ(now->generation, 1u);
  EXPECT_EQ(now->plan.threads, 4);
  EXPECT_EQ(now->omp_cap, 4);  // a cap of ours starts at the plan's threads per pool
  owner.change(graph(2), planner_ref(p), nullptr);
  now = owner.current();
  EXPECT_EQ(now->generation, 2u);
  EXPECT_EQ(now->plan.pools, 2);
  EXPECT_EQ(now->omp_cap, 2);
  owner.change(cap(1), planner_ref(p), nullptr);
  now = owner.current();
  EXPECT_EQ(now->generation, 3u);
  EXPECT_EQ(now->omp_cap, 1);
  EXPECT_EQ(now->plan.pools, 2);  // a cap change keeps the plan
  EXPECT_EQ(now->cause, "monitor");
  // The same share again, or a cap already in force: nothing changes.
  owner.change(share({0, 1, 2, 3}), planner_ref(p), nullptr);
  owner.change(cap(1), planner_ref(p), nullptr);
  EXPECT_EQ(owner.current()->generation, 3u);
}

TEST(PlanOwner, ChildrenChangeOnlyWhetherChildrenRunAndKeepThePlan) {
  PlanOwner owner;
  Planner p;
  owner.change(activation({0, 1}, 1), planner_ref(p), nullptr);
  owner.change(graph(2), planner_ref(p), nullptr);
  const int calls = p.calls.load();
  auto before = owner.current();
  EXPECT_FALSE(before->children);
  std::vector<std::string> applied_for;
  auto apply = [&](const InForce* b, const InForce& now, std::vector<std::string>*) {
    applied_for.push_back((b && b->children ? "on->" : "off->") +
                          std::string(now.children ? "on" : "off"));
  };
  owner.change(children(true), planner_ref(p), apply);
  auto now = owner.current();
  EXPECT_EQ(now->generation, before->generation + 1);
  EXPECT_TRUE(now->children);
  EXPECT_EQ(now->plan.pools, before->plan.pools);
  EXPECT_EQ(now->omp_cap, before->omp_cap);
  EXPECT_EQ(p.calls.load(), calls) << "not planned again";
  // Already so: nothing changes, nothing is applied.
  owner.change(children(true), planner_ref(p), apply);
  EXPECT_EQ(owner.current()->generation, now->generation);
  // A plan change while children run keeps them in force.
  owner.change(graph(1), planner_ref(p), apply);
  EXPECT_TRUE(owner.current()->children);
  owner.change(children(false), planner_ref(p), apply);
  EXPECT_FALSE(owner.current()->children);
  EXPECT_EQ(applied_for, (std::vector<std::string>{"off->on", "on->on", "on->off"}));
  EXPECT_EQ(owner.counts().at(4), 2u);
}

TEST(PlanOwner, TheSameGraphAgainChangesNothing) {
  PlanOwner owner;
  Planner p;
  owner.change(activation({0, 1}, 1), planner_ref(p), nullptr);
  Change a = graph(2);
  a.graph.fingerprint = "f1";
  owner.change(a, planner_ref(p), nullptr);
  owner.change(a, planner_ref(p), nullptr);  // a second session of the same model
  EXPECT_EQ(owner.current()->generation, 2u);
  EXPECT_EQ(p.calls.load(), 2);  // activation's and the first graph's
  Change b = graph(2);
  b.graph.fingerprint = "f2";  // another model of the same width: planned again
  owner.change(b, planner_ref(p), nullptr);
  EXPECT_EQ(owner.current()->generation, 3u);
}

// Cores shared by time with other servers: the plan is as wide as the cores,
// the OpenMP cap at most the team's worth; later plans keep that ceiling, and
// a share that is no longer time-shared (the same cores) lifts it.
TEST(PlanOwner, ATimeSharedShareCapsTeamsAtTheirWorth) {
  PlanOwner owner;
  Planner p;
  owner.change(activation({0, 1, 2, 3}, 1), planner_ref(p), nullptr);
  Change t = share({0, 1, 2, 3});
  t.team_worth = 2;
  owner.change(t, planner_ref(p), nullptr);
  auto now = owner.current();
  EXPECT_EQ(now->generation, 2u);
  EXPECT_EQ(now->plan.threads, 4);
  EXPECT_EQ(now->omp_cap, 2);
  owner.change(graph(4), planner_ref(p), nullptr);  // one thread per pool: under the ceiling
  EXPECT_EQ(owner.current()->omp_cap, 1);
  owner.change(graph(1), planner_ref(p), nullptr);
  EXPECT_EQ(owner.current()->omp_cap, 2);
  owner.change(t, planner_ref(p), nullptr);  // the same again: nothing changes
  EXPECT_EQ(owner.current()->generation, 4u);
  owner.change(share({0, 1, 2, 3}), planner_ref(p), nullptr);  // alone again
  EXPECT_EQ(owner.current()->generation, 5u);
  EXPECT_EQ(owner.current()->omp_cap, 4);
}

TEST(PlanOwner, ACapThatIsNotOursDoesNotMove) {
  PlanOwner owner;
  Planner p;
  owner.change(activation({0, 1}, 0), planner_ref(p), nullptr);  // the user's OMP_NUM_THREADS
  owner.change(cap(1), planner_ref(p), nullptr);
  EXPECT_EQ(owner.current()->omp_cap, 0);
  EXPECT_EQ(owner.current()->generation, 1u);
  owner.change(share({0}), planner_ref(p), nullptr);
  EXPECT_EQ(owner.current()->omp_cap, 0);
}

// The lost update of issue 39: a graph adoption planned on the share it read,
// while a re-division landed; storing its plan put the old share back. Here the
// re-division lands (on another thread, to completion) inside the adoption's
// compute: the adoption is computed again on top of it, deterministically.
TEST(PlanOwner, ARedivisionDuringAGraphsComputeIsNotLost) {
  PlanOwner owner;
  Planner p;
  owner.change(activation({0, 1, 2, 3}, 1), planner_ref(p), nullptr);
  Planner inner;
  Planner adopt;
  adopt.calls = 0;
  adopt.during = [&] {
    std::thread t([&] { owner.change(share({2, 3}), planner_ref(inner), nullptr); });
    t.join();
  };
  // The adoption's first compute counts as adopt's call 1 (during fires there).
  owner.change(graph(2), planner_ref(adopt), nullptr);
  const auto now = owner.current();
  EXPECT_EQ(now->generation, 3u);
  EXPECT_EQ(now->budget.cpus, (std::vector<int>{2, 3}));  // the re-division's share ...
  EXPECT_TRUE(now->graph.known);                          // ... and the adopted graph
  EXPECT_EQ(now->plan.pools, 2);
  EXPECT_EQ(now->plan.threads, 1);
  EXPECT_EQ(now->plan.core_sets[0], (std::vector<int>{2, 3}));
  EXPECT_EQ(adopt.calls.load(), 2);  // computed again on the new share
  EXPECT_EQ(owner.recomputed(), 1u);
  const auto tl = owner.timeline();
  ASSERT_EQ(tl.size(), 3u);
  EXPECT_EQ(tl[1].cause, "node: share 2");
  EXPECT_EQ(tl[2].cause, "graph");
}

// The same, the other way round: a graph adopted while a re-division computes.
TEST(PlanOwner, AGraphAdoptedDuringARedivisionsComputeIsNotLost) {
  PlanOwner owner;
  Planner p;
  owner.change(activation({0, 1, 2, 3}, 1), planner_ref(p), nullptr);
  Planner divide;
  Planner inner;
  divide.during = [&] {
    std::thread t([&] { owner.change(graph(4), planner_ref(inner), nullptr); });
    t.join();
  };
  owner.change(share({0, 1}), planner_ref(divide), nullptr);
  const auto now = owner.current();
  EXPECT_EQ(now->budget.cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(now->graph.avg_width, 4);
  EXPECT_EQ(now->plan.pools, 2);  // width 4 clamped to the share's 2 cores
}

TEST(PlanOwner, TheApplierSeesEveryGenerationInOrderAndItsNotesGoToTheTimeline) {
  PlanOwner owner;
  Planner p;
  std::vector<unsigned> seen;
  auto apply = [&](const InForce* before, const InForce& now, std::vector<std::string>* applied) {
    EXPECT_EQ(before == nullptr, now.generation == 1u);
    if (before) {
      EXPECT_EQ(before->generation + 1, now.generation);
    }
    EXPECT_EQ(owner.current()->generation, now.generation);  // published before applied
    seen.push_back(now.generation);
    applied->push_back("applied " + std::to_string(now.generation));
  };
  owner.change(activation({0, 1}, 1), planner_ref(p), apply);
  owner.change(share({1}), planner_ref(p), apply);
  owner.change(cap(1), planner_ref(p), apply);  // share {1}: the cap is 1 already
  owner.change(share({0, 1}), planner_ref(p), apply);
  owner.applied_note(3, "session rebuilt");
  EXPECT_EQ(seen, (std::vector<unsigned>{1, 2, 3}));
  const auto tl = owner.timeline();
  ASSERT_EQ(tl.size(), 3u);
  EXPECT_EQ(tl[2].applied, (std::vector<std::string>{"applied 3", "session rebuilt"}));
  EXPECT_EQ(tl[1].cpus, (std::vector<int>{1}));
  EXPECT_EQ(tl[1].omp_cap, 1);
  EXPECT_EQ(tl[2].omp_cap, 2);
}

TEST(PlanOwner, ALongTimelineKeepsItsHeadAndItsLatest) {
  PlanOwner owner;
  Planner p;
  owner.change(activation({0, 1}, 1), planner_ref(p), nullptr);
  for (int i = 0; i < 200; ++i)
    owner.change(share(i % 2 ? std::vector<int>{0, 1} : std::vector<int>{1}), planner_ref(p),
                 nullptr);
  size_t dropped = 0;
  const auto tl = owner.timeline(&dropped);
  EXPECT_EQ(tl.size(), PlanOwner::kTimelineKept);
  EXPECT_EQ(dropped, 201 - PlanOwner::kTimelineKept);
  EXPECT_EQ(tl.front().generation, 1u);
  EXPECT_EQ(tl.back().generation, 201u);
  EXPECT_EQ(tl[PlanOwner::kTimelineHead - 1].generation, PlanOwner::kTimelineHead);
}

// Many threads changing and reading at once (run under ThreadSanitizer by
// scripts/test): generations stay unique and dense, every snapshot is whole.
TEST(PlanOwner, ConcurrentChangesAndReadersStayConsistent) {
  PlanOwner owner;
  Planner p;
  owner.change(activation({0, 1, 2, 3}, 1), planner_ref(p), nullptr);
  std::atomic<bool> stop{false};
  std::vector<unsigned> applied;
  std::mutex applied_mu;
  auto apply = [&](const InForce*, const InForce& now, std::vector<std::string>*) {
    std::lock_guard<std::mutex> lock(applied_mu);
    applied.push_back(now.generation);
  };
  std::thread reader([&] {
    while (!stop.load()) {
      const auto now = owner.current();
      // Whole: the plan was made on this snapshot's budget.
      ASSERT_EQ(now->plan.core_sets.front(), now->budget.cpus);
      ASSERT_EQ(now->plan.pools * now->plan.threads <= now->budget.cores, true);
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 100; ++i) {
        if (w == 0)
          owner.change(share(i % 2 ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0, 1}),
                       planner_ref(p), apply);
        if (w == 1) owner.change(graph(1 + i % 3), planner_ref(p), apply);
        if (w == 2) owner.change(cap(1 + i % 2), planner_ref(p), apply);
      }
    });
  for (auto& t : writers) t.join();
  stop = true;
  reader.join();
  for (size_t i = 1; i < applied.size(); ++i) EXPECT_EQ(applied[i], applied[i - 1] + 1);
  EXPECT_EQ(owner.current()->generation, applied.back());
}

}  // namespace
}  // namespace pw::rt
