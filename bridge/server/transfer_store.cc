#include "bridge/server/transfer_store.h"

#include <algorithm>
#include <stdexcept>

#include "bridge/wire/frame_codec.h"

namespace nbox::bridge::server {

void TransferStore::AddSend(int rank, uint64_t request, uint64_t size, bool payload_wanted) {
  // A message an earlier session of the rank left in flight under the same id (ids restart
  // with each session) gives way to the new one.
  Forget(rank, request);
  SendRecord& record = sends_[{rank, request}];
  record.size = size;
  record.payload_wanted = payload_wanted;
  if (payload_wanted) {
    record.payload.resize(size);
    held_bytes_ += size;
  }
}

void TransferStore::AddRecv(int rank, uint64_t request, std::vector<wire::RecvSlot> slots) {
  RecvRecord& record = recvs_[{rank, request}];
  record.fills.resize(slots.size());
  record.slots = std::move(slots);
}

bool TransferStore::HasRequest(int rank, uint64_t request) const {
  return sends_.count({rank, request}) > 0 || recvs_.count({rank, request}) > 0;
}

std::string TransferStore::AddPayload(int rank, uint64_t request, uint64_t offset,
                                      wire::ByteView bytes) {
  auto it = sends_.find({rank, request});
  if (it == sends_.end()) return "Data for request " + std::to_string(request) + ", not a send";
  SendRecord& record = it->second;
  if (!record.payload_wanted) {
    return "Data for send " + std::to_string(request) + " whose payload was not wanted";
  }
  if (offset != record.received || bytes.size > record.size - record.received) {
    return "Data for send " + std::to_string(request) + " at offset " + std::to_string(offset) +
           " with " + std::to_string(bytes.size) + " bytes (expected offset " +
           std::to_string(record.received) + ", at most " +
           std::to_string(record.size - record.received) + " bytes)";
  }
  std::copy(bytes.data, bytes.data + bytes.size, record.payload.begin() + offset);
  record.received += bytes.size;
  if (record.PayloadIn()) Settle(it->first);
  return "";
}

bool TransferStore::CompletionWaiting(int rank) const {
  const Key first{rank, 0};
  for (auto it = sends_.lower_bound(first); it != sends_.end() && it->first.first == rank; ++it) {
    if (it->second.complete_vtime) return true;
  }
  for (auto it = recvs_.lower_bound(first); it != recvs_.end() && it->first.first == rank; ++it) {
    for (const Fill& fill : it->second.fills) {
      if (fill.reserved) return true;
    }
  }
  return false;
}

bool TransferStore::CompleteSend(int rank, uint64_t request, uint64_t delivery_vtime) {
  auto it = sends_.find({rank, request});
  if (it == sends_.end() || it->second.completed || it->second.complete_vtime) return false;
  it->second.complete_vtime = delivery_vtime;
  Settle(it->first);
  return true;
}

TransferStore::RecvRecord* TransferStore::CheckSlot(const Key& recv, uint32_t slot, uint64_t size,
                                                    bool synthetic) {
  auto it = recvs_.find(recv);
  if (it == recvs_.end()) return nullptr;
  RecvRecord& record = it->second;
  if (slot >= record.slots.size()) {
    throw std::invalid_argument("receive " + std::to_string(recv.second) + " of rank " +
                                std::to_string(recv.first) + " has no buffer " +
                                std::to_string(slot));
  }
  const Fill& fill = record.fills[slot];
  if (fill.filled || fill.reserved) {
    throw std::invalid_argument("buffer " + std::to_string(slot) + " of receive " +
                                std::to_string(recv.second) + " of rank " +
                                std::to_string(recv.first) + " is already filled");
  }
  if (size > record.slots[slot].size) {
    throw std::invalid_argument("a message of " + std::to_string(size) +
                                " bytes does not fit buffer " + std::to_string(slot) + " (" +
                                std::to_string(record.slots[slot].size) + " bytes) of receive " +
                                std::to_string(recv.second) + " of rank " +
                                std::to_string(recv.first));
  }
  for (const Fill& other : record.fills) {
    if ((other.filled || other.reserved) && other.synthetic != synthetic) {
      throw std::invalid_argument(
          "receive " + std::to_string(recv.second) + " of rank " + std::to_string(recv.first) +
          " mixes synthetic and real messages (one connection has one sender)");
    }
  }
  return &record;
}

bool TransferStore::DeliverFromSend(int recv_rank, uint64_t recv_request, uint32_t slot,
                                    int send_rank, uint64_t send_request, uint64_t delivery_vtime) {
  auto send = sends_.find({send_rank, send_request});
  if (send == sends_.end() || send->second.delivered || send->second.delivery) return false;
  RecvRecord* recv = CheckSlot({recv_rank, recv_request}, slot, send->second.size, false);
  if (recv == nullptr) return false;
  recv->fills[slot].reserved = true;
  send->second.delivery = PendingDelivery{{recv_rank, recv_request}, slot, delivery_vtime};
  Settle(send->first);
  return true;
}

bool TransferStore::DeliverBytes(int recv_rank, uint64_t recv_request, uint32_t slot,
                                 std::vector<uint8_t> bytes, uint64_t delivery_vtime) {
  if (CheckSlot({recv_rank, recv_request}, slot, bytes.size(), false) == nullptr) return false;
  FillSlot({recv_rank, recv_request}, slot, std::move(bytes), delivery_vtime);
  return true;
}

bool TransferStore::DeliverSynthetic(int recv_rank, uint64_t recv_request, uint32_t slot,
                                     uint64_t size, uint64_t delivery_vtime) {
  if (CheckSlot({recv_rank, recv_request}, slot, size, true) == nullptr) return false;
  FillSyntheticSlot({recv_rank, recv_request}, slot, size, delivery_vtime);
  return true;
}

void TransferStore::FillSyntheticSlot(const Key& recv, uint32_t slot, uint64_t size,
                                      uint64_t vtime) {
  RecvRecord& record = recvs_.at(recv);
  Fill& fill = record.fills[slot];
  fill.filled = true;
  fill.synthetic = true;
  fill.size = size;
  fill.vtime = vtime;
  ++record.filled;
  FinishIfFilled(recv);
}

void TransferStore::FillSlot(const Key& recv, uint32_t slot, std::vector<uint8_t> bytes,
                             uint64_t vtime) {
  auto it = recvs_.find(recv);
  if (it == recvs_.end()) return;  // forgotten while the payload was on its way
  RecvRecord& record = it->second;
  Fill& fill = record.fills[slot];
  fill.reserved = false;
  fill.filled = true;
  fill.size = bytes.size();
  fill.bytes = std::move(bytes);
  fill.vtime = vtime;
  ++record.filled;
  FinishIfFilled(recv);
}

void TransferStore::FinishIfFilled(const Key& recv) {
  auto it = recvs_.find(recv);
  RecvRecord& record = it->second;
  if (record.filled < static_cast<int>(record.fills.size())) return;
  // Every buffer is filled: the completion, then the bytes (none when synthetic; CheckSlot
  // keeps a receive from mixing both).
  wire::Complete complete;
  complete.request = recv.second;
  complete.synthetic = record.fills.front().synthetic;
  for (const Fill& f : record.fills) {
    complete.delivery_vtime = std::max(complete.delivery_vtime, f.vtime);
    complete.sizes.push_back(f.size);
  }
  out_(recv.first, wire::EncodeFrame(complete));
  for (uint32_t s = 0; s < record.fills.size(); ++s) {
    const std::vector<uint8_t>& data = record.fills[s].bytes;
    for (uint64_t offset = 0; offset < data.size(); offset += wire::kMaxDataBytes) {
      const uint64_t n = std::min<uint64_t>(wire::kMaxDataBytes, data.size() - offset);
      out_(recv.first, wire::EncodeFrame(wire::Data{recv.second, offset, s,
                                                    wire::ByteView{data.data() + offset, n}}));
    }
  }
  recvs_.erase(it);
}

void TransferStore::Settle(const Key& send) {
  auto it = sends_.find(send);
  if (it == sends_.end()) return;
  SendRecord& record = it->second;
  if (!record.PayloadIn()) return;
  if (record.complete_vtime) {
    wire::Complete complete;
    complete.request = send.second;
    complete.delivery_vtime = *record.complete_vtime;
    out_(send.first, wire::EncodeFrame(complete));
    record.complete_vtime.reset();
    record.completed = true;
  }
  if (record.delivery) {
    const PendingDelivery delivery = *record.delivery;
    record.delivery.reset();
    record.delivered = true;
    std::vector<uint8_t> bytes = std::move(record.payload);
    if (!record.payload_wanted) bytes.assign(record.size, 0);  // a payload nobody sent
    held_bytes_ -= record.payload_wanted ? record.size : 0;
    record.payload = {};
    FillSlot(delivery.recv, delivery.slot, std::move(bytes), delivery.vtime);
  }
  // A send without payload goes to a simulated receiver: nothing will deliver it.
  if (record.completed && (record.delivered || !record.payload_wanted)) sends_.erase(send);
}

void TransferStore::Forget(int rank, uint64_t request, bool keep_in_flight) {
  auto send = sends_.find({rank, request});
  if (send != sends_.end() && keep_in_flight && send->second.PayloadIn() &&
      !send->second.delivered) {
    send->second.complete_vtime.reset();  // nobody to tell any more
    return;
  }
  if (send != sends_.end()) {
    if (send->second.payload_wanted && !send->second.delivered) held_bytes_ -= send->second.size;
    if (send->second.delivery) {
      // The receive it was reserved for can no longer be filled from it.
      auto recv = recvs_.find(send->second.delivery->recv);
      if (recv != recvs_.end()) recv->second.fills[send->second.delivery->slot].reserved = false;
    }
    sends_.erase(send);
  }
  recvs_.erase({rank, request});
}

void TransferStore::ForgetRank(int rank, bool keep_in_flight) {
  std::vector<uint64_t> requests;
  for (const auto& [key, record] : sends_) {
    if (key.first == rank) requests.push_back(key.second);
  }
  for (const auto& [key, record] : recvs_) {
    if (key.first == rank) requests.push_back(key.second);
  }
  for (uint64_t request : requests) Forget(rank, request, keep_in_flight);
}

}  // namespace nbox::bridge::server
