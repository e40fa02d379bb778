/*
 * NboxRealRankGateway: ranks driven from outside the simulator exchange messages with
 * emulated ranks (and with each other) over the simulated network, matched by the schedule's
 * FIFO rule. A "real" rank here is a hand-driven FakeRealRank that follows its own
 * BuildRankSchedule and posts each ready step in an event of its own, as nbox-cosim does with
 * a real rank's posts. Expectations: the all-emulated run of the same job (same times, to
 * the nanosecond), the alpha-beta closed form of a ring all-reduce, and hand-checked cases.
 */
#include "nbox-test-util.h"

#include "ns3/nbox-job-helper.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-real-rank-gateway.h"
#include "ns3/nbox-tcp-transport.h"
#include "ns3/uinteger.h"

#include "collectives/step_tracker.h"
#include "workloads/ops.h"

#include <cstdio>
#include <map>
#include <memory>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

using nbox::coll::CollectiveOp;
using nbox::coll::StepKind;

constexpr double kRateBps = 100e9;
constexpr double kLatencyS = 1e-6;
constexpr uint32_t kMtu = 9000;

/**
 * Ring all-reduce on a non-blocking star, one channel, no chunking: 2(W-1) steps of S/W
 * bytes each, every step paying the TCP goodput of a host link and a per-step latency of
 * two link delays plus one full packet's store-and-forward at the switch:
 *   T = 2(W-1)/W * S / goodput + 2(W-1) * (2 L + packet / rate)
 * Header sizes are written out in nbox-test-util.h, not taken from the code under test.
 */
double
RingAllReduceAlphaBetaSeconds(int world, double bytes)
{
    const double wirePacket = kMtu + 2; // IP MTU plus PPP
    const double goodputBytesPerS = kRateBps / 8 * PayloadPerSegment(kMtu) / wirePacket;
    const double steps = 2.0 * (world - 1);
    return steps / world * bytes / goodputBytesPerS
         + steps * (2 * kLatencyS + wirePacket * 8 / kRateBps);
}

/**
 * A real rank driven by hand: runs `iterations` all-reduces of its own BuildRankSchedule,
 * posting every ready step through the gateway from an event of its own (never from inside
 * a gateway callback), marking its iterations, and saying goodbye to the job at the end.
 * With `mirror` it reports each collective to the gateway first (mirror mode).
 */
class FakeRealRank
{
  public:
    FakeRealRank(uint32_t rank, const nbox::coll::CollectiveSpec& spec, int iterations, bool mirror,
                 Ptr<NboxRealRankGateway> gateway, Ptr<NboxJob> job, int scheduleRank = -1)
        : m_rank(rank)
        , m_spec(spec)
        , m_schedule(nbox::coll::BuildRankSchedule(spec, scheduleRank < 0 ? rank : scheduleRank))
        , m_iterations(iterations)
        , m_mirror(mirror)
        , m_gateway(gateway)
        , m_job(job)
    {
    }

    /** Starts iteration 0 now (in an event of its own). */
    void
    Start()
    {
        Simulator::ScheduleNow(&FakeRealRank::BeginIteration, this);
    }

    /** A send completed (called from a gateway callback): continue in a new event. */
    void
    SendCompleted(uint64_t request)
    {
        Complete(request, StepKind::kSend);
    }

    /** A receive got `bytes` from `sender` (from a gateway callback). */
    void
    RecvCompleted(uint64_t request, uint32_t sender, uint64_t bytes)
    {
        const nbox::coll::Step& step = Complete(request, StepKind::kRecv);
        EXPECT_EQ(WorldRank(step.peer), sender) << "rank " << m_rank;
        EXPECT_EQ(step.bytes, bytes) << "rank " << m_rank;
    }

    /**
     * Its schedule (built for `scheduleRank`) is a group communicator's: `members` are the
     * group's world ranks, its lanes start at `laneBase` (posts name world ranks and the job's
     * lanes, as a real rank's do through the bridge).
     */
    void
    InGroup(std::vector<uint32_t> members, uint32_t laneBase)
    {
        m_members = std::move(members);
        m_laneBase = laneBase;
    }

    bool
    Ended() const
    {
        return m_ended;
    }

  private:
    const nbox::coll::Step&
    Complete(uint64_t request, StepKind kind)
    {
        NS_ABORT_MSG_IF(request >> 32 != static_cast<uint64_t>(m_iteration),
                        "completion of iteration " << (request >> 32) << " in iteration "
                                                   << m_iteration);
        const auto id = static_cast<uint32_t>(request);
        const nbox::coll::Step& step = m_schedule.steps.at(id);
        EXPECT_EQ(step.kind, kind) << "rank " << m_rank << " step " << id;
        m_tracker->Complete(id);
        Simulator::ScheduleNow(&FakeRealRank::Advance, this);
        return step;
    }

    void
    BeginIteration()
    {
        if (m_mirror)
        {
            m_gateway->MirrorCollective(m_rank, m_spec.op, m_spec.bytes, m_spec.root,
                                        m_spec.element_bytes, "allreduce", m_iteration);
        }
        m_gateway->BeginIteration(m_rank, m_iteration);
        m_tracker = std::make_unique<nbox::coll::StepTracker>(m_schedule);
        Advance();
    }

    void
    Advance()
    {
        if (m_tracker->Done())
        {
            m_gateway->EndIteration(m_rank, m_iteration);
            if (++m_iteration < m_iterations)
            {
                BeginIteration();
                return;
            }
            m_ended = true;
            m_job->RealRankEnded(m_rank);
            return;
        }
        for (uint32_t id : m_tracker->TakeReady())
        {
            const nbox::coll::Step& step = m_schedule.steps[id];
            const uint64_t request = (static_cast<uint64_t>(m_iteration) << 32) | id;
            const uint32_t lane = m_laneBase + static_cast<uint32_t>(step.channel);
            if (step.kind == StepKind::kSend)
            {
                m_gateway->PostSend(m_rank, WorldRank(step.peer), lane, request, step.bytes);
            }
            else
            {
                m_gateway->PostRecv(m_rank, WorldRank(step.peer), lane, request, step.bytes);
            }
        }
    }

    uint32_t
    WorldRank(int peer) const
    {
        return m_members.empty() ? static_cast<uint32_t>(peer) : m_members.at(peer);
    }

    uint32_t m_rank;
    std::vector<uint32_t> m_members; //!< a group's world ranks; empty: the world
    uint32_t m_laneBase = 0;
    nbox::coll::CollectiveSpec m_spec;
    nbox::coll::RankSchedule m_schedule;
    int m_iterations;
    bool m_mirror;
    Ptr<NboxRealRankGateway> m_gateway;
    Ptr<NboxJob> m_job;
    std::unique_ptr<nbox::coll::StepTracker> m_tracker;
    int m_iteration = 0;
    bool m_ended = false;
};

/** How a job of W ranks doing `iterations` all-reduces of `bytes` on a star is run. */
struct JobSpec
{
    int world = 4;
    uint64_t bytes = 4 << 20;
    int iterations = 2;
    uint32_t channels = 1;
    uint64_t chunkBytes = 0;
    std::vector<bool> isReal;     //!< empty: all emulated
    bool mirror = false;          //!< emulated ranks get no program; rank 0 reports collectives
    bool stopInCallbacks = false; //!< every gateway callback calls Simulator::Stop()
};

struct JobResult
{
    bool finished = false;
    Ptr<NboxJobRecords> records;
    NboxTransportStats transport;
    NboxRealRankGatewayStats gateway;
    /** Simulator::Now() when each Run() returned, with stopInCallbacks. */
    std::vector<Time> runReturns;
    /** The time of every completion a callback reported, in order. */
    std::vector<Time> callbackTimes;
};

/**
 * Runs the simulator until `job` finishes, nothing is left to run or 1 s of simulated time
 * passed (a guard against a hang); each time Run() returns, its time goes to `runReturns`.
 */
void
RunUntilFinished(Ptr<NboxJob> job, std::vector<Time>* runReturns)
{
    // The job stops the simulator when it finishes; the limit only guards against a hang.
    const Time limit = Seconds(1);
    // (Simulator::IsFinished() cannot tell an empty queue here: it is also true after Stop().)
    uint64_t events = 0;
    while (!job->IsFinished() && Simulator::Now() < limit
           && (events == 0 || Simulator::GetEventCount() > events))
    {
        events = Simulator::GetEventCount();
        Simulator::Stop(limit - Simulator::Now());
        Simulator::Run();
        if (runReturns != nullptr)
        {
            runReturns->push_back(Simulator::Now());
        }
    }
}

JobResult
RunJob(const JobSpec& spec)
{
    const auto topology = nbox::topo::MakeStar(spec.world, kRateBps, kLatencyS);
    const auto rankToHost = nbox::topo::PlaceRanks(topology, spec.world);
    NboxNetworkConfig config;
    config.mtu = kMtu;
    auto network = NboxNetworkHelper(config).Install(topology);
    auto transport = CreateObject<NboxTcpTransport>(network, rankToHost);

    NboxJobHelper helper;
    helper.SetCommunicatorAttribute("Channels", UintegerValue(spec.channels));
    helper.SetCommunicatorAttribute("ChunkSize", UintegerValue(spec.chunkBytes));
    auto program = std::make_shared<const nbox::work::RankProgram>(
        spec.mirror ? nbox::work::RankProgram{}
                    : nbox::work::RepeatedCollectiveProgram(CollectiveOp::kAllReduce, spec.bytes,
                                                            spec.iterations));
    std::vector<std::shared_ptr<const nbox::work::RankProgram>> programs(spec.world, program);
    for (int r = 0; r < spec.world && !spec.isReal.empty(); ++r)
    {
        if (spec.isReal[r])
        {
            programs[r] = nullptr; // a real rank's program runs outside
        }
    }
    helper.SetRealRanks(spec.isReal);
    auto job = helper.Install(network, transport, programs, rankToHost);

    JobResult result;
    result.records = job->GetRecords();
    auto gateway = CreateObject<NboxRealRankGateway>();
    std::map<uint32_t, std::unique_ptr<FakeRealRank>> real;
    if (!spec.isReal.empty())
    {
        nbox::coll::CollectiveSpec collective;
        collective.op = CollectiveOp::kAllReduce;
        collective.world_size = spec.world;
        collective.bytes = spec.bytes;
        collective.channels = static_cast<int>(spec.channels);
        collective.chunk_bytes = spec.chunkBytes;
        gateway->Setup(job->GetCommunicator(), transport, spec.isReal, job->GetRecords());
        if (spec.mirror)
        {
            // As the owner should: open the mirrored collective's connections at init.
            job->GetCommunicator()->ConnectFor(collective.op, collective.bytes);
        }
        for (int r = 0; r < spec.world; ++r)
        {
            if (spec.isReal[r])
            {
                real[r] = std::make_unique<FakeRealRank>(r, collective, spec.iterations,
                                                         spec.mirror, gateway, job);
            }
        }
        // Each completion is noted, handed to its fake rank and (optionally) stops the run.
        auto noteCompletion = [&result, &spec](Time at)
        {
            EXPECT_EQ(at, Simulator::Now());
            result.callbackTimes.push_back(at);
            if (spec.stopInCallbacks)
            {
                Simulator::Stop();
            }
        };
        gateway->onSendComplete = [&real, noteCompletion](uint32_t rank, uint64_t request, Time at)
        {
            real.at(rank)->SendCompleted(request);
            noteCompletion(at);
        };
        gateway->onDeliverFromEmulated
            = [&real, &spec, noteCompletion](uint32_t rank, uint64_t request, uint32_t sender,
                                             uint64_t bytes, Time at)
        {
            EXPECT_FALSE(spec.isReal[sender]);
            real.at(rank)->RecvCompleted(request, sender, bytes);
            noteCompletion(at);
        };
        gateway->onDeliverFromReal
            = [&real, &spec, collective, noteCompletion](uint32_t rank, uint64_t request,
                                                         uint32_t sender, uint64_t sendRequest,
                                                         uint64_t bytes, Time at)
        {
            EXPECT_TRUE(spec.isReal[sender]);
            // The sender's request names the step it came from: the same size.
            const auto sendStep = nbox::coll::BuildRankSchedule(collective, sender)
                                      .steps.at(static_cast<uint32_t>(sendRequest));
            EXPECT_EQ(sendStep.bytes, bytes);
            EXPECT_EQ(static_cast<uint32_t>(sendStep.peer), rank);
            real.at(rank)->RecvCompleted(request, sender, bytes);
            noteCompletion(at);
        };
        // Real ranks start with the emulated ones: once every connection is up (the job's
        // own WhenAllConnected callback was registered first, so its ranks begin first).
        transport->WhenAllConnected(
            [&real]()
            {
                for (auto& [rank, fake] : real)
                {
                    fake->Start();
                }
            });
    }

    RunUntilFinished(job, &result.runReturns);
    result.finished = job->IsFinished();
    result.transport = transport->GetStats();
    result.gateway = gateway->GetStats();
    for (auto& [rank, fake] : real)
    {
        EXPECT_TRUE(fake->Ended()) << "real rank " << rank;
    }
    gateway->Dispose();
    return result;
}

/** The iteration record of `rank`, iteration `iteration`. */
NboxIterationRecord
IterationOf(const JobResult& result, uint32_t rank, int iteration)
{
    for (const auto& record : result.records->iterations)
    {
        if (record.rank == rank && record.iteration == iteration)
        {
            return record;
        }
    }
    ADD_FAILURE() << "no record of rank " << rank << " iteration " << iteration;
    return NboxIterationRecord{rank, iteration, Time(), Time()};
}

/**
 * A job of three communicators: the world of 4 and the groups {2, 0} and {1, 3}; every rank
 * runs `iterations` all-reduces of `bytes` on its group (slot 1). With `realTwo`, world rank 2
 * (rank 0 of group {2, 0}) runs for real through the gateway, in world ranks on the group's
 * lanes. Returns the records (and whether the job finished).
 */
JobResult
RunGroupJob(bool realTwo, uint64_t bytes, int iterations)
{
    const int world = 4;
    const auto topology = nbox::topo::MakeStar(world, kRateBps, kLatencyS);
    const auto rankToHost = nbox::topo::PlaceRanks(topology, world);
    NboxNetworkConfig config;
    config.mtu = kMtu;
    auto network = NboxNetworkHelper(config).Install(topology);
    auto transport = CreateObject<NboxTcpTransport>(network, rankToHost);

    nbox::work::JobPrograms programs;
    programs.communicators = {{"world", nbox::work::Parallelism::kOther, {0, 1, 2, 3}},
                              {"g20", nbox::work::Parallelism::kTensor, {2, 0}},
                              {"g13", nbox::work::Parallelism::kTensor, {1, 3}}};
    programs.rank_comms = {{0, 1}, {0, 2}, {0, 1}, {0, 2}};
    programs.stream_names = {"tp"};
    auto program = std::make_shared<nbox::work::RankProgram>(
        nbox::work::RepeatedCollectiveProgram(CollectiveOp::kAllReduce, bytes, iterations));
    for (auto& op : program->ops)
    {
        op.comm = 1;
    }
    programs.programs.assign(world, program);
    std::vector<bool> isReal(world, false);
    if (realTwo)
    {
        isReal[2] = true;
        programs.programs[2] = nullptr;
    }

    NboxJobHelper helper;
    helper.SetCommunicatorAttribute("Channels", UintegerValue(1));
    helper.SetRealRanks(realTwo ? isReal : std::vector<bool>{});
    auto communicators = helper.CreateCommunicators(transport, programs);
    const Ptr<NboxCommunicator> group = communicators.communicators.at(1);
    auto job = helper.Install(programs, communicators);

    JobResult result;
    result.records = job->GetRecords();
    auto gateway = CreateObject<NboxRealRankGateway>();
    std::unique_ptr<FakeRealRank> two;
    if (realTwo)
    {
        gateway->Setup(job->GetCommunicator(), transport, isReal, job->GetRecords());
        gateway->AddGroup(group);
        gateway->AddGroup(communicators.communicators.at(2)); // no real member: not added
        nbox::coll::CollectiveSpec spec = group->MakeSpec(CollectiveOp::kAllReduce, bytes);
        two = std::make_unique<FakeRealRank>(2, spec, iterations, false, gateway, job, 0);
        two->InGroup({2, 0}, group->GetLaneBase());
        gateway->onSendComplete
            = [&two](uint32_t, uint64_t request, Time) { two->SendCompleted(request); };
        gateway->onDeliverFromEmulated
            = [&two](uint32_t, uint64_t request, uint32_t sender, uint64_t bytes, Time)
        { two->RecvCompleted(request, sender, bytes); };
        transport->WhenAllConnected([&two]() { two->Start(); });
    }
    RunUntilFinished(job, nullptr);
    result.finished = job->IsFinished();
    result.gateway = gateway->GetStats();
    if (two)
    {
        EXPECT_TRUE(two->Ended());
    }
    gateway->Dispose();
    return result;
}

class NboxRealRankGatewayTest : public NboxNs3Test
{
  protected:
    /** Runs `spec` once as given and once all-emulated, each on a fresh simulator. */
    std::pair<JobResult, JobResult>
    RunWithAndWithoutRealRanks(const JobSpec& spec)
    {
        JobResult withReal = RunJob(spec);
        Reset();
        JobSpec emulated = spec;
        emulated.isReal.clear();
        emulated.mirror = false;
        emulated.stopInCallbacks = false;
        JobResult allEmulated = RunJob(emulated);
        return {std::move(withReal), std::move(allEmulated)};
    }

    /** Every rank's every iteration starts and ends at the same time in both runs. */
    static void
    ExpectSameIterations(const JobResult& a, const JobResult& b, int world, int iterations,
                         const std::vector<bool>& onlyRanks = {})
    {
        for (int r = 0; r < world; ++r)
        {
            if (!onlyRanks.empty() && !onlyRanks[r])
            {
                continue;
            }
            for (int i = 0; i < iterations; ++i)
            {
                const auto x = IterationOf(a, r, i);
                const auto y = IterationOf(b, r, i);
                EXPECT_NEAR(x.start.GetNanoSeconds(), y.start.GetNanoSeconds(), 1)
                    << "rank " << r << " iteration " << i;
                EXPECT_NEAR(x.end.GetNanoSeconds(), y.end.GetNanoSeconds(), 1)
                    << "rank " << r << " iteration " << i;
            }
        }
    }
};

TEST_F(NboxRealRankGatewayTest, RealRankInRingAllReduceMatchesAllEmulatedAndAlphaBeta)
{
    JobSpec spec;
    spec.isReal = {true, false, false, false};
    auto [withReal, allEmulated] = RunWithAndWithoutRealRanks(spec);
    ASSERT_TRUE(withReal.finished);
    ASSERT_TRUE(allEmulated.finished);
    ExpectSameIterations(withReal, allEmulated, spec.world, spec.iterations);

    // Iteration 0 opens the TCP windows; iteration 1 is the steady state of the formula.
    const auto steady = IterationOf(withReal, 0, 1);
    const double measured = (steady.end - steady.start).GetSeconds();
    const double expected = RingAllReduceAlphaBetaSeconds(spec.world, spec.bytes);
    std::printf("real rank 0 of 4: iteration %.6f s, alpha-beta %.6f s, ratio %.4f\n", measured,
                expected, measured / expected);
    EXPECT_NEAR(measured / expected, 1.0, 0.05);

    // Rank 0 posts 2(W-1) sends and 2(W-1) receives per iteration, all completed.
    const uint64_t perIteration = 2 * (spec.world - 1);
    EXPECT_EQ(withReal.gateway.sendsPosted, perIteration * spec.iterations);
    EXPECT_EQ(withReal.gateway.sendsCompleted, withReal.gateway.sendsPosted);
    EXPECT_EQ(withReal.gateway.recvsPosted, perIteration * spec.iterations);
    EXPECT_EQ(withReal.gateway.recvsCompleted, withReal.gateway.recvsPosted);
    // Each of those messages is S/W bytes; the transport counted them with everyone else's.
    EXPECT_EQ(withReal.gateway.bytesSent, perIteration * spec.iterations * spec.bytes / 4);
    EXPECT_EQ(withReal.gateway.bytesReceived, withReal.gateway.bytesSent);
    EXPECT_EQ(withReal.transport.bytesDelivered, allEmulated.transport.bytesDelivered);
    EXPECT_EQ(withReal.transport.messagesDelivered, allEmulated.transport.messagesDelivered);
    // The real rank's iterations are in the records; its collectives are not (it runs them).
    EXPECT_EQ(withReal.records->iterations.size(), allEmulated.records->iterations.size());
    EXPECT_EQ(withReal.records->collectives.size(),
              allEmulated.records->collectives.size() - spec.iterations);
    EXPECT_EQ(withReal.records->ranksFinished, 4u);
}

TEST_F(NboxRealRankGatewayTest, TwoRealRanksWithChannelsAndChunksMatchAllEmulated)
{
    // Ranks 0 and 1 are ring neighbours, so messages go real -> real as well as across the
    // boundary both ways, on two lanes, several chunks per step.
    JobSpec spec;
    spec.bytes = 2 << 20;
    spec.channels = 2;
    spec.chunkBytes = 128 << 10;
    spec.isReal = {true, true, false, false};
    auto [withReal, allEmulated] = RunWithAndWithoutRealRanks(spec);
    ASSERT_TRUE(withReal.finished);
    ExpectSameIterations(withReal, allEmulated, spec.world, spec.iterations);
    EXPECT_EQ(withReal.transport.bytesDelivered, allEmulated.transport.bytesDelivered);
}

TEST_F(NboxRealRankGatewayTest, StoppingInEveryCallbackHaltsAtTheCompletionAndChangesNothing)
{
    JobSpec spec;
    spec.bytes = 1 << 20;
    spec.isReal = {false, false, true, false};
    spec.stopInCallbacks = true;
    auto [withReal, allEmulated] = RunWithAndWithoutRealRanks(spec);
    ASSERT_TRUE(withReal.finished);
    ExpectSameIterations(withReal, allEmulated, spec.world, spec.iterations);
    // Every completion ended a Run() at its own time (a later completion at the same time
    // in the same event excepted: Stop() ends the run after the event, not inside it).
    ASSERT_FALSE(withReal.callbackTimes.empty());
    size_t nextReturn = 0;
    for (const Time& completion : withReal.callbackTimes)
    {
        while (nextReturn < withReal.runReturns.size()
               && withReal.runReturns[nextReturn] < completion)
        {
            ++nextReturn;
        }
        ASSERT_LT(nextReturn, withReal.runReturns.size());
        EXPECT_EQ(withReal.runReturns[nextReturn], completion);
    }
}

TEST_F(NboxRealRankGatewayTest, MirrorModeIssuesTheRealRanksCollectivesOnEveryEmulatedRank)
{
    JobSpec spec;
    spec.bytes = 1 << 20;
    spec.isReal = {true, false, false, false};
    spec.mirror = true;
    auto [withReal, allEmulated] = RunWithAndWithoutRealRanks(spec);
    ASSERT_TRUE(withReal.finished);
    ExpectSameIterations(withReal, allEmulated, spec.world, spec.iterations,
                         {true, false, false, false});
    EXPECT_EQ(withReal.gateway.collectivesMirrored, static_cast<uint64_t>(spec.iterations));
    // The emulated ranks ran the mirrored collectives, recorded like their own would be, at
    // the same times as in the all-emulated job (which issues them at iteration start too).
    ASSERT_EQ(withReal.records->collectives.size(), 3u * spec.iterations);
    for (const auto& record : withReal.records->collectives)
    {
        EXPECT_NE(record.rank, 0u);
        EXPECT_EQ(withReal.records->Label(record.labelId), "allreduce");
        bool found = false;
        for (const auto& reference : allEmulated.records->collectives)
        {
            if (reference.rank == record.rank && reference.iteration == record.iteration)
            {
                found = true;
                EXPECT_EQ(reference.issued, record.issued);
                EXPECT_NEAR(reference.finished.GetNanoSeconds(), record.finished.GetNanoSeconds(),
                            1);
            }
        }
        EXPECT_TRUE(found) << "rank " << record.rank << " iteration " << record.iteration;
    }
}

/** Two real ranks on a star of three, for hand-checked point-to-point cases. */
class NboxRealRankPairTest : public NboxNs3Test
{
  protected:
    void
    SetUp() override
    {
        NboxNs3Test::SetUp();
        const auto topology = nbox::topo::MakeStar(3, kRateBps, kLatencyS);
        const auto rankToHost = nbox::topo::PlaceRanks(topology, 3);
        NboxNetworkConfig config;
        config.mtu = kMtu;
        m_transport = CreateObject<NboxTcpTransport>(NboxNetworkHelper(config).Install(topology),
                                                     rankToHost);
        m_records = Create<NboxJobRecords>();
        auto records = m_records;
        m_comm = CreateObject<NboxCommunicator>();
        m_comm->Setup(3, m_transport, records);
        m_gateway = CreateObject<NboxRealRankGateway>();
        m_gateway->Setup(m_comm, m_transport, {true, true, false}, records);
        m_gateway->onSendComplete = [this](uint32_t rank, uint64_t request, Time at) {
            m_sendDone[{rank, request}] = at;
        };
        m_gateway->onDeliverFromReal = [this](uint32_t rank, uint64_t request, uint32_t sender,
                                              uint64_t sendRequest, uint64_t bytes, Time at) {
            m_delivered.push_back({rank, request, sender, sendRequest, bytes, at});
        };
        // Open the lanes used below first, so that handshakes do not enter the timings.
        m_transport->Connect(0, 1, 0);
        m_transport->Connect(0, 1, 1);
        RunFor(MicroSeconds(500));
        ASSERT_EQ(m_transport->GetNEstablished(), 2u);
        m_t0 = Simulator::Now();
    }

    struct Delivery
    {
        uint32_t rank;
        uint64_t request;
        uint32_t sender;
        uint64_t sendRequest;
        uint64_t bytes;
        Time at;
    };

    void
    At(Time t, std::function<void()> post)
    {
        Simulator::Schedule(t, post);
    }

    Ptr<NboxTcpTransport> m_transport;
    Ptr<NboxCommunicator> m_comm;
    Ptr<NboxRealRankGateway> m_gateway;
    Ptr<NboxJobRecords> m_records;
    std::map<std::pair<uint32_t, uint64_t>, Time> m_sendDone;
    std::vector<Delivery> m_delivered;
    Time m_t0;
};

TEST_F(NboxRealRankPairTest, DeliveryIsAtTheLaterOfArrivalAndReceivePost)
{
    // Message 7 (64 KiB) on lane 0 with its receive posted long before it arrives; message
    // 8 (64 KiB) on lane 1 with its receive posted 1 ms after it arrived.
    const uint64_t bytes = 64 << 10;
    At(Seconds(0), [this]() { m_gateway->PostRecv(1, 0, 0, 70, bytes); });
    At(MicroSeconds(5), [this]() { m_gateway->PostSend(0, 1, 0, 7, bytes); });
    At(MicroSeconds(5), [this]() { m_gateway->PostSend(0, 1, 1, 8, bytes); });
    At(MilliSeconds(1), [this]() { m_gateway->PostRecv(1, 0, 1, 80, bytes); });
    EXPECT_EQ(m_gateway->GetOutstandingRequests(0), 0u);
    RunFor(MilliSeconds(5));

    ASSERT_EQ(m_delivered.size(), 2u);
    ASSERT_EQ(m_sendDone.size(), 2u);
    const Time arrived7 = m_sendDone.at({0, 7});
    const Time arrived8 = m_sendDone.at({0, 8});
    // Arrival: at least the serialisation of the bytes at line rate after the post.
    EXPECT_GT(arrived7, m_t0 + MicroSeconds(5)
                            + NanoSeconds(static_cast<int64_t>(bytes * 8 * 1e9 / kRateBps)));
    EXPECT_LT(arrived8, m_t0 + MicroSeconds(100));
    // Receive posted first: delivered when the last byte arrives (the send completion).
    EXPECT_EQ(m_delivered[0].rank, 1u);
    EXPECT_EQ(m_delivered[0].request, 70u);
    EXPECT_EQ(m_delivered[0].sender, 0u);
    EXPECT_EQ(m_delivered[0].sendRequest, 7u);
    EXPECT_EQ(m_delivered[0].bytes, bytes);
    EXPECT_EQ(m_delivered[0].at, arrived7);
    // Message first: delivered when the receive is posted.
    EXPECT_EQ(m_delivered[1].request, 80u);
    EXPECT_EQ(m_delivered[1].sendRequest, 8u);
    EXPECT_EQ(m_delivered[1].at, m_t0 + MilliSeconds(1));
    EXPECT_EQ(m_gateway->GetOutstandingRequests(0), 0u);
    EXPECT_EQ(m_gateway->GetOutstandingRequests(1), 0u);
}

TEST_F(NboxRealRankPairTest, MessagesOfOneLaneMatchReceivesInPostOrder)
{
    // Three messages of different sizes on lane 0; receives with room for any of them. The
    // n-th receive gets the n-th message, whenever each was posted; a smaller message in a
    // larger receive reports its own size. A zero-byte message is delivered as zero bytes.
    At(Seconds(0), [this]() { m_gateway->PostRecv(1, 0, 0, 100, 1 << 20); });
    At(Seconds(0),
       [this]()
       {
           m_gateway->PostSend(0, 1, 0, 1, 3000);
           m_gateway->PostSend(0, 1, 0, 2, 0);
           m_gateway->PostSend(0, 1, 0, 3, 200000);
       });
    At(MilliSeconds(2),
       [this]()
       {
           m_gateway->PostRecv(1, 0, 0, 101, 1 << 20);
           m_gateway->PostRecv(1, 0, 0, 102, 1 << 20);
       });
    RunFor(MilliSeconds(5));
    ASSERT_EQ(m_delivered.size(), 3u);
    const std::vector<std::pair<uint64_t, uint64_t>> expected{{100, 1}, {101, 2}, {102, 3}};
    const std::vector<uint64_t> sizes{3000, 0, 200000};
    for (size_t i = 0; i < 3; ++i)
    {
        EXPECT_EQ(m_delivered[i].request, expected[i].first);
        EXPECT_EQ(m_delivered[i].sendRequest, expected[i].second);
        EXPECT_EQ(m_delivered[i].bytes, sizes[i]);
    }
    EXPECT_LT(m_delivered[0].at, m_t0 + MilliSeconds(1));
    EXPECT_EQ(m_delivered[1].at, m_t0 + MilliSeconds(2));
    EXPECT_EQ(m_delivered[2].at, m_t0 + MilliSeconds(2));
    // The empty message crossed the network as one byte.
    EXPECT_EQ(m_transport->GetStats().bytesDelivered, 3000u + 1u + 200000u);
}

/** A real program and its peers that disagree end the run with both sides named: the job's
 * records say why and the simulator stops, nothing aborts. */
TEST_F(NboxRealRankPairTest, MessageLargerThanItsReceiveIsAnErrorNamingBothSides)
{
    At(Seconds(0),
       [this]()
       {
           m_gateway->PostRecv(1, 0, 1, 5, 1000);
           m_gateway->PostSend(0, 1, 1, 6, 4096);
       });
    RunFor(MilliSeconds(5));
    EXPECT_LT(Simulator::Now(), MilliSeconds(5)) << "the simulator ran on past the mismatch";
    EXPECT_NE(m_records->GetFailure().find("4096-byte message from real rank 0 to real rank 1 on "
                                           "lane 1 matched a receive of only 1000 bytes"),
              std::string::npos)
        << m_records->GetFailure();
    EXPECT_TRUE(m_delivered.empty());
}

/**
 * Two emulated members that cut one collective differently (an 8-byte all-gather over two
 * channels as one int64, which fills channel 0 only, against two float32s, one per channel):
 * the first mismatched message ends the run with both members' ops named, and nothing aborts.
 */
TEST_F(NboxNs3Test, MembersThatCutACollectiveDifferentlyEndTheRunNamingBoth)
{
    const auto topology = nbox::topo::MakeStar(2, kRateBps, kLatencyS);
    NboxNetworkConfig config;
    config.mtu = kMtu;
    auto transport = CreateObject<NboxTcpTransport>(NboxNetworkHelper(config).Install(topology),
                                                    nbox::topo::PlaceRanks(topology, 2));
    auto records = Create<NboxJobRecords>();
    auto comm = CreateObject<NboxCommunicator>();
    comm->SetAttribute("Channels", UintegerValue(2));
    comm->Setup(2, transport, records);
    comm->ConnectFor(CollectiveOp::kAllGather, 16, 0, 4);
    RunFor(MicroSeconds(500));
    NboxCommWork work;
    work.op = CollectiveOp::kAllGather;
    work.bytes = 16;
    work.label = "shapes";
    bool finished = false;
    work.elementBytes = 8;
    comm->Issue(0, work, [&finished](Time) { finished = true; });
    work.elementBytes = 4;
    comm->Issue(1, work, [&finished](Time) { finished = true; });
    RunFor(Seconds(1));
    EXPECT_LT(Simulator::Now(), Seconds(1)) << "the simulator ran on past the mismatch";
    EXPECT_FALSE(finished);
    const std::string& failure = records->GetFailure();
    EXPECT_NE(failure.find("the ranks' schedules disagree"), std::string::npos) << failure;
    EXPECT_NE(failure.find("AllGather of 16 bytes in 8-byte elements, Ring, 2 channels"),
              std::string::npos)
        << failure;
    EXPECT_NE(failure.find("AllGather of 16 bytes in 4-byte elements, Ring, 2 channels"),
              std::string::npos)
        << failure;
}

TEST_F(NboxRealRankPairTest, PostsOfEmulatedRanksAreRefused)
{
    EXPECT_DEATH(m_gateway->PostSend(2, 0, 0, 1, 10), "PostSend from rank 2, which is emulated");
    NboxCommWork work;
    work.bytes = 1024;
    work.label = "x";
    EXPECT_DEATH(m_comm->Issue(1, work), "issued on external rank 1");
}

// What a real program can get wrong ends the run with the reason, never an abort: a receive
// from itself (here), a send on a lane no communicator with real members uses (below).
TEST_F(NboxRealRankPairTest, AReceiveFromItselfFailsTheRunNamingIt)
{
    m_gateway->PostRecv(0, 0, 0, 1, 10);
    EXPECT_NE(m_records->GetFailure().find("real rank 0 receives from rank 0 (lane 0), not "
                                           "another rank of the 3-rank job"),
              std::string::npos)
        << m_records->GetFailure();
}

TEST_F(NboxRealRankPairTest, ASendOnALaneOfNoCommunicatorFailsTheRun)
{
    m_gateway->PostSend(0, 1, 7, 1, 10);
    EXPECT_NE(m_records->GetFailure().find(
                  "real rank 0 sends to rank 1 on lane 7, which no communicator with real "
                  "members uses"),
              std::string::npos)
        << m_records->GetFailure();
    EXPECT_EQ(m_gateway->GetStats().sendsPosted, 0u);
}

/** IsStalled and IsFinished of a job with a real rank that never gets its message. */
TEST_F(NboxRealRankGatewayTest, StallIsReportedOnlyWhenTheOwnerSaysTheRealRankWaits)
{
    const auto topology = nbox::topo::MakeStar(2, kRateBps, kLatencyS);
    const auto rankToHost = nbox::topo::PlaceRanks(topology, 2);
    auto network = NboxNetworkHelper(NboxNetworkConfig()).Install(topology);
    auto transport = CreateObject<NboxTcpTransport>(network, rankToHost);
    NboxJobHelper helper;
    helper.SetRealRanks({false, true});
    auto empty = std::make_shared<const nbox::work::RankProgram>();
    auto job = helper.Install(network, transport, {empty, nullptr}, rankToHost);
    auto gateway = CreateObject<NboxRealRankGateway>();
    gateway->Setup(job->GetCommunicator(), transport, {false, true}, job->GetRecords());
    EXPECT_EQ(job->GetWorldSize(), 2u);
    EXPECT_TRUE(job->IsReal(1));
    EXPECT_FALSE(job->IsReal(0));

    // The real rank waits for a message the emulated rank (empty program) never sends.
    Simulator::Schedule(MicroSeconds(10), [gateway]() { gateway->PostRecv(1, 0, 0, 1, 64); });
    RunFor(MilliSeconds(1));
    EXPECT_EQ(job->GetRecords()->ranksFinished, 1u);
    EXPECT_FALSE(job->IsFinished());
    EXPECT_FALSE(job->IsStalled()) << "the real rank may still post something";
    job->SetRealRankWaiting(1, true);
    EXPECT_TRUE(job->IsStalled());
    job->SetRealRankWaiting(1, false);
    EXPECT_FALSE(job->IsStalled());
    EXPECT_EQ(gateway->GetOutstandingRequests(1), 1u);

    // Goodbye, outside Simulator::Run: the job is finished and the next run stops at once.
    job->RealRankEnded(1);
    EXPECT_TRUE(job->IsFinished());
    EXPECT_FALSE(job->IsStalled());
    EXPECT_DEATH(job->RealRankEnded(1), "real rank 1 ended twice");
    gateway->Dispose();
}

/**
 * A real rank in a group communicator (docs/DESIGN.md, "Real ranks in group communicators"):
 * world rank 2 runs its group's all-reduces with world rank 0 through the gateway, posting
 * world ranks on the group's lanes; every rank's iterations start and end as in the
 * all-emulated run of the same job, and the real rank's messages are the group's: 2 sends and
 * 2 receives of S/2 per iteration (a ring of two).
 */
TEST_F(NboxRealRankGatewayTest, ARealRankInAGroupMatchesAllEmulated)
{
    const uint64_t bytes = 1 << 20;
    const int iterations = 2;
    const JobResult withReal = RunGroupJob(true, bytes, iterations);
    Reset();
    const JobResult allEmulated = RunGroupJob(false, bytes, iterations);
    ASSERT_TRUE(withReal.finished);
    ASSERT_TRUE(allEmulated.finished);
    ExpectSameIterations(withReal, allEmulated, 4, iterations);
    EXPECT_EQ(withReal.gateway.sendsPosted, 2u * iterations);
    EXPECT_EQ(withReal.gateway.recvsCompleted, 2u * iterations);
    EXPECT_EQ(withReal.gateway.bytesSent, bytes * iterations);
}

} // namespace
} // namespace test
} // namespace ns3
