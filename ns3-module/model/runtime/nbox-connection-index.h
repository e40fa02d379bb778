/*
 * The dense id of each connection (source rank, destination rank, channel) a fast network
 * model has opened: the lookup the flow and analytical transports make for every message.
 * Hashed, not ordered: a std::map of tuples cost a few hundred instructions per message on a
 * 64-rank ring (tools/bench/README.md, "Network models"), and nothing iterates the index, so
 * its order cannot reach a result.
 */
#ifndef NBOX_CONNECTION_INDEX_H
#define NBOX_CONNECTION_INDEX_H

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace ns3
{

class NboxConnectionIndex
{
  public:
    static constexpr uint32_t kNone = UINT32_MAX;

    /** The id given to (src, dst, channel), or kNone if it has none yet. */
    uint32_t
    Find(uint32_t srcRank, uint32_t dstRank, uint32_t channel) const
    {
        const auto it = m_ids.find(Key{srcRank, dstRank, channel});
        return it == m_ids.end() ? kNone : it->second;
    }

    /** Gives (src, dst, channel), which has no id yet, the id `id`. */
    void
    Add(uint32_t srcRank, uint32_t dstRank, uint32_t channel, uint32_t id)
    {
        m_ids.emplace(Key{srcRank, dstRank, channel}, id);
    }

  private:
    struct Key
    {
        uint32_t src;
        uint32_t dst;
        uint32_t channel;

        bool
        operator==(const Key& other) const
        {
            return src == other.src && dst == other.dst && channel == other.channel;
        }
    };

    struct KeyHash
    {
        std::size_t
        operator()(const Key& k) const
        {
            // Ranks and channels are small: mixing them into one 64-bit word and scrambling it
            // (splitmix64's finaliser) spreads the buckets evenly.
            uint64_t x = (uint64_t{k.src} << 32) ^ (uint64_t{k.dst} << 8) ^ k.channel;
            x ^= x >> 30;
            x *= 0xbf58476d1ce4e5b9ULL;
            x ^= x >> 27;
            x *= 0x94d049bb133111ebULL;
            x ^= x >> 31;
            return static_cast<std::size_t>(x);
        }
    };

    std::unordered_map<Key, uint32_t, KeyHash> m_ids;
};

} // namespace ns3

#endif /* NBOX_CONNECTION_INDEX_H */
