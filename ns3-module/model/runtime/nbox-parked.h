/*
 * Values parked under a slot number until they are taken back: what an event or a callback
 * carries instead of the value itself. ns-3 copies whatever an event carries, and
 * std::function allocates for a capture over 16 bytes, so a message's delivery would cost an
 * allocation and a copy per message; a slot number costs neither. Slots are reused.
 */
#ifndef NBOX_PARKED_H
#define NBOX_PARKED_H

#include <cstdint>
#include <utility>
#include <vector>

namespace ns3
{

template<typename T> class NboxParked
{
  public:
    /** Parks `value` and returns its slot. */
    uint32_t
    Park(T value)
    {
        uint32_t slot;
        if (m_free.empty())
        {
            slot = static_cast<uint32_t>(m_values.size());
            m_values.push_back(std::move(value));
        }
        else
        {
            slot = m_free.back();
            m_free.pop_back();
            m_values[slot] = std::move(value);
        }
        return slot;
    }

    /**
     * Whether `slot` is one of this pool's slots, parked or free: false after Clear(), which is
     * what a late event of a disposed owner checks before Take().
     */
    bool
    HasSlot(uint32_t slot) const
    {
        return slot < m_values.size();
    }

    /** Takes the value of a parked slot back and frees the slot. */
    T
    Take(uint32_t slot)
    {
        T value = std::move(m_values[slot]);
        m_values[slot] = T();
        m_free.push_back(slot);
        return value;
    }

    /** Drops every parked value. */
    void
    Clear()
    {
        m_values.clear();
        m_free.clear();
    }

  private:
    std::vector<T> m_values;
    std::vector<uint32_t> m_free; //!< slots not in use
};

} // namespace ns3

#endif /* NBOX_PARKED_H */
