// A FIFO queue with indexed access whose slots are reused: popping leaves the object in its slot,
// so the buffers it owns (vectors it cleared) keep their storage for the next push. A ring
// buffer over a vector of power-of-two size, which doubles when full.
//
// StepTracker keeps the steps in flight in one: a deque allocated a block every few steps and
// destroyed every step's vectors, an allocation per step on the per-message path.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace nbox::coll {

template <typename T>
class RecyclingQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  T& operator[](size_t i) { return slots_[(head_ + i) & mask()]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & mask()]; }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }

  // The slot after the last element, as the previous occupant left it: the caller resets what
  // it needs (and may reuse what it kept).
  T& push_back_slot() {
    if (size_ == slots_.size()) Grow();
    ++size_;
    return (*this)[size_ - 1];
  }
  // Leaves the object in its slot.
  void pop_front() {
    head_ = (head_ + 1) & mask();
    --size_;
  }

 private:
  size_t mask() const { return slots_.size() - 1; }
  void Grow() {
    std::vector<T> grown(slots_.empty() ? 8 : 2 * slots_.size());
    for (size_t i = 0; i < size_; ++i) grown[i] = std::move((*this)[i]);
    slots_ = std::move(grown);
    head_ = 0;
  }

  std::vector<T> slots_;  // size 0 or a power of two
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace nbox::coll
