/*
 * A first-in first-out queue that costs nothing until used. The RoCE path keeps nine queues
 * per device and eight per switch port, most of them empty for the whole run; std::deque
 * allocates about 600 bytes for each even when empty, which on a 10,000-link fabric is
 * 200 MB for queues that never hold a packet.
 */
#ifndef NBOX_FIFO_H
#define NBOX_FIFO_H

#include <cstddef>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief FIFO on a vector: push at the back, pop at a moving head; the consumed prefix is
 * reclaimed once it outweighs the live elements (amortised O(1) per element).
 */
template<typename T> class NboxFifo
{
  public:
    bool
    empty() const
    {
        return m_head == m_items.size();
    }

    std::size_t
    size() const
    {
        return m_items.size() - m_head;
    }

    const T&
    front() const
    {
        return m_items[m_head];
    }

    void
    push_back(T item)
    {
        m_items.push_back(std::move(item));
    }

    /** Removes the front element (which must exist) and returns it. */
    T
    pop_front()
    {
        T item = std::move(m_items[m_head]);
        m_items[m_head] = T(); // a moved-from Ptr is null already; plain values need no care
        ++m_head;
        if (m_head == m_items.size())
        {
            m_items.clear(); // keeps the capacity for the next burst
            m_head = 0;
        }
        else if (m_head >= 64 && m_head * 2 >= m_items.size())
        {
            m_items.erase(m_items.begin(), m_items.begin() + m_head);
            m_head = 0;
        }
        return item;
    }

    void
    clear()
    {
        m_items.clear();
        m_items.shrink_to_fit();
        m_head = 0;
    }

  private:
    std::vector<T> m_items;
    std::size_t m_head = 0;
};

} // namespace ns3

#endif /* NBOX_FIFO_H */
