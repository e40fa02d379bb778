/*
 * NboxMaxMinSolver: weighted max-min fair rates on hand-checked cases, and on random ones
 * against the definition (every flow has a bottleneck: a full resource on which no flow gets
 * more than it, per unit of weight) and against a fresh solve of the same flows.
 */
#include "ns3/nbox-max-min-solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

using Use = NboxMaxMinSolver::Use;

std::vector<NboxMaxMinSolver::Change>
Solve(NboxMaxMinSolver& solver)
{
    std::vector<NboxMaxMinSolver::Change> changed;
    solver.Solve(changed);
    return changed;
}

TEST(NboxMaxMinSolver, FlowsOnOneLinkShareItEqually)
{
    NboxMaxMinSolver solver;
    const uint32_t link = solver.AddResource(12);
    const uint32_t a = solver.AddFlow({{link, 1}});
    const uint32_t b = solver.AddFlow({{link, 1}});
    const uint32_t c = solver.AddFlow({{link, 1}});
    EXPECT_EQ(Solve(solver).size(), 3u);
    EXPECT_DOUBLE_EQ(solver.GetRate(a), 4);
    EXPECT_DOUBLE_EQ(solver.GetRate(b), 4);
    EXPECT_DOUBLE_EQ(solver.GetRate(c), 4);
    solver.RemoveFlow(b);
    EXPECT_EQ(Solve(solver).size(), 2u);
    EXPECT_DOUBLE_EQ(solver.GetRate(a), 6);
    EXPECT_DOUBLE_EQ(solver.GetRate(c), 6);
}

// Link A (10) carries f1 and f2, link B (10) carries f2 and f3: 5 each. B degraded to 2 holds
// f2 and f3 at 1 each, and f1 takes the rest of A, 9: a lower capacity raises a rate elsewhere.
// Back to 10, every flow returns to 5.
TEST(NboxMaxMinSolver, ACapacityChangeMovesTheRatesOfItsWholeComponent)
{
    NboxMaxMinSolver solver;
    const uint32_t linkA = solver.AddResource(10);
    const uint32_t linkB = solver.AddResource(10);
    const uint32_t f1 = solver.AddFlow({{linkA, 1}});
    const uint32_t f2 = solver.AddFlow({{linkA, 1}, {linkB, 1}});
    const uint32_t f3 = solver.AddFlow({{linkB, 1}});
    Solve(solver);
    EXPECT_DOUBLE_EQ(solver.GetRate(f1), 5);
    EXPECT_DOUBLE_EQ(solver.GetRate(f2), 5);
    EXPECT_DOUBLE_EQ(solver.GetRate(f3), 5);
    solver.SetCapacity(linkB, 2);
    EXPECT_EQ(Solve(solver).size(), 3u);
    EXPECT_DOUBLE_EQ(solver.GetCapacity(linkB), 2);
    EXPECT_DOUBLE_EQ(solver.GetRate(f1), 9);
    EXPECT_DOUBLE_EQ(solver.GetRate(f2), 1);
    EXPECT_DOUBLE_EQ(solver.GetRate(f3), 1);
    solver.SetCapacity(linkB, 10);
    EXPECT_EQ(Solve(solver).size(), 3u);
    EXPECT_DOUBLE_EQ(solver.GetRate(f1), 5);
    EXPECT_DOUBLE_EQ(solver.GetRate(f2), 5);
    EXPECT_DOUBLE_EQ(solver.GetRate(f3), 5);
}

// Link A (10) carries f1 and f2, link B (4) carries f2 and f3. B is the first bottleneck at 2
// each; f1 then takes what is left of A: 10 - 2 = 8. A removal changes only flows held back on
// the removed flow's links.
TEST(NboxMaxMinSolver, ABottleneckElsewhereLeavesTheRestToTheOthers)
{
    NboxMaxMinSolver solver;
    const uint32_t linkA = solver.AddResource(10);
    const uint32_t linkB = solver.AddResource(4);
    const uint32_t f1 = solver.AddFlow({{linkA, 1}});
    const uint32_t f2 = solver.AddFlow({{linkA, 1}, {linkB, 1}});
    const uint32_t f3 = solver.AddFlow({{linkB, 1}});
    Solve(solver);
    EXPECT_DOUBLE_EQ(solver.GetRate(f2), 2);
    EXPECT_DOUBLE_EQ(solver.GetRate(f3), 2);
    EXPECT_DOUBLE_EQ(solver.GetRate(f1), 8);
    EXPECT_DOUBLE_EQ(solver.GetLoad(linkA), 10);
    EXPECT_DOUBLE_EQ(solver.GetLoad(linkB), 4);

    // Removing f1 changes nobody (no other flow is held back on A); removing f3 instead lets f2
    // take all of B (4), which leaves f1 6 on A.
    NboxMaxMinSolver copy = solver;
    EXPECT_FALSE(solver.RemoveFlow(f1));
    EXPECT_TRUE(Solve(solver).empty());
    EXPECT_DOUBLE_EQ(solver.GetRate(f2), 2);
    EXPECT_DOUBLE_EQ(solver.GetRate(f3), 2);
    EXPECT_TRUE(copy.RemoveFlow(f3));
    const auto changed = Solve(copy);
    ASSERT_EQ(changed.size(), 2u);
    EXPECT_EQ(changed[0].flow, f2); // fixed first, at the lower rate
    EXPECT_DOUBLE_EQ(copy.GetRate(f2), 4);
    EXPECT_DOUBLE_EQ(copy.GetRate(f1), 6);
}

// Parking lot: a long flow over n links and one short flow on each: every flow gets half.
TEST(NboxMaxMinSolver, ParkingLotGivesEveryFlowHalf)
{
    NboxMaxMinSolver solver;
    std::vector<Use> longPath;
    std::vector<uint32_t> shorts;
    for (int i = 0; i < 5; ++i)
    {
        const uint32_t link = solver.AddResource(100);
        longPath.push_back({link, 1});
        shorts.push_back(solver.AddFlow({{link, 1}}));
    }
    const uint32_t longFlow = solver.AddFlow(longPath);
    Solve(solver);
    EXPECT_DOUBLE_EQ(solver.GetRate(longFlow), 50);
    for (uint32_t f : shorts)
    {
        EXPECT_DOUBLE_EQ(solver.GetRate(f), 50);
    }
}

// Weights are wire bytes per payload byte: a flow of weight 2 and one of weight 1 on a link
// of 12 rise together to x with 2x + x = 12.
TEST(NboxMaxMinSolver, WeightsScaleWhatAFlowCostsALink)
{
    NboxMaxMinSolver solver;
    const uint32_t link = solver.AddResource(12);
    const uint32_t heavy = solver.AddFlow({{link, 2}});
    const uint32_t light = solver.AddFlow({{link, 1}});
    Solve(solver);
    EXPECT_DOUBLE_EQ(solver.GetRate(heavy), 4);
    EXPECT_DOUBLE_EQ(solver.GetRate(light), 4);
    EXPECT_DOUBLE_EQ(solver.GetLoad(link), 12);
}

TEST(NboxMaxMinSolver, OnlyTheTouchedComponentIsRecomputed)
{
    NboxMaxMinSolver solver;
    const uint32_t left = solver.AddResource(10);
    const uint32_t right = solver.AddResource(10);
    const uint32_t a = solver.AddFlow({{left, 1}});
    const uint32_t b = solver.AddFlow({{right, 1}});
    Solve(solver);
    const uint32_t c = solver.AddFlow({{right, 1}});
    const auto changed = Solve(solver);
    std::set<uint32_t> flows;
    for (const auto& change : changed)
    {
        flows.insert(change.flow);
    }
    EXPECT_EQ(flows, (std::set<uint32_t>{b, c}));
    EXPECT_DOUBLE_EQ(solver.GetRate(a), 10);
    EXPECT_DOUBLE_EQ(solver.GetRate(b), 5);
    for (const auto& change : changed)
    {
        EXPECT_DOUBLE_EQ(change.oldRate, change.flow == b ? 10 : 0);
    }
    EXPECT_TRUE(Solve(solver).empty()); // nothing touched since
}

/** Random flows over random resources, with random weights. */
struct RandomInstance
{
    std::vector<double> capacities;
    std::vector<std::vector<Use>> flows;
};

RandomInstance
MakeInstance(uint32_t seed, int resources, int flows)
{
    std::mt19937 rng(seed);
    RandomInstance instance;
    std::uniform_real_distribution<double> capacity(1, 100);
    std::uniform_real_distribution<double> weight(1, 1.1);
    std::uniform_int_distribution<int> pathLength(1, 5);
    std::uniform_int_distribution<int> resource(0, resources - 1);
    for (int r = 0; r < resources; ++r)
    {
        instance.capacities.push_back(capacity(rng));
    }
    for (int f = 0; f < flows; ++f)
    {
        std::set<int> path;
        const int length = pathLength(rng);
        while (static_cast<int>(path.size()) < length)
        {
            path.insert(resource(rng));
        }
        std::vector<Use> uses;
        for (int r : path)
        {
            uses.push_back({static_cast<uint32_t>(r), weight(rng)});
        }
        instance.flows.push_back(uses);
    }
    return instance;
}

/** Checks max-min fairness by its definition: every flow crosses a full resource on which
 * its rate is the largest. */
void
ExpectMaxMinFair(const NboxMaxMinSolver& solver, const RandomInstance& instance,
                 const std::vector<uint32_t>& ids, const std::vector<bool>& live)
{
    const double tolerance = 1e-9;
    std::vector<double> load(instance.capacities.size(), 0);
    for (size_t f = 0; f < ids.size(); ++f)
    {
        if (!live[f])
        {
            continue;
        }
        EXPECT_GT(solver.GetRate(ids[f]), 0);
        for (const Use& use : instance.flows[f])
        {
            load[use.resource] += use.weight * solver.GetRate(ids[f]);
        }
    }
    for (size_t r = 0; r < load.size(); ++r)
    {
        EXPECT_LE(load[r], instance.capacities[r] * (1 + tolerance)) << "resource " << r;
    }
    for (size_t f = 0; f < ids.size(); ++f)
    {
        if (!live[f])
        {
            continue;
        }
        bool bottlenecked = false;
        for (const Use& use : instance.flows[f])
        {
            const bool full
                = load[use.resource] >= instance.capacities[use.resource] * (1 - tolerance);
            bool largest = true;
            for (size_t g = 0; g < ids.size() && largest; ++g)
            {
                if (!live[g])
                {
                    continue;
                }
                for (const Use& other : instance.flows[g])
                {
                    if (other.resource == use.resource
                        && solver.GetRate(ids[g]) > solver.GetRate(ids[f]) * (1 + tolerance))
                    {
                        largest = false;
                    }
                }
            }
            bottlenecked |= full && largest;
        }
        EXPECT_TRUE(bottlenecked) << "flow " << f << " has no bottleneck";
    }
}

/** Solves `instance`, removes every third flow, and checks the rates by the definition and
 * against a fresh solve of the flows left. */
void
CheckRandomInstances(int resources, int flows)
{
    for (uint32_t seed = 1; seed <= 20; ++seed)
    {
        const RandomInstance instance = MakeInstance(seed, resources, flows);
        NboxMaxMinSolver solver;
        for (double c : instance.capacities)
        {
            solver.AddResource(c);
        }
        std::vector<uint32_t> ids;
        std::vector<bool> live;
        for (const auto& uses : instance.flows)
        {
            ids.push_back(solver.AddFlow(uses));
            live.push_back(true);
        }
        Solve(solver);
        ExpectMaxMinFair(solver, instance, ids, live);
        // Remove every third flow, incrementally, and compare with a fresh solve.
        for (size_t f = 0; f < ids.size(); f += 3)
        {
            solver.RemoveFlow(ids[f]);
            live[f] = false;
        }
        Solve(solver);
        ExpectMaxMinFair(solver, instance, ids, live);

        // The same live flows added one by one to a new solver, solving after each addition:
        // the end state must not depend on the path to it.
        NboxMaxMinSolver fresh;
        for (double c : instance.capacities)
        {
            fresh.AddResource(c);
        }
        for (size_t f = 0; f < ids.size(); ++f)
        {
            if (live[f])
            {
                fresh.AddFlow(instance.flows[f]);
                Solve(fresh);
            }
        }
        uint32_t id = 0;
        for (size_t f = 0; f < ids.size(); ++f)
        {
            if (live[f])
            {
                EXPECT_NEAR(fresh.GetRate(id), solver.GetRate(ids[f]),
                            1e-9 * solver.GetRate(ids[f]))
                    << "seed " << seed << " flow " << f;
                ++id;
            }
        }
    }
}

/** ExpectMaxMinFair, and the live flows' rates within 1e-9 of a fresh solve of them alone. */
void
ExpectFairAndAsFreshlySolved(const NboxMaxMinSolver& solver, const RandomInstance& instance,
                             const std::vector<uint32_t>& ids, const std::vector<bool>& live,
                             const std::string& when)
{
    SCOPED_TRACE(when);
    ExpectMaxMinFair(solver, instance, ids, live);
    NboxMaxMinSolver fresh;
    for (double c : instance.capacities)
    {
        fresh.AddResource(c);
    }
    std::vector<uint32_t> freshIds(ids.size(), 0);
    for (size_t f = 0; f < ids.size(); ++f)
    {
        freshIds[f] = live[f] ? fresh.AddFlow(instance.flows[f]) : 0;
    }
    Solve(fresh);
    for (size_t f = 0; f < ids.size(); ++f)
    {
        if (live[f])
        {
            EXPECT_NEAR(fresh.GetRate(freshIds[f]), solver.GetRate(ids[f]),
                        1e-9 * fresh.GetRate(freshIds[f]))
                << "flow " << f;
        }
    }
}

// Flows removed one at a time, with a Solve after each (what the flow model does as messages
// end): each Solve resumes the filling at the removed flow's rate, or is skipped when no flow
// was held back on its resources. After every removal the rates must be max-min fair by the
// definition and those of a fresh solve of the flows left.
TEST(NboxMaxMinSolver, RemovalsOneByOneKeepTheRatesOfAFreshSolve)
{
    int skipped = 0;
    int resolved = 0;
    for (uint32_t seed = 1; seed <= 10; ++seed)
    {
        const RandomInstance instance = MakeInstance(seed, 20, 50);
        NboxMaxMinSolver solver;
        for (double c : instance.capacities)
        {
            solver.AddResource(c);
        }
        std::vector<uint32_t> ids;
        std::vector<bool> live(instance.flows.size(), true);
        for (const auto& uses : instance.flows)
        {
            ids.push_back(solver.AddFlow(uses));
        }
        Solve(solver);
        std::vector<size_t> order(ids.size());
        for (size_t f = 0; f < order.size(); ++f)
        {
            order[f] = f;
        }
        std::shuffle(order.begin(), order.end(), std::mt19937(seed));
        order.resize(order.size() - 5);
        for (size_t removed : order)
        {
            const bool mayChange = solver.RemoveFlow(ids[removed]);
            live[removed] = false;
            const auto changed = Solve(solver);
            mayChange ? ++resolved : ++skipped;
            if (!mayChange)
            {
                EXPECT_TRUE(changed.empty());
            }
            ExpectFairAndAsFreshlySolved(solver, instance, ids, live,
                                         "seed " + std::to_string(seed) + ", after removing "
                                             + std::to_string(removed));
        }
    }
    // Both kinds of removal were exercised.
    EXPECT_GT(skipped, 20);
    EXPECT_GT(resolved, 20);
}

// Flows starting and ending in batches, with a Solve after each batch (as flows of an
// all-to-all start when earlier ones on their connection end): each Solve resumes the filling
// at the lowest ended rate or equal share of a started flow's resource. After every batch the
// rates must be max-min fair by the definition and those of a fresh solve of the live flows.
TEST(NboxMaxMinSolver, StartsAndEndsInBatchesKeepTheRatesOfAFreshSolve)
{
    for (uint32_t seed = 1; seed <= 10; ++seed)
    {
        const RandomInstance instance = MakeInstance(seed, 25, 80);
        NboxMaxMinSolver solver;
        for (double c : instance.capacities)
        {
            solver.AddResource(c);
        }
        std::vector<uint32_t> ids(instance.flows.size(), 0);
        std::vector<bool> live(instance.flows.size(), false);
        std::mt19937 rng(seed);
        for (int batch = 0; batch < 60; ++batch)
        {
            const int changes = 1 + static_cast<int>(rng() % 4);
            for (int i = 0; i < changes; ++i)
            {
                const size_t f = rng() % instance.flows.size();
                if (live[f])
                {
                    solver.RemoveFlow(ids[f]);
                }
                else
                {
                    ids[f] = solver.AddFlow(instance.flows[f]);
                }
                live[f] = !live[f];
            }
            Solve(solver);
            ExpectFairAndAsFreshlySolved(solver, instance, ids, live,
                                         "seed " + std::to_string(seed) + ", after batch "
                                             + std::to_string(batch));
        }
    }
}

TEST(NboxMaxMinSolver, RandomInstancesAreMaxMinFairAfterEveryChange)
{
    CheckRandomInstances(30, 60);
}

/** Flows of `instance` that share no resource with another flow. */
int
CountLoneFlows(const RandomInstance& instance)
{
    std::vector<int> users(instance.capacities.size(), 0);
    for (const auto& uses : instance.flows)
    {
        for (const Use& use : uses)
        {
            ++users[use.resource];
        }
    }
    int lone = 0;
    for (const auto& uses : instance.flows)
    {
        lone += std::all_of(uses.begin(), uses.end(),
                            [&users](const Use& use) { return users[use.resource] == 1; });
    }
    return lone;
}

// Few flows over many resources: flows alone in their component (solved without the heap)
// beside shared components, in one Solve.
TEST(NboxMaxMinSolver, SparseRandomInstancesAreMaxMinFairAfterEveryChange)
{
    for (uint32_t seed = 1; seed <= 20; ++seed)
    {
        const int lone = CountLoneFlows(MakeInstance(seed, 300, 40));
        EXPECT_GT(lone, 0) << "seed " << seed << " has no lone flow";
        EXPECT_LT(lone, 40) << "seed " << seed << " has no shared component";
    }
    CheckRandomInstances(300, 40);
}

// A flow alone on its resources is rated on the spot (the flow transport does so instead of a
// Solve event): its tightest capacity over weight, here min(10 / 1.25, 6 / 1) = 6. A flow
// joining one of its resources later makes both shared, and Solve then reports the first
// flow's change from that rate: 6 / 2 = 3 each.
TEST(NboxMaxMinSolver, AFlowAloneIsRatedWithoutASolve)
{
    NboxMaxMinSolver solver;
    const uint32_t wide = solver.AddResource(10);
    const uint32_t narrow = solver.AddResource(6);
    const uint32_t a = solver.AddFlow({{wide, 1.25}, {narrow, 1}});
    ASSERT_TRUE(solver.IsAlone(a));
    EXPECT_DOUBLE_EQ(solver.SolveAlone(a), 6);
    EXPECT_DOUBLE_EQ(solver.GetRate(a), 6);
    // Its resources stay touched: the next Solve visits them and finds nothing changed.
    EXPECT_TRUE(Solve(solver).empty());

    const uint32_t b = solver.AddFlow({{narrow, 1}});
    EXPECT_FALSE(solver.IsAlone(a));
    EXPECT_FALSE(solver.IsAlone(b));
    const auto changed = Solve(solver);
    ASSERT_EQ(changed.size(), 2u);
    EXPECT_EQ(changed[0].flow, a); // the lower flow id first among equal rates
    EXPECT_DOUBLE_EQ(changed[0].oldRate, 6);
    EXPECT_DOUBLE_EQ(solver.GetRate(a), 3);
    EXPECT_DOUBLE_EQ(solver.GetRate(b), 3);
    solver.RemoveFlow(b);
    EXPECT_TRUE(solver.IsAlone(a));
}

// A flow rated alone keeps its rate when a flow joins it on a resource that is not its
// bottleneck: a lone flow at 6 (capacity 6 of its narrow resource), then one on its wide
// resource (capacity 20) alone, whose resumed filling starts at the wide resource's equal
// share, 10, above the lone flow's 6: the newcomer gets 20 - 6 = 14, and the lone flow,
// which that filling does not revisit, stays at 6.
TEST(NboxMaxMinSolver, AFlowRatedAloneIsNotRefilledBelowTheLevel)
{
    NboxMaxMinSolver solver;
    const uint32_t wide = solver.AddResource(20);
    const uint32_t narrow = solver.AddResource(6);
    const uint32_t a = solver.AddFlow({{wide, 1}, {narrow, 1}});
    ASSERT_TRUE(solver.IsAlone(a));
    EXPECT_DOUBLE_EQ(solver.SolveAlone(a), 6);
    const uint32_t b = solver.AddFlow({{wide, 1}});
    const auto changed = Solve(solver);
    ASSERT_EQ(changed.size(), 1u);
    EXPECT_EQ(changed[0].flow, b);
    EXPECT_DOUBLE_EQ(solver.GetRate(a), 6);
    EXPECT_DOUBLE_EQ(solver.GetRate(b), 14);
}

// Flows added one by one, each rated on the spot when alone and by Solve otherwise, end with
// the rates of one Solve over them all.
TEST(NboxMaxMinSolver, RatingLoneFlowsOnTheSpotEndsWhereOneSolveDoes)
{
    for (uint32_t seed = 1; seed <= 20; ++seed)
    {
        const RandomInstance instance = MakeInstance(seed, 300, 40);
        NboxMaxMinSolver stepwise;
        NboxMaxMinSolver once;
        for (double c : instance.capacities)
        {
            stepwise.AddResource(c);
            once.AddResource(c);
        }
        int ratedAlone = 0;
        for (const auto& uses : instance.flows)
        {
            const uint32_t id = stepwise.AddFlow(uses);
            once.AddFlow(uses);
            if (stepwise.IsAlone(id))
            {
                stepwise.SolveAlone(id);
                ++ratedAlone;
            }
            else
            {
                Solve(stepwise);
            }
        }
        EXPECT_GT(ratedAlone, 0) << "seed " << seed;
        Solve(once);
        for (uint32_t id = 0; id < instance.flows.size(); ++id)
        {
            EXPECT_DOUBLE_EQ(stepwise.GetRate(id), once.GetRate(id))
                << "seed " << seed << " flow " << id;
        }
    }
}

// Progressive filling fixes flows by rising rate (ties: the lower bottleneck id), and Solve
// reports the changes in that order, whether a flow is alone on its resources or shares them.
// Here: f4 alone at 3 (capacity 3), f2 and f3 sharing 8 at 4 each (bottleneck 1), f5 alone at
// 4 (bottleneck 4), f1 alone at 5 (capacity 5, its other resource has 9).
TEST(NboxMaxMinSolver, ChangesComeInTheOrderTheRatesWereFixed)
{
    NboxMaxMinSolver solver;
    const uint32_t r0 = solver.AddResource(5);
    const uint32_t r1 = solver.AddResource(8);
    const uint32_t r2 = solver.AddResource(3);
    const uint32_t r3 = solver.AddResource(9);
    const uint32_t r4 = solver.AddResource(4);
    const uint32_t f1 = solver.AddFlow({{r3, 1}, {r0, 1}});
    const uint32_t f2 = solver.AddFlow({{r1, 1}});
    const uint32_t f3 = solver.AddFlow({{r1, 1}});
    const uint32_t f4 = solver.AddFlow({{r2, 1}});
    const uint32_t f5 = solver.AddFlow({{r4, 1}});
    std::vector<uint32_t> order;
    for (const auto& change : Solve(solver))
    {
        order.push_back(change.flow);
    }
    EXPECT_EQ(order, (std::vector<uint32_t>{f4, f2, f3, f5, f1}));
    EXPECT_DOUBLE_EQ(solver.GetRate(f1), 5);
    EXPECT_DOUBLE_EQ(solver.GetRate(f2), 4);
    EXPECT_DOUBLE_EQ(solver.GetRate(f5), 4);
}

} // namespace
} // namespace test
} // namespace ns3
